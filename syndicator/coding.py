"""Content codings of a response body, undone with a size cap. A helper of fetch.py.

RFC 9110 section 8.4: ``Content-Encoding`` names the codings applied to a
body, in order. Servers get this wrong in one common way: a CDN or a
proxy labels a body ``gzip`` that is not compressed (it decompressed it,
or never compressed it). Browsers show such a body; so does syndicator:

* gzip (and ``x-gzip``): compressed iff the body starts with the gzip
  magic ``1F 8B`` (RFC 1952 section 2.3.1); otherwise it is used as sent.
  Members that follow one another are all read (RFC 1952 section 2.2);
  bytes after the last member that are not another member are ignored.
* deflate: the zlib format (RFC 1950) when the first two bytes are a valid
  zlib header; a body whose first byte starts a document (``<``, ``{``,
  white space or a UTF-8 BOM) is used as sent; anything else is read as
  raw deflate (RFC 1951), which some servers send under this name.
* ``identity``, no header, or a coding syndicator does not undo (``br``,
  ``zstd``: never asked for, the request's Accept-Encoding says gzip): the
  body as sent; the parser then judges it.
* A body that is compressed but does not decompress, or ends before its
  compressed stream does, raises :class:`CorruptBody`.
* Decoded bytes are capped: more than ``limit`` raises :class:`TooLarge`.
  zlib's ``max_length`` bounds each step, so a small "bomb" is never
  expanded in memory beyond the cap.
"""

from __future__ import annotations

import zlib

GZIP_MAGIC = b"\x1f\x8b"
#: First bytes of an uncompressed document: markup, JSON, white space, a UTF-8 BOM.
_DOCUMENT_START = frozenset(b"<{[ \t\r\n\xef")


class CorruptBody(ValueError):
    """The body is labelled and shaped as compressed, but does not decompress."""


class TooLarge(ValueError):
    """The decoded body is larger than the cap."""


class Decoder:
    """Undoes a body's content codings, fed in chunks.

    Args:
        encoding: the ``Content-Encoding`` header value, or None.
        limit: the cap on decoded bytes (int > 0).
    """

    def __init__(self, encoding: str | None, limit: int) -> None:
        codings = [c.strip().lower() for c in (encoding or "").split(",")]
        # Applied in the order listed, so undone in reverse (RFC 9110 section 8.4).
        self._stages = [_Stage(coding, limit) for coding in reversed(codings) if coding in _KNOWN]
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


_KNOWN = frozenset({"gzip", "x-gzip", "deflate"})


class _Stage:
    """One coding undone: decides from the first two bytes whether the body is compressed at all."""

    def __init__(self, coding: str, limit: int) -> None:
        self._gzip = coding in ("gzip", "x-gzip")
        self._limit = limit
        self._head = b""  # bytes held until the first two are known
        self._mode: str | None = None  # "as-sent", "inflate" or "done"
        self._inflater: zlib._Decompress | None = None
        self._out = 0

    def feed(self, data: bytes) -> bytes:
        if self._mode is None:
            self._head += data
            if len(self._head) < 2:
                return b""
            data, self._head = self._head, b""
            self._start(data)
        return self._run(data)

    def finish(self) -> bytes:
        out = b""
        if self._mode is None and self._head:
            data, self._head = self._head, b""
            self._start(data)
            out = self._run(data)
        if self._mode == "inflate" and self._inflater is not None and not self._inflater.eof:
            raise CorruptBody(f"the {'gzip' if self._gzip else 'deflate'} body does not decompress: it ends "
                              "before its compressed stream does")
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
