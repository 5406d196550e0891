"""selection: five newest per feed, merge, sort; site health; last known good in a real build."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pytest_httpserver import HTTPServer

from syndicator import urls
from syndicator.configtypes import Site
from syndicator.feedtypes import Entry, StoredEntry
from syndicator.model import SourceState
from syndicator.site import selection
from syndicator.site.selection import select_entries, site_statuses

from .conftest import NOW, build, entry_titles, post, rss, troubles, write_config

A = Site("Alpha", "https://a.example.org/feed", "https://a.example.org/")
B = Site("Beta", "https://b.example.org/feed", "https://b.example.org/")
C = Site("Gamma", "https://c.example.org/feed", "https://c.example.org/")


def stored(site: Site, name: str, date: datetime | None, first_seen: datetime = NOW) -> StoredEntry:
    host = site.link or "https://x.example.org/"
    return StoredEntry(site.feed, Entry(id=f"{host}{name}", title=name, link=f"{host}{name}", date=date), first_seen)


def days_ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


def titles(selected: list) -> list[str]:  # type: ignore[type-arg]
    return [s.entry.title for s in selected]


def test_each_feed_contributes_its_five_newest_then_all_are_merged_newest_first() -> None:
    busy = [stored(A, f"a{n}", days_ago(n)) for n in (3, 1, 8, 2, 5, 4, 7, 6)]  # not in date order
    quiet = [stored(B, "b-old", days_ago(30)), stored(B, "b-mid", days_ago(4.5))]
    selected = select_entries([A, B], {A.feed: busy, B.feed: quiet}, items_per_feed=5)
    assert titles(selected) == ["a1", "a2", "a3", "a4", "b-mid", "a5", "b-old"]
    assert [s.site for s in selected] == [A, A, A, A, B, A, B]


@pytest.mark.parametrize("cap", [1, 2, 5, 20])
def test_items_per_feed_is_the_cap(cap: int) -> None:
    entries = [stored(A, f"a{n}", days_ago(n)) for n in range(1, 11)]
    selected = select_entries([A], {A.feed: entries}, items_per_feed=cap)
    assert titles(selected) == [f"a{n}" for n in range(1, min(cap, 10) + 1)]


def test_undated_entries_sort_by_first_seen() -> None:
    entries = [
        stored(A, "dated", days_ago(2)),
        stored(A, "undated-recent", None, first_seen=days_ago(1)),
        stored(A, "undated-old", None, first_seen=days_ago(10)),
    ]
    assert titles(select_entries([A], {A.feed: entries}, 5)) == ["undated-recent", "dated", "undated-old"]


def test_ties_are_broken_by_site_order_then_feed_position() -> None:
    same = days_ago(1)
    snapshots = {
        A.feed: [stored(A, "a-first", same), stored(A, "a-second", same)],
        B.feed: [stored(B, "b-first", same)],
        C.feed: [stored(C, "c-newer", days_ago(0.5))],
    }
    order = [B, A, C]
    expected = ["c-newer", "b-first", "a-first", "a-second"]
    assert titles(select_entries(order, snapshots, 5)) == expected
    reversed_snapshots = dict(reversed(list(snapshots.items())))
    assert titles(select_entries(order, reversed_snapshots, 5)) == expected


def test_ties_at_the_cap_keep_the_first_in_the_feed() -> None:
    same = days_ago(1)
    entries = [stored(A, f"a{n}", same) for n in range(7)]
    assert titles(select_entries([A], {A.feed: entries}, 5)) == ["a0", "a1", "a2", "a3", "a4"]


def test_a_feed_named_by_two_sites_counts_once_for_the_first() -> None:
    twin = Site("Alpha again", A.feed, "https://mirror.example.org/")
    entries = [stored(A, f"a{n}", days_ago(n)) for n in range(1, 8)]
    selected = select_entries([A, twin], {A.feed: entries}, 5)
    assert len(selected) == 5
    assert {s.site for s in selected} == {A}


def test_the_docs_say_which_site_a_shared_feed_is_credited_to() -> None:
    configuration = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert "Several sites may name the same feed" in configuration
    assert "credited to the first of those sites in sites.yaml" in " ".join(configuration.split())


def test_a_post_reached_through_two_feeds_shows_once() -> None:
    post_a = stored(A, "shared", days_ago(1))
    post_b = StoredEntry(
        B.feed, Entry(id="other-id", title="shared (syndicated)", link=post_a.entry.link, date=days_ago(1)), NOW
    )
    selected = select_entries([B, A], {A.feed: [post_a], B.feed: [post_b]}, 5)
    assert len(selected) == 1
    assert selected[0].site == A  # credited to the site whose home page is on the post's host


@pytest.mark.parametrize(
    ("shared_id", "shown"),
    [
        pytest.param("1", 2, id="feed-local-ids-are-not-shared"),
        pytest.param("tag:example.org,2026:post-1", 1, id="uri-ids-are-global"),
    ],
)
def test_posts_of_two_sites_merge_only_on_a_global_id(shared_id: str, shown: int) -> None:
    post_a = StoredEntry(A.feed, Entry(id=shared_id, title="A1", link="https://a.example.org/1", date=NOW), NOW)
    post_b = StoredEntry(B.feed, Entry(id=shared_id, title="B1", link="https://b.example.org/1", date=NOW), NOW)
    assert len(select_entries([A, B], {A.feed: [post_a], B.feed: [post_b]}, 5)) == shown


def test_no_snapshots_select_nothing() -> None:
    assert select_entries([A, B], {}, 5) == []


def source(**fields: object) -> SourceState:
    return SourceState(url=A.feed, fetch_url=A.feed, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("state", "stale"),
    [
        pytest.param(None, False, id="never-attempted"),
        pytest.param(source(last_attempt=NOW, last_success=NOW), False, id="fresh"),
        pytest.param(
            source(last_attempt=NOW, last_success=days_ago(3.9), error_kind="timeout"),
            False,
            id="failing-for-less-than-stale-after",
        ),
        pytest.param(
            source(last_attempt=NOW, last_success=days_ago(4.1), error_kind="timeout"),
            True,
            id="failing-for-more-than-stale-after",
        ),
        pytest.param(source(last_attempt=NOW, error_kind="http_404"), True, id="never-worked"),
    ],
)
def test_site_is_stale_after_stale_after_without_success(state: SourceState | None, stale: bool) -> None:
    states = {A.feed: state} if state else {}
    (status,) = site_statuses([A], states, {A.feed: 1}, NOW, stale_after=4 * 86400)
    assert status.stale is stale
    assert status.entries == 1


# --- through the build -----------------------------------------------------------


def test_build_caps_each_feed_and_merges(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/busy.xml").respond_with_data(rss(*[post(n, day=n) for n in range(1, 9)]))
    server.expect_request("/quiet.xml").respond_with_data(
        rss(post(20, day=2, host="quiet.example.org"), post(21, day=7, host="quiet.example.org"))
    )
    config = write_config(
        tmp_path,
        [
            {"name": "Busy", "feed": server.url_for("/busy.xml")},
            {"name": "Quiet", "feed": server.url_for("/quiet.xml")},
        ],
        new_feed_items="all",  # each feed's items_per_feed newest, from the first build on
    )
    result = build(config)
    assert result.exit_code == 0, result.output
    assert "7 entries written" in result.stdout
    assert entry_titles(tmp_path / "public" / "feed.xml") == [
        "Post 8",
        "Post 21",
        "Post 7",
        "Post 6",
        "Post 5",
        "Post 4",
        "Post 20",
    ]  # 21 is day 7 at 10:21


def test_failed_feed_falls_back_to_its_last_good_copy_with_a_warning(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_oneshot_request("/feed.xml").respond_with_data(rss(post(1), post(2, day=2)))
    server.expect_request("/feed.xml").respond_with_data("down for maintenance", status=503)
    config = write_config(
        tmp_path, [{"name": "Flaky Blog", "feed": server.url_for("/feed.xml")}], retries=0
    )  # no 1 s retry pause
    assert build(config, now="2026-11-28T12:00:00Z").exit_code == 0
    result = build(config, "--force", now="2026-11-30T18:00:00Z")
    assert result.exit_code == 0, result.output
    assert "1 failed), 0 skipped, 1 stale copy used, 2 entries written" in result.stdout
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert "'Flaky Blog'" in warnings[0]
    assert "HTTP 503" in warnings[0]
    assert "2.2 days" in warnings[0]  # the copy's age: 28th 12:00 to 30th 18:00
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 2", "Post 1"]


def test_a_failure_is_reported_once_not_on_every_later_build(server: HTTPServer, tmp_path: Path) -> None:
    """The build that sees the failure warns; later builds that do not request
    the site (it is backing off) keep using the copy without repeating it."""
    server.expect_oneshot_request("/feed.xml").respond_with_data(rss(post(1)))
    server.expect_request("/feed.xml").respond_with_data("down", status=503)
    config = write_config(tmp_path, [{"name": "Flaky Blog", "feed": server.url_for("/feed.xml")}], retries=0)
    assert build(config, now="2026-11-30T10:00:00Z").exit_code == 0
    failing = build(config, now="2026-12-01T12:00:00Z")  # due again within max_interval
    assert "warning: site 'Flaky Blog' started failing: server error (5xx) (HTTP 503)" in failing.stderr
    later = build(config, now="2026-12-01T12:01:00Z")  # backing off: not requested
    assert later.exit_code == 0, later.output
    assert "0 requested" in later.stdout and "1 stale copy used" in later.stdout
    assert troubles(later.stderr) == []
    verbose = build(config, "-v", now="2026-12-01T12:01:00Z")
    assert "info: site 'Flaky Blog' failed (HTTP 503)" in verbose.stderr


def test_a_gone_feed_says_what_to_do_and_then_stays_quiet(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/good.xml").respond_with_data(rss(post(1)))
    server.expect_request("/gone.xml").respond_with_data("gone", status=410)
    config = write_config(
        tmp_path,
        [{"name": "Good", "feed": server.url_for("/good.xml")}, {"name": "Gone", "feed": server.url_for("/gone.xml")}],
    )
    first = build(config)
    assert "'Gone'" in first.stderr and "remove or edit its entry in sites.yaml" in first.stderr
    assert troubles(build(config, now="2026-12-07T12:00:00Z").stderr) == []  # on hold: not requested, not repeated


def test_an_empty_build_blames_the_network_only_when_every_request_failed_to_connect(
    server: HTTPServer, tmp_path: Path
) -> None:
    server.expect_request("/typo.xml").respond_with_data("not found", status=404)
    config = write_config(tmp_path, [{"name": "Typo", "feed": server.url_for("/typo.xml")}])
    result = build(config)
    assert result.exit_code == 3
    assert "nothing was published" in result.stderr
    assert "network" not in result.stderr


def test_feed_that_never_worked_contributes_nothing_and_is_an_error(server: HTTPServer, tmp_path: Path) -> None:
    server.expect_request("/good.xml").respond_with_data(rss(post(1)))
    server.expect_request("/typo.xml").respond_with_data("not found", status=404)
    config = write_config(
        tmp_path,
        [{"name": "Good", "feed": server.url_for("/good.xml")}, {"name": "Typo", "feed": server.url_for("/typo.xml")}],
    )
    result = build(config)
    assert result.exit_code == 0, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("syndicator: error:")]
    assert len(errors) == 1
    assert "'Typo'" in errors[0] and "never" in errors[0] and "HTTP 404" in errors[0]
    assert "0 stale copies used" in result.stdout
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Post 1"]


# --- the same-post rule merges copies from different sources only -------------------


def episode(site: Site, n: int, link: str) -> StoredEntry:
    return StoredEntry(site.feed, Entry(id=f"ep{n}", title=f"Episode {n}", link=link, date=days_ago(n)), NOW)


def test_posts_of_one_feed_sharing_a_link_are_all_kept() -> None:
    show = "https://a.example.org/show"
    episodes = [episode(A, n, show) for n in (1, 2, 3)]
    assert titles(select_entries([A], {A.feed: episodes}, 5)) == ["Episode 1", "Episode 2", "Episode 3"]


def test_a_podcast_carried_by_two_feeds_shows_each_episode_once_for_its_owner() -> None:
    show = "https://a.example.org/show"
    mirror = Site("Mirror", "https://mirror.example.net/feed", "https://mirror.example.net/")

    def tagged(site: Site, n: int) -> StoredEntry:
        return StoredEntry(
            site.feed,
            Entry(id=f"tag:a.example.org,2026:ep{n}", title=f"{site.name} {n}", link=show, date=days_ago(n)),
            NOW,
        )

    snapshots = {A.feed: [tagged(A, n) for n in (1, 2, 3)], mirror.feed: [tagged(mirror, n) for n in (1, 2, 3)]}
    selected = select_entries([mirror, A], snapshots, 5)
    assert titles(selected) == ["Alpha 1", "Alpha 2", "Alpha 3"]  # the shared link names no one episode; the ids do


def test_a_link_shared_inside_one_feed_does_not_name_a_post_of_another_feed() -> None:
    show = "https://a.example.org/show"
    announcement = StoredEntry(
        B.feed, Entry(id="https://b.example.org/new-show", title="Listen to A's show", link=show, date=days_ago(4)), NOW
    )
    selected = select_entries([A, B], {A.feed: [episode(A, n, show) for n in (1, 2, 3)], B.feed: [announcement]}, 5)
    assert titles(selected) == ["Episode 1", "Episode 2", "Episode 3", "Listen to A's show"]


def test_a_feed_whose_items_link_to_one_index_page_shows_them_all(server: HTTPServer, tmp_path: Path) -> None:
    items = [
        {
            "title": f"Episode {n}",
            "link": "https://pod.example.org/show",
            'guid isPermaLink="false"': f"ep{n}",
            "pubDate": f"Mon, {n + 8:02d} Nov 2026 10:00:00 GMT",
        }
        for n in (3, 2, 1)
    ]
    server.expect_request("/pod.xml").respond_with_data(rss(*items))
    config = write_config(tmp_path, [{"name": "Podcast", "feed": server.url_for("/pod.xml")}], sites_page_details=True)
    result = build(config)
    assert result.exit_code == 0, result.output
    assert "3 entries written" in result.stdout
    assert entry_titles(tmp_path / "public" / "feed.xml") == ["Episode 3", "Episode 2", "Episode 1"]
    assert '<td data-label="Entries">3</td>' in (tmp_path / "public" / "sites.html").read_text()


@settings(max_examples=600)
@given(
    st.one_of(
        st.from_regex(r"\A[a-zA-Z][a-zA-Z0-9+.-]{0,5}:[\x21-\x7e]{0,20}\Z"),
        st.from_regex(r"\A(https?|tag|urn):(//)?[\[\]a-z0-9.:%@-]{0,12}(/[\x21-\x7e]{0,8})?\Z"),
    )
)
def test_the_shortcuts_for_post_keys_of_ids_give_what_urllib_gives(entry_id: str) -> None:
    """An id is a post key when it is a global URI that urllib can split; the shortcuts skip urllib."""
    usable = selection._GLOBAL_ID.match(entry_id) is not None and urls.split(entry_id) is not None
    assert selection._keys(None, entry_id) == (["id:" + entry_id] if usable else [])
