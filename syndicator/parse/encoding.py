"""Feed bytes -> correct Unicode text, and XML text that a strict parser accepts.

Used by :mod:`parse` before feedparser sees a document, so that the result
never depends on an optional encoding-detection package (feedparser asks
chardet or cchardet when they are installed) and one stray byte spoils one
character, not the whole document.

Decoding (:func:`decode`), first rule that applies:

1. a byte-order mark (UTF-8, UTF-16, UTF-32) names the encoding;
2. UTF-16/32 without a mark is recognized from how ``<?`` is written
   (XML 1.0, appendix F);
3. bytes that are valid UTF-8 are UTF-8, whatever the declaration says: a
   document declared ISO-8859-1 whose bytes are UTF-8 is read as UTF-8;
4. the declared encodings, the HTTP ``charset`` first, then the XML
   declaration, each tried strictly. Labels are read as the WHATWG Encoding
   Standard reads them (ISO-8859-1 and US-ASCII mean windows-1252, GB2312
   means GB18030, Shift_JIS means windows-31J);
5. otherwise, character by character: a declared non-Western encoding with
   U+FFFD for each bad sequence; else, when well-formed UTF-8 sequences
   outnumber stray bytes, UTF-8 with each stray byte read as windows-1252
   (the usual mix in Western feeds); else windows-1252 throughout.

Preparing XML (:func:`prepare_xml`): junk before the XML declaration is
dropped, the prolog is rebuilt (a declaration that says UTF-8 on a line of
its own, the DOCTYPE's name with only the entities whose value is one
character reference; comments and processing instructions before the root
element dropped), characters XML 1.0 forbids (an ESC, say) are removed, raw
or as character references, HTML entities that XML does not define
(``&nbsp;``, ``&ldquo;``) become character references, and an ``&`` that
starts no reference is escaped, as is a reference to an entity the
rebuilt DOCTYPE does not keep, and so is a ``<`` that starts no tag,
comment or declaration (``x < y``, ``<3``): XML allows neither, and each
would send the whole document to feedparser's slower tolerant parser. CDATA sections and comments after the
prolog are left as they are. Every step is linear in the text.
"""

from __future__ import annotations

import codecs
import re
from html.entities import html5

from syndicator.parse.markup import prolog

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_NO_BOM = (
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00?\x00", "utf-16-le"),
    (b"\x00<\x00?", "utf-16-be"),
)
#: Encoding labels read as their common superset (WHATWG Encoding Standard).
_SUPERSETS = {
    "iso-8859-1": "cp1252",
    "iso8859-1": "cp1252",
    "latin-1": "cp1252",
    "latin1": "cp1252",
    "l1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "windows-1252": "cp1252",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "euc-cn": "gb18030",
    "shift_jis": "cp932",
    "shift-jis": "cp932",
    "sjis": "cp932",
    "x-sjis": "cp932",
    "euc-kr": "cp949",
    "ks_c_5601-1987": "cp949",
    "iso-8859-9": "cp1254",
    "tis-620": "cp874",
    "iso-8859-11": "cp874",
    "big5": "big5hkscs",
}
_WESTERN = {"cp1252", "utf-8"}
_HEADER_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", re.I)
#: The name and external id of a DOCTYPE (up to its internal subset or end).
_DOCTYPE_HEAD = re.compile(r"<!DOCTYPE([^\[<>]*+)", re.I)
#: An entity declaration whose value is one character reference: the only kind kept.
_SAFE_ENTITY = re.compile(r"""<!ENTITY\s++([A-Za-z][\w.-]*+)\s++["'](&\#(?:[0-9]++|x[0-9a-fA-F]++);)["']\s*+>""")
_MAX_ENTITIES = 2048
_DECLARED = re.compile(rb"^<\?xml[^>]*?encoding\s*=\s*[\"']([A-Za-z0-9._:-]+)[\"']", re.S)
_FALLBACK = "syndicator-cp1252-per-byte"
#: Characters XML 1.0 (section 2.2) does not allow, and references to them.
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
# A CDATA section or comment (kept as is), or an ampersand and what follows it, unless that is
# one of XML's own entities or a decimal reference to a character XML allows (32-9999): those
# stay as they are, and skipping them here spares a call per reference.
_REFERENCE = re.compile(
    r"<!\[CDATA\[.*?(?:\]\]>|$)|<!--.*?(?:-->|$)|<(?![A-Za-z_:/!?\u0080-\U0010ffff])"
    r"|&(?!(?:amp|lt|gt|quot|apos|#(?:3[2-9]|[4-9][0-9]|[1-9][0-9]{2,3}));)"
    r"(#[0-9]+;|#[xX][0-9a-fA-F]+;|[A-Za-z][A-Za-z0-9._-]*;)?",
    re.S,
)
#: One well-formed UTF-8 sequence of two to four bytes (RFC 3629 section 4).
_UTF8_SEQUENCE = re.compile(
    rb"[\xc2-\xdf][\x80-\xbf]|\xe0[\xa0-\xbf][\x80-\xbf]|[\xe1-\xec\xee\xef][\x80-\xbf]{2}"
    rb"|\xed[\x80-\x9f][\x80-\xbf]|\xf0[\x90-\xbf][\x80-\xbf]{2}|[\xf1-\xf3][\x80-\xbf]{3}"
    rb"|\xf4[\x80-\x8f][\x80-\xbf]{2}"
)
_HIGH = re.compile(rb"[\x80-\xff]")
_XML_ENTITIES = {"amp;", "lt;", "gt;", "quot;", "apos;"}


def _per_byte(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: each undecodable byte read as windows-1252."""
    assert isinstance(error, UnicodeDecodeError)
    bad = error.object[error.start : error.end]
    return bad.decode("cp1252", "replace"), error.end


codecs.register_error(_FALLBACK, _per_byte)


def _codec(label: str | None) -> str | None:
    """The Python codec for an encoding label (str), or None if unknown or not a text encoding."""
    if not label:
        return None
    label = label.strip().lower()
    label = _SUPERSETS.get(label, label)
    try:
        name = codecs.lookup(label).name
        b"<".decode(name)  # LookupError for codecs that are not text encodings: base64, rot13, zlib
    except LookupError:
        return None
    except UnicodeDecodeError:
        pass  # a text encoding that needs more than one byte (utf-16)
    return _SUPERSETS.get(name, name)


def declared_encodings(body: bytes, content_type: str = "") -> list[str]:
    """Codecs the HTTP header and the XML declaration name, header first (list of str)."""
    found = []
    match = _HEADER_CHARSET.search(content_type or "")
    if match:
        found.append(match.group(1))
    declared = _DECLARED.match(body.lstrip()[:1024])
    if declared:
        found.append(declared.group(1).decode("ascii"))
    names = [_codec(label) for label in found]
    return list(dict.fromkeys(c for c in names if c and not c.startswith(("utf-16", "utf-32"))))


def decode(body: bytes, content_type: str = "") -> str:
    """Decode a feed document by the rules in the module docstring.

    Args:
        body: the document (bytes).
        content_type: the HTTP Content-Type header value, or "".
    Returns:
        the text (str), without a byte-order mark. Never raises for bad bytes.
    """
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(codec, "replace")
    for start, codec in _NO_BOM:
        if body.startswith(start):
            return body.decode(codec, "replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    declared = declared_encodings(body, content_type)
    for codec in declared:
        try:
            return body.decode(codec)
        except UnicodeDecodeError:
            continue
    foreign = [codec for codec in declared if codec not in _WESTERN]
    if foreign:
        return body.decode(foreign[0], "replace")
    if mostly_utf8(body):
        return body.decode("utf-8", _FALLBACK)
    return body.decode("cp1252", "replace")


def mostly_utf8(body: bytes) -> bool:
    """True if ``body`` (bytes) has more well-formed UTF-8 sequences than stray high bytes.

    Tells a UTF-8 document with a few bytes in another encoding from a
    windows-1252 document that happens to hold a valid UTF-8 sequence.
    """
    sequences = _UTF8_SEQUENCE.findall(body)
    stray = len(_HIGH.findall(body)) - sum(len(s) for s in sequences)
    return len(sequences) > stray


def strip_forbidden(text: str) -> str:
    """Remove raw characters that XML 1.0 forbids (str -> str)."""
    return _FORBIDDEN.sub("", text)


def xml_char_allowed(code: int) -> bool:
    """True if the code point (int) may appear in an XML 1.0 document (section 2.2)."""
    return code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or 0x10000 <= code <= 0x10FFFF


def prepare_xml(text: str) -> str:
    """Make decoded feed text acceptable to a strict XML parser where that is safe.

    See the module docstring for what changes. Returns str, starting with
    the prolog :func:`_prolog` rebuilds.
    """
    text = text.lstrip("\ufeff \t\r\n")
    if not text:
        return ""
    start = text.find("<?xml", 0, 65536)
    if start > 0 and not re.search(r"<(?:rss|feed|rdf:RDF)\b", text[:start]):
        text = text[start:]
    text = strip_forbidden(text)
    end, doctype = prolog(text)
    entities = dict(_SAFE_ENTITY.findall(doctype or "")[:_MAX_ENTITIES])
    declared = set(entities)
    return _prolog(doctype, entities) + _REFERENCE.sub(lambda match: _reference(match, declared), text[end:])


def _prolog(doctype: str | None, entities: dict[str, str]) -> str:
    """A short, clean prolog: the XML declaration on a line of its own, then the
    DOCTYPE's name and external id (if any) with only its safe entities.

    Comments and processing instructions are dropped. feedparser runs
    line-anchored regexes over the prolog and the first line (whose work
    grows with the square of a hostile prolog's length) and reads only the
    DOCTYPE's name and its entities; an entity whose value is one character
    reference cannot amplify the document (no "billion laughs").
    """
    prolog_text = '<?xml version="1.0" encoding="utf-8"?>\n'
    if doctype is None:
        return prolog_text
    head = _DOCTYPE_HEAD.match(doctype)
    external = " ".join(head.group(1).split())[:1024] if head else ""
    declarations = "".join(f'<!ENTITY {name} "{value}">\n' for name, value in entities.items())
    subset = f" [\n{declarations}]" if declarations else ""
    return f"{prolog_text}<!DOCTYPE {external}{subset}>\n"


def _reference(match: re.Match[str], declared: set[str]) -> str:
    whole = match.group(0)
    if whole == "<":
        return "&lt;"  # starts no tag, comment or declaration ("x < y"): text, as a tolerant parser reads it
    if not whole.startswith("&"):
        return whole  # CDATA section or comment
    name = match.group(1)
    if name is None:
        return "&amp;"
    if name.startswith("#"):
        code = int(name[2:-1], 16) if name[1] in "xX" else int(name[1:-1])
        return whole if xml_char_allowed(code) else ""
    if name in _XML_ENTITIES or name[:-1] in declared:
        return whole
    if name in html5:
        return "".join(f"&#{ord(char)};" for char in html5[name])
    return "&amp;" + name
