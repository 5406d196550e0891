"""Enclosures (a podcast's audio, a video, a file) and images given beside an entry's text. Pure; never raises.

A helper of :mod:`parse` (XML feeds, from feedparser's entry mapping) and
:mod:`jsonfeed`; :mod:`mediaview` shows what it reads on the pages.
Rules, and where they come from:

* RSS 2.0 ``<enclosure url length type>`` and Atom ``link rel="enclosure"``
  (RFC 4287 section 4.2.7.2; feedparser gives both as ``enclosures``),
  Media RSS ``media:content`` whose ``type`` is ``audio/*`` or ``video/*``
  (declared, or guessed from the file name), or with no type, whose
  ``medium`` is audio or video (with its ``fileSize`` and ``duration``; a
  Flash player, say, is no enclosure), and JSON Feed 1.1 ``attachments`` (``url``,
  ``mime_type``, ``size_in_bytes``, ``duration_in_seconds``). An image is
  no enclosure: it is shown beside the text, not played or downloaded.
* URLs go through :func:`urls.absolute` against the entry's base; an
  unusable one drops that enclosure. Each URL counts once: a later mention
  only fills what the first left unknown. At most :data:`MAX_ENCLOSURES`
  per entry.
* A media type is kept when it is a ``type/subtype`` name (RFC 6838
  section 4.2), lower case and without parameters; else it is guessed from
  the URL's file name with our table of podcast and web media, then
  Python's built-in table (never the system's, so every machine gives the
  same answer); else "".
* A length is whole bytes, 1 to :data:`MAX_BYTES`; 0, negative and
  unreadable lengths are unknown (many feeds write ``length="0"``).
* ``itunes:duration`` (Apple Podcasts: ``HH:MM:SS``, ``MM:SS`` or seconds,
  with an optional fraction) gives the duration of the entry's first audio
  or video enclosure; durations over :data:`MAX_DURATION` are unknown.
* The entry's image (:func:`xml_image`, :func:`json_image`): Media RSS
  ``media:content`` of an image medium or type, an image enclosure,
  ``itunes:image``, ``media:thumbnail``; JSON Feed ``image``, then
  ``banner_image``. One http(s) URL, or None.
"""

from __future__ import annotations

import math
import mimetypes
import re
from collections.abc import Iterable, Mapping
from typing import Any

from syndicator.feedtypes import Enclosure
from syndicator.urls import absolute, split

#: Enclosures kept per entry.
MAX_ENCLOSURES = 16
#: Largest size believed, bytes (10 TB).
MAX_BYTES = 10**13
#: Longest duration believed, seconds (7 days).
MAX_DURATION = 7 * 86400
#: An image declared narrower or lower than this, in CSS pixels, is no image beside the text.
MIN_IMAGE_PIXELS = 64
#: Characters of a duration or length read at most.
_MAX_FIELD = 40
_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}")
_DURATION = re.compile(r"(?:(\d{1,6}):)?(?:(\d{1,6}):)?(\d{1,7})(?:[.,](\d{1,9}))?")
_LENGTH = re.compile(r"\d{1,20}")
_PLAYABLE = ("audio", "video")
_GUESS = mimetypes.MimeTypes(filenames=())  # Python's own table only: the same on every machine
#: File name endings of podcast and web media that Python's table lacks or names differently.
_SUFFIXES = {
    ".mp3": "audio/mpeg",
    ".m4a": "audio/mp4",
    ".m4b": "audio/mp4",
    ".aac": "audio/aac",
    ".ogg": "audio/ogg",
    ".oga": "audio/ogg",
    ".opus": "audio/ogg",
    ".flac": "audio/flac",
    ".wav": "audio/wav",
    ".mp4": "video/mp4",
    ".m4v": "video/mp4",
    ".webm": "video/webm",
    ".ogv": "video/ogg",
    ".mov": "video/quicktime",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".png": "image/png",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".avif": "image/avif",
    ".svg": "image/svg+xml",
}


def media_type(value: object, url: str) -> str:
    """A media type (str, lower case, no parameters) from a feed's ``value`` or else the URL's file name; ""."""
    text = value.split(";", 1)[0].strip().lower() if isinstance(value, str) else ""
    if _MEDIA_TYPE.fullmatch(text):
        return text
    parts = split(url)
    path = parts.path if parts is not None else ""
    suffix = path[path.rfind(".") :].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return _SUFFIXES.get(suffix) or _GUESS.guess_type(path, strict=False)[0] or ""


def parse_length(value: object) -> int | None:
    """A size in bytes (int, 1..:data:`MAX_BYTES`) from text or a JSON number, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = value if isinstance(value, int) or (math.isfinite(value) and value.is_integer()) else 0
        size = int(number)
    elif isinstance(value, str) and _LENGTH.fullmatch(text := value.strip()[:_MAX_FIELD]):
        size = int(text)
    else:
        return None
    return size if 0 < size <= MAX_BYTES else None


def duration_seconds(value: object) -> int | None:
    """A duration in whole seconds (1..:data:`MAX_DURATION`) from ``HH:MM:SS``, ``MM:SS``,
    seconds (an optional fraction is rounded) or a JSON number, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = float(value) if math.isfinite(value) else 0.0
    elif isinstance(value, str) and (match := _DURATION.fullmatch(value.strip()[:_MAX_FIELD])):
        whole = 0
        for part in match.group(1, 2, 3):
            if part is not None:
                whole = whole * 60 + int(part)
        seconds = whole + (float("0." + match.group(4)) if match.group(4) else 0.0)
    else:
        return None
    rounded = round(seconds) if seconds <= MAX_DURATION else 0
    return rounded if 0 < rounded <= MAX_DURATION else None


def playable(enclosure: Enclosure) -> str | None:
    """ "audio" or "video" when a page can play the enclosure in that element, else None."""
    major = enclosure.mime_type.split("/", 1)[0]
    return major if major in _PLAYABLE else None


def xml_enclosures(item: Any, base: str | None) -> tuple[Enclosure, ...]:
    """The enclosures of one feedparser entry (see the module docstring).

    Args:
        item: feedparser's entry, a dict (``enclosures``, which feedparser
            derives from the entry's links, ``media_content`` and
            ``itunes_duration`` are read; ``dict.get`` where feedparser's own
            ``get`` would answer with another field).
        base: the URL relative enclosure URLs resolve against, or None.
    """
    found: list[Enclosure] = []
    for mention in _mappings(item.get("enclosures")):
        kind = mention.get("type")  # feedparser writes text/html for an Atom link without a type
        found += _enclosure(
            mention.get("href"), None if kind == "text/html" else kind, mention.get("length"), None, base
        )
    for mention in _mappings(dict.get(item, "media_content")):
        medium = str(mention.get("medium") or "").strip().lower()
        found += _enclosure(
            mention.get("url"), mention.get("type"), mention.get("filesize"), mention.get("duration"), base, medium
        )
    enclosures = _merge(found)
    duration = duration_seconds(dict.get(item, "itunes_duration"))
    for index, enclosure in enumerate(enclosures):
        if duration is not None and playable(enclosure):
            if enclosure.duration is None:
                enclosures[index] = Enclosure(enclosure.url, enclosure.mime_type, enclosure.length, duration)
            break
    return tuple(enclosures)


def xml_image(item: Any, base: str | None) -> str | None:
    """The image given beside the text of one feedparser entry, an absolute http(s) URL, or None.

    The first usable of: a media:content of ``medium="image"`` or an
    ``image/*`` type (declared, or guessed from the file name when neither
    is given), an RSS enclosure or Atom enclosure link of an ``image/*``
    type, the entry's ``itunes:image``, a media:thumbnail. A media:content
    or media:thumbnail whose ``width`` or ``height`` is below
    :data:`MIN_IMAGE_PIXELS` (an author's avatar, a tracking pixel) is skipped.
    """
    found: list[object] = []
    for mention in _mappings(dict.get(item, "media_content")):
        medium = str(mention.get("medium") or "").strip().lower()
        kind = mention.get("type")
        if (medium == "image" or (not medium and _is_image(kind, mention.get("url"), base))) and _big(mention):
            found.append(mention.get("url"))
    found += [m.get("href") for m in _mappings(item.get("enclosures")) if _is_image(m.get("type"), None, base)]
    itunes = dict.get(item, "image")
    if isinstance(itunes, Mapping):
        found.append(itunes.get("href"))
    found += [m.get("url") for m in _mappings(dict.get(item, "media_thumbnail")) if _big(m)]
    return next((url for url in (absolute(value, base) for value in found) if url), None)


def _big(mention: Mapping[str, Any]) -> bool:
    """False for an image declared smaller than :data:`MIN_IMAGE_PIXELS` either way (an avatar, a pixel)."""
    for key in ("width", "height"):
        value = str(mention.get(key) or "").strip()
        if value.isdigit() and len(value) < 6 and int(value) < MIN_IMAGE_PIXELS:
            return False
    return True


def json_image(item: Mapping[str, Any], base: str | None) -> str | None:
    """A JSON Feed item's ``image``, else its ``banner_image``, as an absolute http(s) URL, or None."""
    return absolute(item.get("image"), base) or absolute(item.get("banner_image"), base)


def _is_image(kind: object, url: object, base: str | None) -> bool:
    """True when a declared type, else the file name of ``url``, says image."""
    if kind is not None and kind != "":
        return isinstance(kind, str) and kind.strip().lower().startswith("image/")
    resolved = absolute(url, base)
    return resolved is not None and media_type(None, resolved).startswith("image/")


def json_enclosures(attachments: object, base: str | None) -> tuple[Enclosure, ...]:
    """The enclosures of a JSON Feed item's ``attachments`` value (any JSON value; only a list gives any)."""
    found: list[Enclosure] = []
    for attachment in _mappings(attachments):
        found += _enclosure(
            attachment.get("url"),
            attachment.get("mime_type"),
            attachment.get("size_in_bytes"),
            attachment.get("duration_in_seconds"),
            base,
        )
    return tuple(_merge(found))


def _mappings(value: object) -> Iterable[Mapping[str, Any]]:
    """The mappings in a list value, at most a bounded number of them."""
    if isinstance(value, list):
        yield from (v for v in value[: MAX_ENCLOSURES * 4] if isinstance(v, Mapping))


def _enclosure(
    url: object, kind: object, length: object, duration: object, base: str | None, medium: str | None = None
) -> list[Enclosure]:
    """[the enclosure] when its URL is usable and it is no image, else [].

    ``medium`` is None for an enclosure or attachment; for a media:content,
    its ``medium`` attribute ("" when absent): then only audio and video count.
    """
    resolved = absolute(url, base)
    if resolved is None:
        return []
    mime_type = media_type(kind, resolved)
    major = mime_type.split("/", 1)[0]
    if major == "image" or (medium is not None and major not in _PLAYABLE and (mime_type or medium not in _PLAYABLE)):
        return []  # a media:content counts when its type is audio or video, or, with no type, its medium is
    return [Enclosure(resolved, mime_type, parse_length(length), duration_seconds(duration))]


def _merge(found: list[Enclosure]) -> list[Enclosure]:
    """Each URL once, in order of first mention; later mentions fill unknown fields."""
    merged: dict[str, Enclosure] = {}
    for enclosure in found:
        first = merged.get(enclosure.url)
        if first is None:
            if len(merged) < MAX_ENCLOSURES:
                merged[enclosure.url] = enclosure
            continue
        merged[enclosure.url] = Enclosure(
            first.url,
            first.mime_type or enclosure.mime_type,
            first.length if first.length is not None else enclosure.length,
            first.duration if first.duration is not None else enclosure.duration,
        )
    return list(merged.values())
