"""Enclosures and images beside the text as the published outputs show them. Pure.

A helper of :mod:`pageentry`: :class:`PageEnclosure` is an enclosure as
templates show it, with its size (SI units) and duration (a clock) written
as people read them; :func:`with_image` leads an entry's content with its
image when the content shows none. Every URL is checked again to be
http(s): snapshots stored by other versions are read back as they were
written.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from syndicator.feedtypes import Enclosure
from syndicator.parse.media import playable
from syndicator.urls import is_web


def human_size(length: int) -> str:
    """A size in bytes as people read it, in SI units: "900 bytes", "1.5 kB", "25 MB" (str)."""
    if length < 1000:
        return f"{length} byte{'s' if length != 1 else ''}"
    value = float(length)
    for unit in ("kB", "MB", "GB", "TB"):
        value /= 1000
        if value < 999.95 or unit == "TB":
            break
    return f"{value:.1f}".removesuffix(".0") + f" {unit}"


def clock(seconds: int) -> str:
    """A duration as a clock reads: "1:02:03", "12:34", "0:45" (str)."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@dataclass(frozen=True)
class PageEnclosure:
    """One enclosure as templates see it.

    Attributes:
        url: absolute http(s) URL.
        mime_type: a media type, or "" when unknown.
        length: size in bytes, or None; duration: seconds, or None.
        player: "audio" or "video", the element a page plays it in, or None
            for a link alone.
        label: link text naming its kind, type, size and duration when
            known, e.g. "Audio (audio/mpeg, 25 MB, 1:02:03)".
    """

    url: str
    mime_type: str
    length: int | None
    duration: int | None
    player: str | None
    label: str


def page_enclosures(enclosures: Sequence[Enclosure]) -> tuple[PageEnclosure, ...]:
    """Enclosures for the templates; any URL that is not http(s) is left out again
    (snapshots stored by other versions are read back as they were written).
    Only the first audio or video file gets a player; the others are links, so
    an episode published in several formats shows one player, not a row of them."""
    shown: list[PageEnclosure] = []
    for m in enclosures:
        if not is_web(m.url):
            continue
        player = playable(m) if not any(e.player for e in shown) else None  # one player per entry
        facts = [m.mime_type, human_size(m.length) if m.length else "", clock(m.duration) if m.duration else ""]
        kind = player.capitalize() if player else "Download"
        label = f"{kind} ({', '.join(f for f in facts if f)})" if any(facts) else kind
        shown.append(PageEnclosure(m.url, m.mime_type, m.length, m.duration, player, label))
    return tuple(shown)


def shown_image(fragment: str, image: str | None) -> str | None:
    """``image`` when it is an http(s) URL and the sanitized HTML ``fragment`` shows no image of its own, else None.

    The sanitizer writes every ``<`` of text as ``&lt;``, so ``<img`` in
    its output is always an image element.
    """
    return image if image and is_web(image) and "<img" not in fragment else None


def with_image(fragment: str, image: str | None, alt: str) -> str:
    """Sanitized HTML ``fragment`` led by ``image`` in a paragraph of its own, with ``alt`` as its
    alternative text, when the fragment shows no image (:func:`shown_image`); else as it is."""
    shown = shown_image(fragment, image)
    if shown is None:
        return fragment
    return f'<p><img src="{html.escape(shown)}" alt="{html.escape(alt)}"></p>{fragment}'
