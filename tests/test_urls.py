"""urls: the one boundary for untrusted URLs never raises, and keeps good URLs as they were."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from syndicator import urls
from syndicator.values import url_problem

BASE = "https://blog.example.org/posts/"
LONG = "https://example.org/" + "a" * 100_000

#: Values no function may raise on; the unusable ones are listed again below with their results.
HOSTILE: list[Any] = [
    "http://[oops/1",
    "http://[oops",
    "http://[::1",
    "http://[::1x]/",
    "http://[v1.x]/",
    "http://]oops[/",
    "http://a:99999/",
    "http://a:x/",
    "http://a:-1/",
    "http://a:+80/",
    "http://a:٣/",
    "http://a＃b/",
    "",
    " ",
    "\t\n",
    "%",
    "%%",
    "http://a/%",
    "http://%zz/",
    "http://a/?x=%ff",
    "http://a/?x=\ud800",
    "\x00",
    "http://a/\x00b",
    "http://a\x01b/",
    "\x7fhttp://a/",
    "http://bücher.example/",
    "http://xn--/",
    "http://[::1]:8080/feed",
    "[",
    "]",
    "[::1]",
    "//[oops/",
    "///",
    "http:",
    "http://",
    "mailto:",
    "?",
    "#",
    LONG,
    "http://" + "[" * 50_000,
    "a" * 100_000,
    "\ufffe",
    "\U0001f4a5",
    None,
    42,
    b"http://a/",
    ["x"],
]


@pytest.mark.parametrize("value", HOSTILE, ids=lambda v: repr(v)[:40])
def test_no_function_raises(value: Any) -> None:
    urls.split(value)
    urls.scheme(value)
    urls.hostname(value)
    urls.is_web(value)
    urls.absolute(value, BASE)
    urls.join(BASE, value)
    urls.join(value, "/x")
    urls.absolute("/x", value)
    if isinstance(value, str):
        urls.canonical(value)


UNUSABLE = [
    "http://[oops/1",
    "http://[oops",
    "http://[::1",
    "http://]oops[/",
    "http://a:99999/",
    "http://a:x/",
    "http://a:-1/",
    "http://a:+80/",
    "http://a:٣/",
    "http://a＃b/",
    LONG,
    "http://" + "[" * 50_000,
    None,
    42,
    b"http://a/",
]


@pytest.mark.parametrize("value", UNUSABLE, ids=lambda v: repr(v)[:40])
def test_unusable_urls_give_none_or_empty(value: Any) -> None:
    assert urls.split(value) is None
    assert urls.scheme(value) == ""
    assert urls.hostname(value) == ""
    assert urls.is_web(value) is False
    assert urls.absolute(value, BASE) is None
    assert urls.join(BASE, value) is None


@pytest.mark.parametrize(
    ("link", "base", "expected"),
    [
        pytest.param("https://Example.org/A?b=1#c", BASE, "https://Example.org/A?b=1#c", id="absolute-kept-as-is"),
        pytest.param("../about", BASE, "https://blog.example.org/about", id="relative"),
        pytest.param("//cdn.example.net/i.png", BASE, "https://cdn.example.net/i.png", id="scheme-relative"),
        pytest.param("  https://a.example/x \n ", None, "https://a.example/x", id="whitespace-stripped"),
        pytest.param("https://a.example/a\x00b\x1f", None, "https://a.example/ab", id="controls-removed"),
        pytest.param("http://[::1]:8080/feed", None, "http://[::1]:8080/feed", id="ipv6-literal"),
        pytest.param("http://bücher.example/", None, "http://bücher.example/", id="idna-host-as-written"),
        pytest.param("/x", "http://[oops/", None, id="relative-to-unusable-base"),
        pytest.param("https://ok.example/", "http://[oops/", "https://ok.example/", id="absolute-ignores-bad-base"),
        pytest.param("http://[oops/1", BASE, None, id="malformed-ipv6"),
        pytest.param("http://a.example:99999/", BASE, None, id="port-out-of-range"),
        pytest.param("http://a.example:x/", BASE, None, id="port-not-a-number"),
        pytest.param("javascript:alert(1)", BASE, None, id="javascript"),
        pytest.param("mailto:me@example.org", BASE, None, id="mailto"),
        pytest.param("http:///path", BASE, None, id="no-host"),
        pytest.param("   ", BASE, None, id="blank"),
        pytest.param("https://a.example/" + "p" * 7980, None, "https://a.example/" + "p" * 7980, id="at-the-cap"),
        pytest.param("https://a.example/" + "p" * 7983, None, None, id="over-the-cap"),
    ],
)
def test_absolute(link: str, base: str | None, expected: str | None) -> None:
    assert urls.absolute(link, base) == expected


@pytest.mark.parametrize(
    ("base", "ref", "expected"),
    [
        pytest.param(BASE, "img/1.png", "https://blog.example.org/posts/img/1.png", id="relative"),
        pytest.param(BASE, "mailto:me@example.org", "mailto:me@example.org", id="other-scheme-kept"),
        pytest.param(None, "img/1.png", "img/1.png", id="no-base"),
        pytest.param("http://[oops/", "img/1.png", "img/1.png", id="unusable-base-ignored"),
        pytest.param(BASE, "http://[oops/", None, id="unusable-ref"),
    ],
)
def test_join(base: str | None, ref: str, expected: str | None) -> None:
    assert urls.join(base, ref) == expected


@pytest.mark.parametrize(
    ("url", "scheme", "host"),
    [
        ("HTTPS://Blog.Example.ORG:443/x", "https", "blog.example.org"),
        ("http://[2001:DB8::1]:8080/", "http", "2001:db8::1"),
        ("mailto:me@example.org", "mailto", ""),
        ("/relative", "", ""),
        ("http://[oops/1", "", ""),
    ],
)
def test_scheme_and_hostname(url: str, scheme: str, host: str) -> None:
    assert (urls.scheme(url), urls.hostname(url)) == (scheme, host)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://blog.example.org/?x=\ud800&utm_source=a", "http://blog.example.org/?x=%ED%A0%80"),
        ("  http://[oops/1  ", "http://[oops/1"),
        ("http://a.example:99999/p", "http://a.example:99999/p"),
    ],
)
def test_canonical_never_raises_and_keeps_what_it_cannot_read(url: str, expected: str) -> None:
    assert urls.canonical(url) == expected


_PIECES = st.sampled_from(
    [
        "http://",
        "https://",
        "//",
        "[",
        "]",
        "::1",
        ":",
        "@",
        "%",
        "%zz",
        "/",
        "?",
        "#",
        "a.example",
        "xn--",
        "ü",
        "\x00",
        "\t",
        " ",
        "\ud800",
        "＃",
        "99999",
        "..",
        "&utm_x=1",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.one_of(_PIECES, st.text(max_size=4)), max_size=10).map("".join),
    st.sampled_from([BASE, None, "http://[oops/", ""]),
)
def test_any_string_is_safe(text: str, base: str | None) -> None:
    link = urls.absolute(text, base)
    assert link is None or (urls.is_web(link) and urls.split(link) is not None)
    joined = urls.join(base, text)
    assert joined is None or urls.split(joined) is not None
    assert isinstance(urls.canonical(text), str)
    assert isinstance(urls.hostname(text), str) and isinstance(urls.scheme(text), str)


@settings(max_examples=400)
@given(
    url=st.one_of(
        st.from_regex(
            r"\A\s?https?://[a-z0-9.-]{1,12}(:(80|443|0|0?8080|99999|65535|65536))?"
            r"(/[\x21-\x7e ]{0,12})?\s?\Z"
        ),
        st.from_regex(r"\A[hH][tT][tT][pP]s?://[A-Za-z0-9.:-]{0,12}(/[\x00-\x7f]{0,12})?\Z"),
    )
)
def test_the_shortcut_for_plain_links_gives_what_urllib_gives(url: str) -> None:
    fast = urls.canonical(url)
    shortcut = urls._PLAIN
    urls._PLAIN = re.compile(r"(?!)")  # never matches: every URL through urllib
    try:
        assert fast == urls.canonical(url)
    finally:
        urls._PLAIN = shortcut


@settings(max_examples=600)
@given(
    url=st.one_of(
        st.from_regex(
            r"\A[hH][tT][tT][pP][sS]?://[A-Za-z0-9.:\[\]-]{0,12}(/[\x21-\x7e]{0,12})?"
            r"(\?[\x21-\x7e]{0,6})?(#[\x21-\x7e]{0,6})?\Z"
        ),
        st.from_regex(r"\Ahttps?://[a-z0-9.-]{1,12}(:[0-9]{1,6})?(/[\x00-\x7f]{0,12})?([?#;][;?#]?)?\Z"),
    ),
    base=st.sampled_from([BASE, "http://other.example/a/b;c?d#e", None, "", "http://[oops/", "ftp://x/"]),
)
def test_the_shortcut_for_absolute_links_gives_what_urllib_gives(url: str, base: str | None) -> None:
    fast = (urls.join(base, url), urls.absolute(url, base), urls.scheme(url), url_problem(url))
    shortcut = urls._PLAIN_WEB
    urls._PLAIN_WEB = re.compile(r"(?!)")  # never matches: every URL through urllib
    try:
        assert fast == (urls.join(base, url), urls.absolute(url, base), urls.scheme(url), url_problem(url))
    finally:
        urls._PLAIN_WEB = shortcut


@pytest.mark.parametrize(
    ("link", "expected"),
    [
        pytest.param("http://h.example/ a b", "http://h.example/%20a%20b", id="spaces-in-the-path"),
        pytest.param(
            "http://h.example/p?x=a b#f g", "http://h.example/p?x=a%20b#f%20g", id="spaces-in-query-and-fragment"
        ),
        pytest.param("http://h.example/very/long\n/path", "http://h.example/very/long/path", id="a-wrapped-link"),
        pytest.param("/a b", "https://blog.example.org/a%20b", id="a-relative-link"),
        pytest.param("https://ex ample.com/", None, id="a-space-in-the-host"),
        pytest.param("//ex ample.com/x", None, id="a-space-in-a-scheme-relative-host"),
    ],
)
def test_white_space_inside_a_link_is_never_published(link: str, expected: str | None) -> None:
    assert urls.absolute(link, BASE) == expected
