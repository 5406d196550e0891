"""Adversarial feed documents and podcast RRULEs for benchmarks/adversarial.py.

Each document is built in memory (nothing is downloaded) and aims at one
known or suspected super-linear step of the parser: long fields meeting a
backtracking regex, deep nesting, many elements, entity tricks, unclosed
constructs, a hostile document head. :data:`DOCUMENTS` maps a name to a
function that returns ``(body, headers)``; :data:`RULES` lists
podcast:updateFrequency rules as ``(name, rrule, dtstart)``.
"""

from __future__ import annotations

from collections.abc import Callable

MB = 1_000_000
Document = tuple[bytes, dict[str, str]]
XML = {"content-type": "application/xml; charset=utf-8"}


def _rss(channel: str = "", items: str = "", head: str = "", namespaces: str = "") -> Document:
    text = (
        f'<?xml version="1.0" encoding="utf-8"?>{head}<rss version="2.0"{namespaces}><channel>'
        f"<title>Adversarial</title><link>https://adversarial.example/</link>{channel}"
        f"{items}</channel></rss>"
    )
    return text.encode("utf-8"), XML


def _item(inner: str) -> str:
    return f"<item><link>https://adversarial.example/1</link>{inner}</item>"


def _fill(unit: str, size: int = MB) -> str:
    return unit * max(1, size // len(unit))


def title_markup() -> Document:
    """A 1 MB title of element starts without end tags: ``<b>x <b>x ...`` (escaped)."""
    return _rss(items=_item(f"<title>{_fill('&lt;b&gt;x ')}</title>"))


def title_text() -> Document:
    """A 1 MB title of plain words."""
    return _rss(items=_item(f"<title>{_fill('word ')}</title>"))


def summary_html() -> Document:
    """A 1 MB summary of ordinary escaped HTML paragraphs."""
    return _rss(
        items=_item(f"<title>t</title><description>{_fill('&lt;p&gt;Some text here.&lt;/p&gt;')}</description>")
    )


def summary_unclosed_formatting() -> Document:
    """A 1 MB summary of formatting elements never closed, each with its own attribute."""
    units = "".join(f"&lt;b id={n}&gt;x " for n in range(MB // 16))
    return _rss(items=_item(f"<title>t</title><description>{units}</description>"))


def nesting_xml() -> Document:
    """XML elements nested 10,000 deep inside an item."""
    return _rss(items=_item("<title>t</title>" + "<x>" * 10_000 + "deep" + "</x>" * 10_000))


def nesting_xml_100k() -> Document:
    """XML elements nested 100,000 deep inside an item."""
    return _rss(items=_item("<title>t</title>" + "<x>" * 100_000 + "deep" + "</x>" * 100_000))


def nesting_html() -> Document:
    """Escaped HTML ``<div>`` nested 10,000 deep in a summary."""
    return _rss(
        items=_item(
            "<title>t</title><description>"
            + "&lt;div&gt;" * 10_000
            + "deep"
            + "&lt;/div&gt;" * 10_000
            + "</description>"
        )
    )


def many_items() -> Document:
    """100,000 tiny items."""
    items = "".join(f"<item><title>t{n}</title><guid>g{n}</guid></item>" for n in range(100_000))
    return _rss(items=items)


def huge_attribute() -> Document:
    """An item with a 1 MB attribute value on an unknown element and on its enclosure."""
    value = _fill("a")
    return _rss(items=_item(f'<title>t</title><x a="{value}"/><enclosure url="https://e.example/{value}"/>'))


def atom_huge_href() -> Document:
    """An Atom entry whose link href is 1 MB."""
    text = (
        '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><id>urn:a</id>'
        f'<entry><id>urn:e</id><title>t</title><link href="https://e.example/{_fill("a")}"/></entry></feed>'
    )
    return text.encode(), XML


def billion_laughs() -> Document:
    """Nested entity definitions (the "billion laughs" attack), padded to 1 MB."""
    lol = ['<!ENTITY lol0 "lol">'] + [f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10)]
    head = "<!DOCTYPE rss [" + "".join(lol) + "]>"
    return _rss(
        items=_item("<title>&lol9;</title>") + _item(f"<title>p</title><description>{_fill('pad ')}</description>"),
        head=head,
    )


def undefined_entities() -> Document:
    """A 1 MB summary of undefined entity references."""
    refs = "".join(f"&undefined{n};" for n in range(MB // 16))
    return _rss(items=_item(f"<title>t</title><description>{refs}</description>"))


def unclosed_cdata() -> Document:
    """One CDATA section opened and never closed, then 1 MB."""
    return _rss(items=_item(f"<title>t</title><description><![CDATA[{_fill('text ')}"))


def many_unclosed_cdata() -> Document:
    """1 MB of CDATA openings without ends (20 characters each: nearly as dense as the pre-scan accepts)."""
    return _rss(items=_item(f"<title>t</title><description>{_fill('<![CDATA[x          ')}</description>"))


def many_unclosed_comments() -> Document:
    """1 MB of comment openings without ends (20 characters each)."""
    return _rss(items=_item(f"<title>t</title><description>{_fill('<!--x               ')}</description>"))


def doctype_brackets() -> Document:
    """A DOCTYPE of 1 MB of bracket pairs and no closing ``>``."""
    return f'<?xml version="1.0"?><!DOCTYPE rss {_fill("[]")}'.encode(), XML


def unclosed_skiphours() -> Document:
    """1 MB of ``<skipHours>`` openings (20 characters each) in the channel head, in a comment (the head
    scan reads comments)."""
    return _rss(channel="<!--" + _fill("<skipHours>         ") + "-->", items=_item("<title>t</title>"))


def dense_elements() -> Document:
    """1 MB of empty elements, ``<a/>`` after ``<a/>``, in one item."""
    return _rss(items=_item("<title>t</title>" + _fill("<a/>")))


def dense_elements_malformed() -> Document:
    """150,000 empty elements (600 KB) and one stray ``<``: feedparser's tolerant parser reads them all."""
    return _rss(items=_item("<title>t</title>" + "<a/>" * 150_000 + "<description><b>x</description>"))


def dense_at_limit_malformed() -> Document:
    """1 MB of empty elements each with 12 characters of text (as dense as the pre-scan
    accepts) and one stray ``<``: feedparser's strict, then its tolerant parser read them all."""
    return _rss(items=_item("<title>t</title>" + _fill("<a/>xxxxxxxxxxxx") + "<description><b>x</description>"))


def bare_ampersands_malformed() -> Document:
    """A title of 200,000 bare ``&`` (each escaped to ``&amp;``, five times the size) and one stray ``<``."""
    return _rss(items=_item("<title>" + "&" * 200_000 + "</title><description><b>x</description>"))


def broken_tags() -> Document:
    """1 MB of ``<a`` with no ``>``: broken tags, each one a step for feedparser's tolerant parser."""
    return _rss(items=_item("<title>t</title><description>" + _fill("<a") + "</description>"))


def summary_references() -> Document:
    """A 1 MB summary of escaped character references (``&amp;amp;`` ...)."""
    return _rss(items=_item(f"<title>t</title><description>{_fill('&amp;amp; ')}</description>"))


def author_cdata() -> Document:
    """A 1 MB author of word characters inside CDATA."""
    return _rss(items=_item(f"<title>t</title><author><![CDATA[{_fill('a')}]]></author>"))


def prolog_blank_lines() -> Document:
    """A prolog of 500,000 blank lines and unclosed entity declarations."""
    head = "<!DOCTYPE rss [" + "\n" * 250_000 + _fill("\n<!ENTITY a", MB // 2) + "]>"
    return _rss(items=_item("<title>t</title>"), head=head)


def first_line_encodings() -> Document:
    """A document on one 1 MB line of ``encoding="x"`` attributes (feedparser reads its first line)."""
    return _rss(items=_item("<title>t</title>" + _fill('<x encoding="x" a=\'"\'/>')))


def unclosed_update_frequency() -> Document:
    """1 MB of ``<podcast:updateFrequency`` openings without ``>``."""
    return _rss(
        channel=_fill("<podcast:updateFrequency "),
        items=_item("<title>t</title>"),
        namespaces=' xmlns:podcast="https://podcastindex.org/namespace/1.0"',
    )


def update_frequency_word_run() -> Document:
    """A podcast:updateFrequency with a 200 KB run of name characters among its attributes."""
    element = f'<podcast:updateFrequency {"a" * 200_000} rrule="FREQ=DAILY">daily</podcast:updateFrequency>'
    return _rss(
        channel=element,
        items=_item(f"<title>t</title><description>{_fill('pad ')}</description>"),
        namespaces=' xmlns:podcast="https://podcastindex.org/namespace/1.0"',
    )


def many_namespaces() -> Document:
    """1 MB of namespace declarations whose values never close."""
    return _rss(channel="<x " + _fill('xmlns:a="') + "/>", items=_item("<title>t</title>"))


def long_author() -> Document:
    """A 1 MB author of word characters and no ``@``."""
    return _rss(items=_item(f"<title>t</title><author>{_fill('a')}</author>"))


def long_date() -> Document:
    """Two items with 1 MB dates: digits and day names."""
    return _rss(
        items=_item(f"<title>t</title><pubDate>{_fill('1 ', MB // 2)}</pubDate>")
        + _item(f"<title>u</title><pubDate>{_fill('Mon, ', MB // 2)}</pubDate>")
    )


def root_attributes() -> Document:
    """An Atom root element holding 300,000 attributes (about 3.5 MB, under the default size cap)."""
    attributes = "".join(f' a{n}="v"' for n in range(300_000))
    text = (
        f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"{attributes}><title>A</title>'
        '<id>urn:a</id><entry><id>urn:e</id><title>t</title><link href="https://e.example/1"/></entry></feed>'
    )
    return text.encode(), XML


def root_attributes_malformed() -> Document:
    """An RSS root element holding 300,000 attributes, and one stray ``<``: feedparser's tolerant parser."""
    attributes = "".join(f' a{n}="v"' for n in range(300_000))
    return _rss(items=_item("<title>t</title><description><b>x</description>"), namespaces=attributes)


def attributes_at_limit() -> Document:
    """1 MB of elements each holding 256 attributes (as many as the pre-scan accepts), in one item."""
    element = "<x" + "".join(f' a{n}="v"' for n in range(255)) + "/>"
    return _rss(items=_item("<title>t</title>" + _fill(element)))


def attributes_at_limit_strict() -> Document:
    """As :func:`attributes_at_limit`, with a DOCTYPE: the fast reader declines, feedparser's SAX reader reads it."""
    element = "<x" + "".join(f' a{n}="v"' for n in range(255)) + "/>"
    return _rss(items=_item("<title>t</title>" + _fill(element)), head="<!DOCTYPE rss>")


def html_attributes() -> Document:
    """A summary holding one escaped HTML tag of 300,000 attributes (the sanitizer's parser)."""
    tag = "&lt;p" + "".join(f" a{n}=&quot;v&quot;" for n in range(300_000)) + "&gt;"
    return _rss(items=_item(f"<title>t</title><description>{tag}text</description>"))


def full_text_cdata() -> Document:
    """1 MB of full-text HTML content in CDATA: short paragraphs of inline markup, one ``<`` per 8 characters."""
    paragraphs = _fill('<p>Part: <a href="/p/1">a</a>, <em>b</em> <b>c</b>.</p>\n', 12_000)
    entries = "".join(
        f'<entry><id>urn:e:{n}</id><title>t{n}</title><link href="https://e.example/{n}"/>'
        f'<content type="html"><![CDATA[{paragraphs}]]></content></entry>'
        for n in range(80)
    )
    text = (
        f'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>A</title><id>urn:a</id>{entries}</feed>'
    )
    return text.encode(), XML


def json_deep() -> Document:
    """A JSON document nested 100,000 arrays deep."""
    return b'{"version": "https://jsonfeed.org/version/1.1", "items": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", {
        "content-type": "application/feed+json"
    }


def json_long_title() -> Document:
    """A JSON Feed item with a 1 MB title of entities and end tags."""
    title = _fill("&amp;</b ")
    body = (
        '{"version": "https://jsonfeed.org/version/1.1", "title": "J", "items": [{"id": "1", "title": "'
        + title
        + '", "content_text": "x", "authors": [{"name": "'
        + "a" * MB
        + '"}]}]}'
    )
    return body.encode(), {"content-type": "application/feed+json"}


def html_unclosed() -> Document:
    """An HTML page (not a feed) of 1 MB of comment openings and unclosed tags."""
    return ("<!DOCTYPE html><html><head>" + _fill("<!--x <a ")).encode(), {"content-type": "text/html"}


DOCUMENTS: dict[str, Callable[[], Document]] = {
    function.__name__: function
    for function in (
        title_markup,
        title_text,
        summary_html,
        summary_unclosed_formatting,
        nesting_xml,
        nesting_xml_100k,
        nesting_html,
        many_items,
        huge_attribute,
        atom_huge_href,
        billion_laughs,
        undefined_entities,
        unclosed_cdata,
        many_unclosed_cdata,
        many_unclosed_comments,
        doctype_brackets,
        unclosed_skiphours,
        unclosed_update_frequency,
        update_frequency_word_run,
        many_namespaces,
        long_author,
        author_cdata,
        long_date,
        dense_elements,
        dense_elements_malformed,
        dense_at_limit_malformed,
        bare_ampersands_malformed,
        broken_tags,
        summary_references,
        prolog_blank_lines,
        first_line_encodings,
        root_attributes,
        root_attributes_malformed,
        attributes_at_limit,
        attributes_at_limit_strict,
        html_attributes,
        full_text_cdata,
        json_deep,
        json_long_title,
        html_unclosed,
    )
}

_HOURS = ",".join(str(h) for h in range(24))
_MINUTES = ",".join(str(m) for m in range(60))
#: (name, rrule, dtstart): podcast:updateFrequency values as a feed may write them.
RULES = [
    ("daily, dtstart 1900", "FREQ=DAILY", "1900-01-01T00:00:00Z"),
    (
        "every minute via BYHOUR/BYMINUTE, dtstart 1900",
        f"FREQ=DAILY;BYHOUR={_HOURS};BYMINUTE={_MINUTES}",
        "1900-01-01T00:00:00Z",
    ),
    ("every minute via BYHOUR/BYMINUTE, no dtstart", f"FREQ=DAILY;BYHOUR={_HOURS};BYMINUTE={_MINUTES}", None),
    (
        "every minute of the year, YEARLY",
        f"FREQ=YEARLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;BYHOUR={_HOURS};BYMINUTE={_MINUTES}",
        None,
    ),
    ("impossible DAILY (January day 100)", "FREQ=DAILY;BYMONTH=1;BYYEARDAY=100", None),
    ("impossible WEEKLY (January day 100)", "FREQ=WEEKLY;BYMONTH=1;BYYEARDAY=100", None),
    ("impossible DAILY with COUNT", "FREQ=DAILY;BYMONTH=1;BYYEARDAY=100;COUNT=5", None),
    ("impossible DAILY, dtstart 1900", "FREQ=DAILY;BYMONTH=1;BYYEARDAY=100", "1900-01-01T00:00:00Z"),
    ("impossible DAILY with BYSETPOS", "FREQ=DAILY;BYMONTH=1;BYYEARDAY=100;BYSETPOS=1", None),
    ("BYSETPOS past the day's times (DAILY)", "FREQ=DAILY;BYHOUR=9;BYSETPOS=2", None),
    ("Friday the 13th, dtstart 1900", "FREQ=DAILY;BYDAY=FR;BYMONTHDAY=13", "1900-01-01T00:00:00Z"),
    ("weekly, UNTIL far ahead, dtstart 1900", "FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=29991231T000000Z", "1900-01-01T00:00:00Z"),
]
