"""Hostile payloads for the XSS battery (tests/test_xss.py), written for syndicator.

Two lists:

* :data:`MARKUP`: HTML that ends up in text and HTML fields (titles,
  summaries, content, author names, feed titles, site names). ``@@`` marks
  where a word a browser would show goes; the battery replaces it with a
  word naming the field ("Headline", "Summary", ...), so a title that was
  dropped or replaced by its summary is told apart from one that shows.
* :data:`URLS`: values for URL fields (entry links, enclosures, feed links,
  ``xml:base``, JSON Feed ``url``) and for ``href``/``src``/``srcset``/
  ``cite`` inside content. They are written as they stand in an XML document:
  character references are decoded by the XML parser, so ``&#106;`` arrives
  as ``j`` and ``&amp;#106;`` as the text ``&#106;``.

Every payload has a readable id, used as the test id.
"""

from __future__ import annotations

from dataclasses import dataclass

WORD = "@@"


@dataclass(frozen=True)
class Payload:
    """One hostile value: ``id`` names it in test ids; ``text`` is the value itself."""

    id: str
    text: str

    def with_word(self, word: str) -> str:
        """The payload with its visible-word mark replaced by ``word`` (str)."""
        return self.text.replace(WORD, word)


_MARKUP = [
    # Script elements.
    ("script", "<script>alert('syn')</script>@@"),
    ("script-src", '<script src="https://evil.example/s.js"></script>@@'),
    ("script-upper", "<SCRIPT>alert(2)</SCRIPT>@@"),
    ("script-split", "<scr<script>x</script>ipt>alert(3)</script>@@"),
    ("script-unclosed", "@@<script>alert(4)"),
    ("script-slash-attr", "<script/xss>alert(5)</script>@@"),
    ("attr-break-double", '"><script>alert(6)</script>@@'),
    ("attr-break-single", "'><script>alert(7)</script>@@"),
    ("attr-break-title", '<a href="https://ok.example/" title=\'x" onmouseover="alert(8)\'>@@</a>'),
    ("attr-break-alt", '<img src="https://img.example/a.png" alt="x&quot; onerror=&quot;alert(9)">@@'),
    ("escaped-markup", "&lt;img src=x onerror=alert(10)&gt;@@"),
    # Event handlers.
    ("img-onerror", "<img src=x onerror=alert(11)>@@"),
    ("img-slashes", '<img/src="x"/onerror="alert(12)">@@'),
    ("handler-newlines", '<img src="https://img.example/a.png"\nonload\n=\nalert(13)>@@'),
    ("handler-mixed-case", '<p OnClIcK="alert(14)">@@</p>'),
    ("handler-unquoted", "<a href=https://ok.example/ onclick=alert(15)>@@</a>"),
    ("body-onload", "<body onload=alert(16)>@@"),
    ("details-ontoggle", "<details open ontoggle=alert(17)><summary>@@</summary></details>"),
    ("input-autofocus", "<input autofocus onfocus=alert(18)>@@"),
    ("source-onerror", '<video><source onerror="alert(19)"></video>@@'),
    ("audio-onerror", "<audio src=x onerror=alert(20)>@@</audio>"),
    ("marquee-onstart", "<marquee onstart=alert(21)>@@</marquee>"),
    ("button-onclick", '<button onclick="alert(22)">@@</button>'),
    # javascript:, vbscript: and data: URLs, plain and obfuscated.
    ("href-javascript", '<a href="javascript:alert(23)">@@</a>'),
    ("href-mixed-case", '<a href="JaVaScRiPt:alert(24)">@@</a>'),
    ("href-decimal-ref", '<a href="&#106;avascript:alert(25)">@@</a>'),
    ("href-hex-ref", '<a href="&#x6A;avascript:alert(26)">@@</a>'),
    ("href-padded-refs", '<a href="&#0000106&#0000097vascript:alert(27)">@@</a>'),
    ("href-tab-ref", '<a href="jav&#x09;ascript:alert(28)">@@</a>'),
    ("href-raw-tab", '<a href="jav\tascript:alert(29)">@@</a>'),
    ("href-newline-ref", '<a href="java&#10;script:alert(30)">@@</a>'),
    ("href-leading-controls", '<a href=" &#14; &#1;javascript:alert(31)">@@</a>'),
    ("href-colon-entity", '<a href="javascript&colon;alert(32)">@@</a>'),
    ("href-tab-entity", '<a href="java&Tab;script:alert(33)">@@</a>'),
    ("href-newline-entity", '<a href="javascript&NewLine;:alert(34)">@@</a>'),
    ("href-every-trick", '<a href=" &#x20;J&#x0D;av&#9;a&#X53;cript&#58;alert(35)">@@</a>'),
    ("href-vbscript", '<a href="vbscript:msgbox(36)">@@</a>'),
    ("href-vbscript-case", '<a href="VbScRiPt:MsgBox(37)">@@</a>'),
    ("href-data-base64", '<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgzMyk8L3NjcmlwdD4=">@@</a>'),
    ("href-data-upper", '<a href="DATA:text/html,<script>alert(39)</script>">@@</a>'),
    ("href-unknown-scheme", '<a href="feed:javascript:alert(40)">@@</a>'),
    ("img-src-javascript", '<img src="javascript:alert(41)">@@'),
    ("img-src-data-svg", '<img src="data:image/svg+xml,<svg onload=alert(42)>">@@'),
    ("img-src-mailto", '<img src="mailto:pics@example.org">@@'),
    (
        "srcset-javascript",
        '<img src="https://img.example/a.png" srcset="javascript:alert(44) 1x, https://img.example/b.png 2x">@@',
    ),
    ("srcset-data", '<img srcset="data:image/svg+xml,x 2x">@@'),
    (
        "picture-srcset",
        '<picture><source srcset="javascript:alert(46)"><img src="https://img.example/c.png"></picture>@@',
    ),
    ("cite-javascript", '<blockquote cite="javascript:alert(47)">@@</blockquote>'),
    ("poster-javascript", '<video poster="javascript:alert(48)"></video>@@'),
    ("background-javascript", '<table background="javascript:alert(49)"><tr><td>@@</td></tr></table>'),
    # Forms, base, meta refresh, frames, plugins.
    ("formaction-button", '<form><button formaction="javascript:alert(50)">@@</button></form>'),
    ("formaction-input", "<input type=image formaction=javascript:alert(51)>@@"),
    ("form-action", '<form action="javascript:alert(52)"><input type=submit></form>@@'),
    ("isindex-action", '<isindex action="javascript:alert(53)" type=image>@@'),
    ("base-href", '<base href="https://evil.example/">@@'),
    ("base-javascript", '<base href="javascript:/a/-alert(55)///"><a href="../x">@@</a>'),
    ("meta-refresh", '<meta http-equiv="refresh" content="0;url=javascript:alert(56)">@@'),
    ("meta-refresh-data", '<meta http-equiv="Refresh" content="0; URL=data:text/html,<script>alert(57)</script>">@@'),
    ("meta-charset-utf7", '<meta charset="utf-7">+ADw-script+AD4-alert(58)+ADw-/script+AD4-@@'),
    ("iframe-srcdoc", '<iframe srcdoc="&lt;script&gt;alert(59)&lt;/script&gt;"></iframe>@@'),
    ("iframe-javascript", '<iframe src="javascript:alert(60)"></iframe>@@'),
    ("frameset", '<frameset><frame src="javascript:alert(61)"></frameset>@@'),
    ("object-data", '<object data="javascript:alert(62)"></object>@@'),
    ("object-param", '<object><param name="src" value="javascript:alert(63)"></object>@@'),
    ("embed-javascript", '<embed src="javascript:alert(64)">@@'),
    ("embed-svg", '<embed src="https://evil.example/x.svg" type="image/svg+xml">@@'),
    # SVG and MathML, including namespace-confusion mutations.
    ("svg-script", "<svg><script>alert(66)</script></svg>@@"),
    ("svg-onload", "<svg onload=alert(67)>@@"),
    ("svg-xlink-href", '<svg><a xlink:href="javascript:alert(68)"><text x="0" y="20">@@</text></a></svg>'),
    (
        "svg-animate-href",
        '<svg><animate attributeName="href" values="javascript:alert(69)"/><a><text>@@</text></a></svg>',
    ),
    ("svg-set-handler", '<svg><set attributeName="onmouseover" to="alert(70)"/><text>@@</text></svg>'),
    ("svg-style-breakout", "<svg><style><img src=x onerror=alert(71)></style></svg>@@"),
    (
        "svg-foreignobject",
        '<svg><foreignObject><iframe srcdoc="<script>alert(72)</script>"></iframe></foreignObject></svg>@@',
    ),
    ("svg-cdata", "<svg><![CDATA[><img src=x onerror=alert(73)>]]></svg>@@"),
    ("math-mglyph-style", "@@<math><mtext><table><mglyph><style><img src=x onerror=alert(74)>"),
    ("math-href", '<math href="javascript:alert(75)">@@</math>'),
    ("math-maction", '<math><maction actiontype="statusline" xlink:href="javascript:alert(76)">@@</maction></math>'),
    (
        "form-math-mglyph",
        "@@<form><math><mtext></form><form><mglyph><svg><mtext><style>"
        '<path id="</style><img src=x onerror=alert(77)>">',
    ),
    ("svg-p-style", '@@<svg></p><style><a id="</style><img src=x onerror=alert(78)>">'),
    # noscript, template and raw-text tricks.
    ("noscript-title", '<noscript><p title="</noscript><img src=x onerror=alert(79)>">@@</p></noscript>'),
    ("noembed-title", '<noembed><p title="</noembed><img src=x onerror=alert(80)>">@@</p></noembed>'),
    ("template-script", "<template><script>alert(81)</script><img src=x onerror=alert(81)></template>@@"),
    ("textarea-rcdata", "<textarea><img src=x onerror=alert(82)></textarea>@@"),
    ("title-rcdata", "<title><img src=x onerror=alert(83)></title>@@"),
    ("xmp-rawtext", "<xmp><img src=x onerror=alert(84)></xmp>@@"),
    # Comment and CDATA breaking.
    ("comment-bang-close", "<!-- x --!><img src=x onerror=alert(85)>@@"),
    ("comment-empty-close", "<!--><img src=x onerror=alert(86)>-->@@"),
    ("cdata-in-html", "<![CDATA[ ]]><img src=x onerror=alert(87)>]]>@@"),
    ("processing-instruction", '<?xml-stylesheet href="javascript:alert(88)"?>@@'),
    # CSS.
    ("style-element-url", '<style>body{background:url("javascript:alert(89)")}</style>@@'),
    ("style-import", "<style>@import 'https://evil.example/x.css';</style>@@"),
    ("style-attr-expression", '<div style="width: expression(alert(91))">@@</div>'),
    ("style-attr-url", '<p style="background-image:url(javascript:alert(92))">@@</p>'),
    ("style-attr-escaped", '<p style="background:u\\rl(ja\\vascript:alert(93))">@@</p>'),
    ("link-stylesheet", '<link rel="stylesheet" href="https://evil.example/x.css">@@'),
    ("link-import", '<link rel=import href="data:text/html,<script>alert(95)</script>">@@'),
    ("mailto-ok", '<a href="mailto:someone@example.org?subject=%3Cscript%3E">@@</a>'),
]

MARKUP = [Payload(id, text) for id, text in _MARKUP]

#: Payloads harmless exactly as written (the battery checks that too): they attack a sanitizer
#: or template that re-serializes, joins the pieces a filter left, decodes twice, or turns raw
#: text back into markup. Every other payload is active when published unsanitized.
INERT_AS_WRITTEN = {
    "script-split",
    "attr-break-title",
    "attr-break-alt",
    "escaped-markup",
    "title-rcdata",
    "xmp-rawtext",
    "processing-instruction",
    "mailto-ok",  # markup
    "quote-break-single",
    "javascript-in-query",  # URLs, inside a double-quoted attribute
}

_URLS = [
    ("javascript", "javascript:alert(1)"),
    ("javascript-upper", "JAVASCRIPT:alert(2)"),
    ("javascript-comment-newline", "javascript://%0Aalert(3)"),
    ("xml-decimal-ref", "&#106;avascript:alert(4)"),
    ("xml-hex-ref", "&#x6A;avascript:alert(5)"),
    ("xml-tab-ref", "jav&#x09;ascript:alert(6)"),
    ("xml-newline-ref", "java&#10;script:alert(7)"),
    ("html-colon-entity", "javascript&colon;alert(8)"),
    ("html-entity-text", "&amp;#106;avascript:alert(9)"),
    ("leading-space", "  javascript:alert(10)"),
    ("leading-control-ref", "&#x1;&#x2;javascript:alert(11)"),
    ("embedded-tab", "jav\tascript:alert(12)"),
    ("vbscript", "vbscript:msgbox(13)"),
    ("data-html", "data:text/html;base64,PHNjcmlwdD5hbGVydCgzMyk8L3NjcmlwdD4="),
    ("data-upper", "DATA:text/html,x"),
    ("feed-scheme", "feed:javascript:alert(16)"),
    ("mailto", "mailto:someone@example.org"),
    ("file", "file:///etc/passwd"),
    ("protocol-relative", "//evil.example/x"),
    ("quote-break-double", 'https://ok.example/x"onmouseover="alert(20)'),
    ("quote-break-single", "https://ok.example/x'onmouseover='alert(21)"),
    ("tag-break", 'https://ok.example/"&gt;&lt;script&gt;alert(22)&lt;/script&gt;'),
    ("relative-path", "../../posts/23"),
    ("nbsp-javascript", "\u00a0javascript:alert(24)"),
    ("javascript-in-query", "https://ok.example/?next=javascript:alert(25)"),
]

URLS = [Payload(id, text) for id, text in _URLS]
