"""Content codings of a response body, undone with a size cap. A helper of fetch/http.py.

RFC 9110 section 8.4: ``Content-Encoding`` names the codings applied to a
body, in order. Servers get this wrong in a few common ways: a CDN or a
proxy labels a body ``gzip`` that is not compressed (it decompressed it,
or never compressed it), compresses an already compressed body once more,
or answers with a coding that was not asked for (miniflux/v2 PR 1397,
FreshRSS 6469: Brotli). Browsers show such bodies; so does syndicator:

* gzip (and ``x-gzip``): compressed iff the body starts with the gzip
  magic ``1F 8B`` (RFC 1952 section 2.3.1); otherwise it is used as sent.
  Members that follow one another are all read (RFC 1952 section 2.2);
  bytes after the last member that are not another member are ignored.
  A body gzip'd twice or three times under one label (the decoded bytes
  start with the magic again) is decoded again, :data:`GZIP_LAYERS`
  layers in all; what a further layer leaves is used as it is, and the
  parser then judges it.
* deflate: the zlib format (RFC 1950) when the first two bytes are a valid
  zlib header; a body whose first byte starts a document (``<``, ``{``,
  white space or a UTF-8 BOM) is used as sent; anything else is read as
  raw deflate (RFC 1951), which some servers send under this name.
* br (Brotli, RFC 7932), with the ``brotli`` package (1.2 or later, whose
  decoder bounds each step's output): a body that fails to decode before
  it gives a single byte, and starts as a document does, is used as sent
  (Brotli has no magic number to tell by).
* ``identity`` or no header: the body as sent.
* Any other coding (``zstd``, ``compress``, a typo) raises
  :class:`Unsupported` naming it: read as it is, the body would fail as a
  parse error ("not well-formed") that hides the real cause, and since an
  identical body is not parsed again the feed would stay dark.
* A body that is compressed but does not decompress, or ends before its
  compressed stream does, raises :class:`CorruptBody`.
* Decoded bytes are capped: more than ``limit`` raises :class:`TooLarge`,
  at every layer. zlib's ``max_length`` and Brotli's
  ``output_buffer_limit`` bound each step, so a small "bomb" is never
  expanded in memory beyond the cap (Brotli: plus one 32 KiB step).
"""

from __future__ import annotations

import zlib

import brotli  # type: ignore[import-untyped]

GZIP_MAGIC = b"\x1f\x8b"
#: gzip layers undone under one ``gzip`` label at most (a mislabelled CDN compresses twice; browsers cope).
GZIP_LAYERS = 3
#: The codings :class:`Decoder` undoes; the request's Accept-Encoding (fetch/http.py) asks for gzip and br.
SUPPORTED = frozenset({"gzip", "x-gzip", "deflate", "br"})
#: Raw bytes of a br body held until it gives its first byte (past this, no fallback to the body as sent).
BROTLI_HOLD = 64 * 1024
#: First bytes of an uncompressed document: markup, JSON, white space, a UTF-8 BOM.
_DOCUMENT_START = frozenset(b"<{[ \t\r\n\xef")


class CorruptBody(ValueError):
    """The body is labelled and shaped as compressed, but does not decompress."""


class TooLarge(ValueError):
    """The decoded body is larger than the cap."""


class Unsupported(ValueError):
    """The body is labelled with a coding syndicator cannot undo.

    Attributes:
        coding: the coding as the header names it, lower case (str).
    """

    def __init__(self, coding: str) -> None:
        super().__init__(f"unsupported Content-Encoding: {coding[:40]}")
        self.coding = coding


class Decoder:
    """Undoes a body's content codings, fed in chunks.

    Args:
        encoding: the ``Content-Encoding`` header value, or None.
        limit: the cap on decoded bytes (int > 0).
    Raises:
        Unsupported: a coding other than those in :data:`SUPPORTED` and ``identity``.
    """

    def __init__(self, encoding: str | None, limit: int) -> None:
        codings = [c.strip().lower() for c in (encoding or "").split(",")]
        codings = [c for c in codings if c not in ("", "identity")]
        unknown = next((c for c in codings if c not in SUPPORTED), None)
        if unknown is not None:
            raise Unsupported(unknown)
        # Applied in the order listed, so undone in reverse (RFC 9110 section 8.4).
        self._stages: list[_Stage | _Brotli] = [
            _Brotli(limit) if coding == "br" else _Stage(coding, limit, GZIP_LAYERS) for coding in reversed(codings)
        ]
        self._limit = limit
        self.size = 0  # decoded bytes so far

    def feed(self, data: bytes) -> bytes:
        """The decoded bytes that ``data`` (the next raw bytes) completes.

        Raises:
            CorruptBody: a compressed body failed to decompress.
            TooLarge: the decoded body passed ``limit`` bytes.
        """
        for stage in self._stages:
            data = stage.feed(data)
        return self._count(data)

    def finish(self) -> bytes:
        """The decoded bytes still held once the raw body has ended (same errors as :meth:`feed`)."""
        data = b""
        for stage in self._stages:
            data = stage.feed(data) + stage.finish()
        return self._count(data)

    def _count(self, data: bytes) -> bytes:
        self.size += len(data)
        if self.size > self._limit:
            raise TooLarge(f"body larger than {self._limit} bytes")
        return data


class _Stage:
    """One gzip or deflate coding undone: decides from the first two bytes whether the body is compressed
    at all. A gzip stage of ``layers`` > 1 hands what it decodes to one of ``layers - 1`` (a body gzip'd
    again), which uses it as it is unless it starts with the gzip magic."""

    def __init__(self, coding: str, limit: int, layers: int = 1) -> None:
        self._gzip = coding in ("gzip", "x-gzip")
        self._limit = limit
        self._head = b""  # bytes held until the first two are known
        self._mode: str | None = None  # "as-sent", "inflate" or "done"
        self._inflater: zlib._Decompress | None = None
        self._out = 0
        self._inner = _Stage(coding, limit, layers - 1) if self._gzip and layers > 1 else None

    def feed(self, data: bytes) -> bytes:
        out = self._feed(data)
        return out if self._inner is None else self._inner.feed(out)

    def finish(self) -> bytes:
        out = self._finish()
        return out if self._inner is None else self._inner.feed(out) + self._inner.finish()

    def _feed(self, data: bytes) -> bytes:
        if self._mode is None:
            self._head += data
            if len(self._head) < 2:
                return b""
            data, self._head = self._head, b""
            self._start(data)
        return self._run(data)

    def _finish(self) -> bytes:
        out = b""
        if self._mode is None and self._head:
            data, self._head = self._head, b""
            self._start(data)
            out = self._run(data)
        if self._mode == "inflate" and self._inflater is not None and not self._inflater.eof:
            raise CorruptBody(
                f"the {'gzip' if self._gzip else 'deflate'} body does not decompress: it ends "
                "before its compressed stream does"
            )
        return out

    def _start(self, head: bytes) -> None:
        """Choose how to read the body from its first bytes (see the module docstring)."""
        if self._gzip:
            wbits = 31 if head[:2] == GZIP_MAGIC else None
        elif len(head) >= 2 and head[0] & 0x0F == 8 and (head[0] << 8 | head[1]) % 31 == 0:
            wbits = 15  # a zlib header: CM 8, and the check bits (RFC 1950 section 2.2)
        else:
            wbits = None if head[0] in _DOCUMENT_START else -15
        self._mode = "as-sent" if wbits is None else "inflate"
        self._inflater = None if wbits is None else zlib.decompressobj(wbits)

    def _run(self, data: bytes) -> bytes:
        if self._mode == "as-sent":
            return data
        out = bytearray()
        while data and self._mode == "inflate" and self._inflater is not None:
            if self._inflater.eof:  # the stream ended: another gzip member, or bytes to ignore
                if not (self._gzip and data[:2] == GZIP_MAGIC):
                    self._mode = "done"  # bytes after the stream are ignored, as browsers do
                    break
                self._inflater = zlib.decompressobj(31)
            try:
                # max_length: never more than one byte past the cap; the rest waits in unconsumed_tail.
                out += self._inflater.decompress(data, self._limit - self._out - len(out) + 1)
            except zlib.error as error:
                coding = "gzip" if self._gzip else "deflate"
                raise CorruptBody(f"the {coding} body does not decompress: {error}") from error
            if self._out + len(out) > self._limit:
                raise TooLarge(f"body larger than {self._limit} bytes")
            data = self._inflater.unused_data if self._inflater.eof else b""
        self._out += len(out)
        return bytes(out)


class _Brotli:
    """The br coding undone (RFC 7932) with the ``brotli`` package's bounded decoder.

    Raw bytes are held (at most :data:`BROTLI_HOLD`) until the first decoded
    byte, so that a body that is not Brotli at all, and starts as a document
    does, can still be used as sent.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._decoder = brotli.Decompressor()
        self._held: bytearray | None = bytearray()  # None once the body is known to be Brotli
        self._as_sent = False
        self._out = 0

    def feed(self, data: bytes) -> bytes:
        if self._as_sent:
            return data
        if self._held is not None:
            self._held += data
            if len(self._held) > BROTLI_HOLD:
                self._held = None
        try:
            return self._run(data)
        except CorruptBody:
            if self._held is None or not self._held or self._held[0] not in _DOCUMENT_START:
                raise
            self._as_sent, data, self._held = True, bytes(self._held), None
            self._out = len(data)  # the Decoder counts what is returned against the cap
            return data

    def finish(self) -> bytes:
        if not self._as_sent and not self._decoder.is_finished():
            if self._held and self._held[0] in _DOCUMENT_START:  # a document that is a valid Brotli prefix
                self._as_sent, data, self._held = True, bytes(self._held), None
                return data
            raise CorruptBody("the br body does not decompress: it ends before its compressed stream does")
        return b""

    def _run(self, data: bytes) -> bytes:
        out = bytearray()
        while True:
            if self._decoder.is_finished():
                break  # bytes after the stream are ignored, as for gzip
            room = self._limit - self._out - len(out) + 1  # never more than a step past the cap
            try:
                chunk = self._decoder.process(data, output_buffer_limit=room)
            except brotli.error as error:
                raise CorruptBody(f"the br body does not decompress: {error}") from error
            data = b""
            out += chunk
            if self._out + len(out) > self._limit:
                raise TooLarge(f"body larger than {self._limit} bytes")
            if not chunk:
                break
        if out:
            self._held = None
        self._out += len(out)
        return bytes(out)
