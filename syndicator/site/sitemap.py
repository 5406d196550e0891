"""``sitemap.xml`` and ``robots.txt``: what search engines are told of the planet's pages. Pure.

The sitemap (https://www.sitemaps.org/protocol.html, 0.9) lists every HTML page the render writes, by
its absolute URL (a folder's ``index.html`` by the folder's URL, as the pages' canonical links say),
in name order, with no ``lastmod``: a date of the build would rewrite the file at every build, and a
build that changes nothing writes nothing. Over :data:`MAX_URLS` pages, ``sitemap.xml`` is a sitemap
index of ``sitemap-1.xml``, ``sitemap-2.xml``... (the protocol's limit per file).

``robots.txt`` follows the ``robots`` setting: ``index`` lets every crawler in and names the sitemap,
``noindex`` asks them all to stay out (RFC 9309), ``none`` writes none (a planet published under a
path of a bigger site, whose robots.txt is the host's).
"""

from __future__ import annotations

from collections.abc import Iterable
from xml.sax.saxutils import escape

__all__ = ["MAX_URLS", "robots_txt", "sitemap_files"]

#: Most URLs in one sitemap file (sitemaps.org protocol).
MAX_URLS = 50_000
_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"
_XML = '<?xml version="1.0" encoding="utf-8"?>\n'


def page_url(base: str, path: str) -> str:
    """The absolute URL of the page ``path`` (``sites/x/index.html`` -> ``BASE/sites/x/``)."""
    return base + (path[: -len("index.html")] if path.endswith("index.html") else path)


def sitemap_files(base: str, names: Iterable[str]) -> dict[str, str]:
    """{file name: XML text} of the sitemap of the pages among ``names`` (paths in the site; the
    ``.html`` ones are pages); ``base`` is the planet's link ending in "/"."""
    urls = sorted(page_url(base, name) for name in names if name.endswith(".html"))
    if len(urls) <= MAX_URLS:
        return {"sitemap.xml": _urlset(urls)}
    files = {}
    for number, start in enumerate(range(0, len(urls), MAX_URLS), start=1):
        files[f"sitemap-{number}.xml"] = _urlset(urls[start : start + MAX_URLS])
    entries = "".join(f"  <sitemap><loc>{escape(base + name)}</loc></sitemap>\n" for name in sorted(files))
    files["sitemap.xml"] = (
        f'<?xml version="1.0" encoding="utf-8"?>\n<sitemapindex xmlns="{_NAMESPACE}">\n{entries}</sitemapindex>\n'
    )
    return files


def _urlset(urls: list[str]) -> str:
    lines = "".join(f"  <url><loc>{escape(url)}</loc></url>\n" for url in urls)
    return f'{_XML}<urlset xmlns="{_NAMESPACE}">\n{lines}</urlset>\n'


def robots_txt(robots: str, base: str) -> str | None:
    """The text of robots.txt for the ``robots`` setting (``index``, ``noindex``), None for ``none``."""
    if robots == "index":
        return f"User-agent: *\nAllow: /\n\nSitemap: {base}sitemap.xml\n"
    if robots == "noindex":
        return "User-agent: *\nDisallow: /\n"
    return None
