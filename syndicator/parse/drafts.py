"""A document's drafts made entries: empty items dropped, undated ones dated, identities given.

The last step of :func:`feed.parse_feed` for every format (XML and JSON
Feed alike): an item with nothing to show is dropped (:func:`shows_nothing`),
an undated item among dated ones borrows a neighbour's date (seed 004:
:func:`borrow_dates`), and each item gets its identity and alias keys from
:mod:`identity` (a repeat is dropped). Reading the documents is not done here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from syndicator.feedtypes import Entry
from syndicator.parse import identity
from syndicator.parse.identity import Draft


def finish(drafts: Sequence[Draft]) -> tuple[Entry, ...]:
    """Drop empty items, date undated ones among dated ones, give identities and alias keys, drop repeats."""
    drafts = borrow_dates([d for d in drafts if not shows_nothing(d)])
    candidates = [d.candidate for d in drafts]
    ids = identity.assign(candidates)
    keys = identity.alias_keys(candidates)
    return tuple(
        replace(d.entry, id=key, aliases=alias)
        for d, key, alias in zip(drafts, ids, keys, strict=True)
        if key is not None
    )


#: An undated item among dated ones is dated this much before the item it borrows from.
BORROWED_OFFSET = timedelta(seconds=1)


def borrow_dates(drafts: Sequence[Draft]) -> list[Draft]:
    """Date the undated items of a document whose other items are dated.

    An item without a usable date among dated ones is usually navigation
    ("More news...") or an item the publisher forgot to date; dated by when
    it was first seen it would top the planet. It takes the date of the
    nearest dated item after it in document order, else (nothing dated
    after it) the oldest date of the document, less one second
    (:data:`BORROWED_OFFSET`), so it ranks just below the item it borrows
    from and never above a dated item of its feed. A document with no dated
    item is left alone: its items are dated by first-seen.

    Args:
        drafts: the document's drafts in document order.
    Returns:
        the drafts, in the same order; each borrowed date is noted in
        ``date_note``.
    """
    dated = [d.entry.date for d in drafts if d.entry.date is not None]
    if not dated or len(dated) == len(drafts):
        return list(drafts)
    oldest = min(dated)
    following: datetime | None = None
    result: list[Draft] = []
    for draft in reversed(drafts):
        entry = draft.entry
        if entry.date is not None:
            following = entry.date
            result.append(draft)
            continue
        why = f"undated: dated just before the {'next dated' if following else 'oldest'} item"
        note = "; ".join(filter(None, (entry.date_note, why)))
        borrowed = (following or oldest) - BORROWED_OFFSET
        result.append(replace(draft, entry=replace(entry, date=borrowed, date_note=note)))
    return result[::-1]


def shows_nothing(draft: Draft) -> bool:
    """True for an item with nothing to show (no title, link, text, enclosure, image or content elsewhere)."""
    entry = draft.entry
    return not (
        entry.title
        or entry.link
        or entry.summary
        or entry.content
        or draft.candidate.enclosures
        or entry.image
        or entry.content_src
    )
