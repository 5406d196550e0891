"""Bytes in: the outbound HTTP policy (conditional requests, deadlines, redirects, private
addresses), per-host pacing, local files, content codings. requests, urllib3 and brotli live here.

DESIGN.md, "Layout", gives the arrows between the subpackages.
"""
