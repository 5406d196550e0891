"""How much work one feed document may cost (DESIGN.md: "work per source is bounded").

One hostile document must never stall a build. Three kinds of bound:

* **A CPU budget** per document, :data:`PARSE_BUDGET` seconds of the
  parsing thread's CPU time (``time.thread_time``, so other threads' work
  does not count). Python cannot interrupt a thread, so the budget is
  checked between steps (:class:`Budget`): while feedparser reads the
  document (:mod:`feedreader` feeds it 64 KiB at a time), for every entry,
  around each costly step. Each step between two checks is linear in the
  (size-capped) document, so a check is never far away.
* **Structural limits**, checked by a linear pre-scan before any parser
  runs (:func:`check_structure`): more than :data:`FAST_MAX_TAGS` tags,
  an element with more than :data:`MAX_ATTRIBUTES` attributes, or elements
  nested more than :data:`MAX_DEPTH` deep make the document too complex.
  A document the fast reader (:mod:`fastreader`, lxml) declines must also
  pass :func:`check_tags` before feedparser reads it: no more than
  :data:`MAX_TAGS` tags, none (broken ones too) denser than one per
  :data:`MIN_CHARS_PER_TAG` characters, where :data:`REFERENCES_PER_TAG`
  references count as one tag. feedparser costs about 30 µs per
  tag (80 µs in its tolerant parser), so a document of tiny elements costs
  many times more per byte than a real one, while lxml costs a few µs (a
  full-text feed of ``type="xhtml"`` content, one tag per 8 characters, is
  read, not refused; the fast reader still refuses more than
  :data:`MAX_TAGS` tags outside XHTML content); a ``<`` in a CDATA section or a comment is text to every
  parser and is not counted (a full-text feed's HTML in CDATA holds one
  ``<`` per 6 to 10 characters). The attributes of one element cost
  expat's SAX reader, lxml (``items()``) and the sanitizer's HTML parser
  (nh3) work that grows with the square of their number, in one call the
  budget cannot interrupt (300,000 took 585 s). The real corpus's largest
  document has about 20,000 tags, its densest large one 24 characters per
  tag, none nests 20 deep and no element of it holds more than 16
  attributes.
* **Field sizes**: a title longer than :data:`TITLE_MAX_CHARS` characters
  and an author name longer than :data:`AUTHOR_MAX_CHARS` are cut when
  parsed (the pages cut them to 300 and 100 anyway); a date longer than
  :data:`dates.DATE_MAX_CHARS` is unreadable; HTML nested deeper than
  :data:`HTML_MAX_DEPTH` or holding more than :data:`HTML_MAX_REFERENCES`
  character references is published as plain text (the sanitizer's work
  grows with the depth of its tree and the references in one text).

A document past the budget or a structural limit fails with kind
``too_complex`` (syndicator/failures.py): its last good copy stays, and the
same body is not parsed again.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from syndicator.errors import ParseError
from syndicator.parse.markup import markup_opens, markup_references, most_attributes_over, xml_shape

#: Thread CPU seconds one document may take to parse.
PARSE_BUDGET = 10.0
#: Start, end and empty-element tags one XML document may hold for feedparser.
MAX_TAGS = 200_000
#: ... and for the fast reader (lxml, a few microseconds a tag and about 150 bytes an element).
FAST_MAX_TAGS = 1_000_000
#: Attributes (namespace declarations included) one element may hold, in the document
#: and in the HTML of a summary, content or title (16 times the corpus's most).
MAX_ATTRIBUTES = 256
#: How deep XML elements may nest.
MAX_DEPTH = 2_000
#: A document with more than DENSE_MIN_TAGS "<" (outside CDATA sections and
#: comments) must average at least MIN_CHARS_PER_TAG characters per "<":
#: feedparser's cost is per tag (and per broken tag), and no real feed's
#: markup is that dense (the corpus's densest large one has 24).
DENSE_MIN_TAGS = 20_000
MIN_CHARS_PER_TAG = 16
#: ... where REFERENCES_PER_TAG references (``&amp;``, ``&lt;``: 1.3 to 2.6 µs each in feedparser's
#: tolerant parser, against about 22 µs a tag) count as one tag; every ``&`` becomes one, so 200,000
#: bare ``&`` would cost 2.8 s a MB. Escaped HTML (``&lt;p&gt;``) averages one per 5 characters or more.
REFERENCES_PER_TAG = 8
#: How deep HTML elements in one summary, content or title may nest before it is published as plain text.
HTML_MAX_DEPTH = 256
#: Ampersands (character references) one summary, content or title may hold before it is published as plain text.
HTML_MAX_REFERENCES = 20_000
#: Characters kept of a title (entry or feed) and of an author name.
TITLE_MAX_CHARS = 1_000
AUTHOR_MAX_CHARS = 500
#: Characters of a raw field read for a title or an author: its markup may
#: be many times longer than its text, but not without bound.
RAW_FIELD_FACTOR = 16


class Budget:
    """A document's parse budget, checked cooperatively between steps.

    Reading a thread's CPU clock is a system call (several microseconds on
    a virtual machine, and a parse checks once per entry), while the wall
    clock is read without one. A thread's CPU time never grows faster than
    the wall clock, so with the default clock the CPU clock is read only
    once the wall clock has moved by what was left of the budget.

    Args:
        url: the source, named by the error.
        seconds: thread CPU seconds allowed from now (float, >= 0).
        clock: the CPU clock (seconds), ``time.thread_time`` by default.
    """

    def __init__(self, url: str, seconds: float = PARSE_BUDGET, clock: Callable[[], float] = time.thread_time) -> None:
        self.url = url
        self.seconds = seconds
        self._clock = clock
        self._deadline = clock() + seconds
        self._wall = time.monotonic if clock is time.thread_time else None
        self._unspent_until = self._wall() + seconds if self._wall is not None else 0.0

    def check(self, step: str) -> None:
        """Raise once the budget is spent.

        Args:
            step: what was being done, for the message (e.g. "reading entries").
        Raises:
            ParseError: kind ``too_complex``, when the budget is spent.
        """
        if self._wall is not None and self._wall() <= self._unspent_until:
            return  # not enough wall time has passed for the CPU time to be spent
        now = self._clock()
        if now > self._deadline:
            raise ParseError(
                self.url, f"too costly to parse: more than {self.seconds:g} s of CPU time ({step})", kind="too_complex"
            )
        if self._wall is not None:
            self._unspent_until = self._wall() + (self._deadline - now)


def check_structure(text: str, url: str) -> int:
    """Refuse an XML document whose shape alone is beyond what any parser may read; count its tags.

    Args:
        text: the decoded document (str).
        url: the source, named by the error.
    Returns:
        the document's tags (int, for :func:`check_tags`).
    Raises:
        ParseError: kind ``too_complex``, for more than
            :data:`FAST_MAX_TAGS` tags, an element with more than
            :data:`MAX_ATTRIBUTES` attributes, or nesting deeper than :data:`MAX_DEPTH`.
    """
    opens = text.count("<")
    # Every tag starts with a "<" and depth never exceeds the tags: a document with few needs no count.
    tags, depth = xml_shape(text, FAST_MAX_TAGS, MAX_DEPTH) if opens > min(MAX_TAGS, MAX_DEPTH) else (opens, 0)
    if tags > FAST_MAX_TAGS:
        raise ParseError(url, f"too complex to parse: more than {FAST_MAX_TAGS:,} tags", kind="too_complex")
    if depth > MAX_DEPTH:
        raise ParseError(url, f"too complex to parse: elements nested more than {MAX_DEPTH:,} deep", kind="too_complex")
    if most_attributes_over(text, MAX_ATTRIBUTES, xml=True):
        raise ParseError(
            url, f"too complex to parse: an element with more than {MAX_ATTRIBUTES:,} attributes", kind="too_complex"
        )
    return tags


def check_tags(text: str, url: str, tags: int) -> None:
    """Refuse a document with too many or too dense tags for feedparser (the fast reader declined it).

    Args:
        text: the decoded document (str).
        url: the source, named by the error.
        tags: its tags, as :func:`check_structure` counted them.
    Raises:
        ParseError: kind ``too_complex``, for more than :data:`MAX_TAGS`
            tags, or more than :data:`DENSE_MIN_TAGS` ``<`` outside CDATA
            sections and comments averaging fewer than
            :data:`MIN_CHARS_PER_TAG` characters each (every
            :data:`REFERENCES_PER_TAG` ``&`` outside them counting as one ``<``).
    """
    if tags > MAX_TAGS:
        raise ParseError(url, f"too complex to parse: more than {MAX_TAGS:,} tags", kind="too_complex")
    opens, references = text.count("<"), text.count("&")
    if _too_dense(len(text), opens, references):
        opens = markup_opens(text)  # every tag, broken ones included: feedparser's tolerant parser pays for each
        references = markup_references(text)
        if _too_dense(len(text), opens, references):
            found = f"{opens:,} tags" + (f" and {references:,} references" if references >= REFERENCES_PER_TAG else "")
            raise ParseError(
                url,
                f"too complex to parse: {found} in {len(text):,} characters, more than one tag "
                f"(or {REFERENCES_PER_TAG} references) per {MIN_CHARS_PER_TAG}",
                kind="too_complex",
            )


def _too_dense(chars: int, opens: int, references: int) -> bool:
    work = opens + references // REFERENCES_PER_TAG  # in tags' worth of feedparser's work
    return work > DENSE_MIN_TAGS and chars < work * MIN_CHARS_PER_TAG
