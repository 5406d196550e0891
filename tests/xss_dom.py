"""A browser-grade check of published HTML for active content, used by tests/test_xss.py.

HTML is parsed with html5lib, which follows the WHATWG parsing algorithm
(entities, foreign SVG/MathML content, foster parenting, raw-text elements)
as browsers do, and the resulting tree is walked. Substring search would
miss ``&#106;avascript:`` and flag harmless escaped text; the tree cannot.

:func:`page_problems` checks a whole page (index.html, sites.html): the
page's own ``<link>`` and ``<meta>`` elements in its head are allowed, and
relative URLs to the site's own files. :func:`fragment_problems` checks an
HTML fragment (an entry's content as a feed reader inserts it), parsed,
serialized and parsed again so a mutation on the way (mXSS) shows too.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import html5lib
from html5lib.serializer import serialize

#: Elements that run script, load documents or styles, submit, or switch the parser's namespace.
FORBIDDEN = {
    "script",
    "style",
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "base",
    "form",
    "input",
    "button",
    "select",
    "textarea",
    "keygen",
    "isindex",
    "svg",
    "math",
    "template",
    "noscript",
    "noembed",
    "noframes",
    "portal",
    "link",
    "meta",
}
#: Attributes that hold one URL.
URL_ATTRIBUTES = {
    "href",
    "src",
    "action",
    "cite",
    "poster",
    "data",
    "background",
    "formaction",
    "longdesc",
    "lowsrc",
    "dynsrc",
    "usemap",
    "codebase",
    "manifest",
    "icon",
    "profile",
    "ping",
}
#: Attributes forbidden whatever their value.
FORBIDDEN_ATTRIBUTES = {"style", "srcdoc", "formaction"}
#: Files of the published site: the only relative URLs a page may hold.
OWN_FILES = {"index.html", "sites.html", "feed.xml", "feed.json", "opml.xml", "style.css", "search.html", "search.js"}
OWN_FILES |= {"rss20.xml", "rss10.xml", "atom.xml", "foafroll.xml"}  # old_feeds
#: A path to one of the site's own pages from any page of it: the files above, an archive month (with an
#: entry's anchor), a site's or a category's page or feeds (their slugs are python-slugify's: a-z, 0-9, -).
OWN_PATH = re.compile(
    r"(?:\.\./)*(?:" + "|".join(re.escape(name) for name in sorted(OWN_FILES)) + r"|archive/(?:index|\d{4}-\d{2})\.html"
    r"(?:#e-[0-9a-f]{12})?|(?:sites|categories)/[a-z0-9-]+/(?:index\.html|feed(?:-\d+)?\.(?:xml|json)))"
)
#: The page's own metadata in its head (name or http-equiv, lower case).
OWN_META = {"charset", "content-security-policy", "referrer", "viewport", "generator", "description", "robots"}
OWN_META |= {f"og:{name}" for name in ("type", "site_name", "title", "url", "locale", "description", "image")}
OWN_META |= {f"twitter:{name}" for name in ("card", "title", "description")}
OWN_LINKS = {("stylesheet", "style.css"), ("alternate", "feed.xml"), ("alternate", "feed.json")}
OWN_LINKS |= {("alternate", name) for name in ("rss20.xml", "rss10.xml", "atom.xml")}  # old_feeds
OWN_LINKS |= {(rel, f"../{'../' * depth}{name}") for rel, name in OWN_LINKS for depth in range(2)}

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_C0_OR_SPACE = "".join(chr(c) for c in range(0x21))


def url_scheme(value: str) -> str | None:
    """The scheme a browser reads in an attribute value, lower case; None for a relative URL.

    ``value`` is the attribute as parsed (entities already decoded). As the
    WHATWG URL parser does: leading and trailing C0 controls and spaces are
    stripped, and tabs and line breaks removed anywhere.
    """
    text = re.sub("[\t\n\r]", "", value.strip(_C0_OR_SPACE))
    match = _SCHEME.match(text)
    return match.group(1).lower() if match else None


def url_problem(name: str, value: str, own_files: bool) -> str | None:
    """What is unsafe about one URL in attribute ``name`` (str), or None.

    http(s) is allowed everywhere, mailto only in ``href``; a relative URL
    only when ``own_files`` and it names one of the site's own files (:data:`OWN_PATH`).
    """
    scheme = url_scheme(value)
    if scheme in ("http", "https") or (scheme == "mailto" and name == "href"):
        return None
    if scheme is None and own_files and OWN_PATH.fullmatch(value.strip()):
        return None
    return f"{name}={value!r}"


def _local(name: str) -> str:
    """A tag or attribute name without its namespace, lower case."""
    return name.rsplit("}", 1)[-1].lower()


def _srcset_urls(value: str) -> Iterator[str]:
    """The URL of each candidate of a srcset (or ping) value."""
    for candidate in value.split(","):
        words = candidate.split()
        if words:
            yield words[0]


def _attribute_problems(tag: str, attributes: dict[str, str], own_files: bool) -> Iterator[str]:
    for raw_name, value in attributes.items():
        name = _local(raw_name)
        if name.startswith("on") or name in FORBIDDEN_ATTRIBUTES:
            yield f"<{tag} {name}={value!r}>"
        elif name in ("srcset", "imagesrcset", "ping"):
            bad = [u for u in _srcset_urls(value) if url_problem("src", u, own_files)]
            if bad:
                yield f"<{tag} {name}={value!r}>"
        elif name in URL_ATTRIBUTES:
            problem = url_problem(name, value, own_files)
            if problem:
                yield f"<{tag} {problem}>"


def _own_head_element(tag: str, attributes: dict[str, str]) -> bool:
    """True for the page's own <meta> and <link> elements (only checked inside <head>)."""
    if tag == "meta":
        kind = attributes.get("http-equiv") or attributes.get("name") or attributes.get("property") or ""
        kind = kind or ("charset" if "charset" in attributes else "")
        return kind.lower() in OWN_META
    rel = attributes.get("rel", "").lower()
    return tag == "link" and (rel == "canonical" or (rel, attributes.get("href", "")) in OWN_LINKS)


def tree_problems(root: ET.Element, own_files: bool = False) -> list[str]:
    """Active content in a parsed tree (html5lib etree, no HTML namespace); [] when none."""
    problems: list[str] = []
    heads = [element for element in root.iter() if isinstance(element.tag, str) and _local(element.tag) == "head"]
    in_head = {id(element) for head in heads for element in head}
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue  # a comment or processing instruction: inert
        tag = _local(element.tag)
        allowed_here = id(element) in in_head and _own_head_element(tag, element.attrib)
        if tag in FORBIDDEN and not allowed_here:
            problems.append(f"<{tag}> element")
        problems.extend(_attribute_problems(tag, element.attrib, own_files))
    return problems


def parse_page(page: str) -> ET.Element:
    """A whole HTML document parsed as a browser parses it (html5lib etree)."""
    return html5lib.parse(page, namespaceHTMLElements=False)


def page_problems(page: str) -> list[str]:
    """Active content in a whole page (str); its own links, metadata and files are allowed."""
    return tree_problems(parse_page(page), own_files=True)


def fragment_problems(fragment: str) -> list[str]:
    """Active content in an HTML fragment: in a <div>, after a round trip, and inside a page.

    The round trip (parse, serialize, parse again) is what a reader's own
    sanitizer or an innerHTML assignment does, so a fragment that mutates on
    the way into something active is caught as well. Inside a page, a
    ``<body onload>`` lends its attributes to the page's own body.
    """
    first = html5lib.parseFragment(fragment, container="div", namespaceHTMLElements=False)
    again = serialize(first, tree="etree", omit_optional_tags=False, quote_attr_values="always")
    second = html5lib.parseFragment(again, container="div", namespaceHTMLElements=False)
    page = parse_page(f"<!DOCTYPE html><title>page</title><div>{fragment}</div>")
    problems = tree_problems(first)
    problems += [f"after a round trip: {p}" for p in tree_problems(second) if p not in problems]
    return problems + [f"inside a page: {p}" for p in tree_problems(page) if p not in problems]


def visible_text(element: ET.Element) -> str:
    """The text a browser shows for ``element``, white space squeezed (str)."""
    return " ".join("".join(element.itertext()).split())
