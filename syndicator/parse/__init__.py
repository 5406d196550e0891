"""Bytes to a parsed feed: the readers (lxml, feedparser, JSON Feed), encodings, structural
limits, sanitizing, entry identity, media, discovery, OPML lists. feedparser, lxml and nh3 live here.

DESIGN.md, "Layout", gives the arrows between the subpackages.
"""
