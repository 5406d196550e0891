"""Leases of many workers on one PostgreSQL state (syndicator/state/claims.py, duequeue.py), on a real throwaway server.

Every test gets a fresh database (tests/postgres.py; skipped, saying why,
where no server is installed). Clocks are the ``now`` each call is given;
nothing here measures time. The concurrent tests run real threads, each
with its own connection, started together at a barrier; every wait is bounded.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from syndicator.errors import StoreError
from syndicator.model import SourceState
from syndicator.poll.path import save
from syndicator.poll.schedule import due_sources
from syndicator.state import pgstate
from syndicator.state.claims import Claim, claim, extend, held, release
from syndicator.state.duequeue import register
from syndicator.state.schema import SCHEMA_VERSION
from syndicator.state.store import Store

from .postgres import pg_database, postgres_url  # noqa: F401 - fixtures

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LEASE = 60.0
#: Seconds any thread of a test may wait at a barrier or to end.
WAIT = 60.0


@pytest.fixture
def store(pg_database: str) -> Iterator[Store]:
    with Store.connect(pg_database) as opened:
        yield opened


def feed(n: int, host: str) -> str:
    return f"https://{host}/feed{n:03d}.xml"


def set_next(db: Any, url: str, next_attempt: str | None, failures: int = 0, **columns: str) -> None:
    """Write a source's next attempt as the store keeps it: ISO 8601 text (with or without microseconds)."""
    db.execute("UPDATE sources SET next_attempt = ?, failures = ? WHERE url = ?", (next_attempt, failures, url))
    for name, value in columns.items():
        db.execute(f"UPDATE sources SET {name} = ? WHERE url = ?", (value, url))  # noqa: S608 - test's names


def leases(db: Any) -> dict[str, tuple[str, str]]:
    """{source: (host, worker)} of every lease row, live or dead."""
    return {source: (host, worker) for source, host, worker in db.execute("SELECT source, host, worker FROM leases")}


def sources(claims: list[Claim]) -> list[str]:
    return [c.source for c in claims]


# --- due, order, limit ---------------------------------------------------------------------------------------------


def test_due_sources_come_never_attempted_first_then_healthy_then_failing_most_overdue_first(store: Store) -> None:
    db = store._db
    urls = {name: f"https://{name}.example.org/feed.xml" for name in "abcdefgh"}
    assert register(store, [(url, f"{name}.example.org") for name, url in urls.items()]) == 8
    set_next(db, urls["b"], "2026-03-01T11:00:00+00:00")  # an hour overdue, no microseconds
    set_next(db, urls["c"], "2026-03-01T11:50:00.123456+00:00")  # ten minutes overdue, microseconds
    set_next(db, urls["d"], "2026-03-01T13:00:00+00:00")  # not due for an hour
    set_next(db, urls["e"], "2026-03-01T10:00:00+00:00", failures=3)  # failing: after the healthy ones
    set_next(db, urls["f"], NOW.isoformat())  # due exactly now
    set_next(db, urls["g"], "2026-03-01T12:00:00.000001+00:00")  # a microsecond after now: not due
    # a never attempted source: a (no next attempt); h too
    first = claim(store, "w1", NOW, limit=3, lease_seconds=LEASE, per_host=5)
    rest = claim(store, "w1", NOW, limit=10, lease_seconds=LEASE, per_host=5)
    order = [urls[n] for n in "ah"] + [urls[n] for n in "bcf"] + [urls["e"]]
    assert sources(first) == order[:3]  # the limit is respected, in order
    assert sources(rest) == order[3:]
    # the same order as one build's schedule.due_sources over the stored states (URLs in sorted order)
    assert sources(first + rest) == due_sources(sorted(urls.values()), store.states(), NOW)
    assert all(c.worker == "w1" and c.expires == NOW + timedelta(seconds=LEASE) for c in first + rest)
    assert [c.host for c in first] == ["a.example.org", "h.example.org", "b.example.org"]
    later = claim(store, "w1", NOW + timedelta(seconds=1), limit=10, lease_seconds=LEASE, per_host=5)
    assert sources(later) == [urls["g"]]  # due a second later; d is not due before an hour


def test_a_source_on_hold_is_claimed_only_once_its_hold_is_lifted(store: Store) -> None:
    db = store._db
    gone, old, plain = (f"https://{n}.example.org/feed.xml" for n in ("gone", "old", "plain"))
    register(store, [(gone, "gone.example.org"), (old, "old.example.org"), (plain, "plain.example.org")])
    set_next(db, gone, None, failures=1, hold="fp1", error_kind="http_410")
    set_next(db, old, None, failures=1, hold="fp2", error_kind="http_401")  # an older version's hold: not honoured
    claims = claim(store, "w", NOW, limit=10, lease_seconds=LEASE, per_host=1)
    assert sorted(sources(claims)) == [old, plain]
    assert sources(claims) == due_sources([gone, old, plain], store.states(), NOW, {gone: "fp1", old: "fp2"})
    assert sources(claim(store, "w", NOW, limit=10, lease_seconds=LEASE, per_host=1, lifted=[gone])) == [gone]


def test_arguments_are_checked(store: Store) -> None:
    db = store._db
    register(store, [(feed(1, "a.example"), "a.example")])
    with pytest.raises(ValueError, match="naive"):
        claim(store, "w", NOW.replace(tzinfo=None), limit=1, lease_seconds=LEASE, per_host=1)
    with pytest.raises(ValueError, match="per_host"):
        claim(store, "w", NOW, limit=1, lease_seconds=LEASE, per_host=0)
    assert claim(store, "w", NOW, limit=0, lease_seconds=LEASE, per_host=1) == []
    assert leases(db) == {}


# --- per host -----------------------------------------------------------------------------------------------------


def test_per_host_counts_every_workers_live_leases(store: Store) -> None:
    db = store._db
    register(
        store,
        [(feed(n, "big.example"), "big.example") for n in range(5)] + [(feed(9, "small.example"), "small.example")],
    )
    a = claim(store, "A", NOW, limit=10, lease_seconds=LEASE, per_host=2)
    assert sorted(c.host for c in a) == ["big.example", "big.example", "small.example"]
    assert claim(store, "B", NOW, limit=10, lease_seconds=LEASE, per_host=2) == []  # big.example is full
    assert release(store, a[0])
    b = claim(store, "B", NOW, limit=10, lease_seconds=LEASE, per_host=2)
    assert [(c.host, c.worker) for c in b] == [("big.example", "B")]
    assert Counter(host for host, _ in leases(db).values())["big.example"] == 2


@pytest.mark.parametrize("workers", [2, 4])
def test_concurrent_workers_never_share_a_source_nor_exceed_per_host(
    pg_database: str,
    workers: int,
) -> None:
    per_host, limit, hosts = 2, 6, [f"host{i}.example" for i in range(5)]
    urls = {feed(n, hosts[n % 5]): hosts[n % 5] for n in range(200)}
    capacity = per_host * len(hosts)  # what one round can claim in all: less than the workers ask for
    rounds = len(urls) // capacity
    with Store.connect(pg_database) as setup:
        assert register(setup, urls.items()) == 200
    stores = [Store.connect(pg_database) for _ in range(workers)]
    barrier = threading.Barrier(workers + 1, timeout=WAIT)  # the workers and this thread, which checks
    results: list[list[list[Claim]]] = [[[] for _ in range(workers)] for _ in range(rounds)]
    released: list[bool] = []
    errors: list[BaseException] = []
    stop = threading.Event()
    busiest: Counter[str] = Counter()  # the most live leases of each host any look at the table saw

    def work(index: int) -> None:
        store = stores[index]
        try:
            for r in range(rounds):
                now = NOW + timedelta(seconds=r)
                barrier.wait()  # all claim at once
                results[r][index] = claim(store, f"w{index}", now, limit=limit, lease_seconds=600.0, per_host=per_host)
                barrier.wait()  # claimed: the checker looks
                barrier.wait()  # checked: store the observations, then release
                for c in results[r][index]:
                    save(
                        store,
                        SourceState(
                            url=c.source, fetch_url=c.source, last_attempt=now, next_attempt=now + timedelta(days=1)
                        ),
                        None,
                        now,
                    )
                    released.append(release(store, c))
        except threading.BrokenBarrierError:
            pass
        except BaseException as error:  # reported by the main thread
            errors.append(error)
            barrier.abort()

    def watch(url: str) -> None:
        with Store.connect(url) as store:
            while not stop.is_set():
                for host, n in store._db.execute(
                    "SELECT host, COUNT(*) FROM leases WHERE expires > ? GROUP BY host", (NOW,)
                ):
                    busiest[host] = max(busiest[host], n)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(workers)]
    watcher = threading.Thread(target=watch, args=(pg_database,), daemon=True)
    for thread in [*threads, watcher]:
        thread.start()
    try:
        with Store.connect(pg_database) as checker:
            for r in range(rounds):
                barrier.wait()
                barrier.wait()
                claimed = [c for worker in results[r] for c in worker]
                assert len(claimed) == len(set(sources(claimed))) == capacity, f"round {r}"
                assert max(Counter(c.host for c in claimed).values()) == per_host, f"round {r}"
                table = leases(checker._db)
                assert table == {c.source: (c.host, c.worker) for c in claimed}, f"round {r}"
                assert max(Counter(host for host, _ in table.values()).values()) == per_host, f"round {r}"
                barrier.wait()
    except BaseException:
        barrier.abort()  # releases the workers a failed check left waiting (not after the last round: a
        raise  # worker not yet woken from the last wait would see the abort)
    finally:
        for thread in threads:
            thread.join(WAIT)
        stop.set()
        watcher.join(WAIT)
        for opened in stores:
            opened.close()
    assert not errors, errors
    assert not any(thread.is_alive() for thread in [*threads, watcher])
    every = [c.source for r in results for worker in r for c in worker]
    assert len(every) == len(set(every)) == 200  # each source claimed exactly once over all rounds
    assert released == [True] * 200
    assert set(busiest) == set(hosts) and max(busiest.values()) <= per_host


# --- killed workers, release, extend ------------------------------------------------------------------------------


def test_a_killed_workers_leases_are_taken_over_and_a_live_lease_is_not(store: Store) -> None:
    db = store._db
    register(store, [(feed(n, f"h{n}.example"), f"h{n}.example") for n in range(3)])
    killed = claim(store, "killed", NOW, limit=2, lease_seconds=LEASE, per_host=1)
    alive = claim(store, "alive", NOW, limit=1, lease_seconds=600.0, per_host=1)
    assert len(killed) == 2 and len(alive) == 1
    assert claim(store, "B", NOW + timedelta(seconds=LEASE - 1), limit=10, lease_seconds=LEASE, per_host=1) == []
    later = NOW + timedelta(seconds=LEASE)  # expires == now: dead
    taken = claim(store, "B", later, limit=10, lease_seconds=LEASE, per_host=1)
    assert sources(taken) == sources(killed)
    assert {source: c.worker for source, c in held(store, later).items()} == {
        **{c.source: "B" for c in taken},
        alive[0].source: "alive",
    }
    assert not release(store, killed[0])  # the old holder, come back, holds nothing
    assert extend(store, killed[1], NOW + timedelta(seconds=1), LEASE) is None  # even with a clock behind
    assert leases(db)[killed[0].source] == (killed[0].host, "B")


def test_a_dead_lease_ends_at_the_next_claim_even_without_a_taker(store: Store) -> None:
    db = store._db
    register(store, [(feed(1, "a.example"), "a.example")])
    [first] = claim(store, "A", NOW, limit=1, lease_seconds=LEASE, per_host=1)
    set_next(db, first.source, (NOW + timedelta(days=1)).isoformat())  # stored, but not released
    assert claim(store, "B", NOW + timedelta(seconds=LEASE), limit=1, lease_seconds=LEASE, per_host=1) == []
    assert leases(db) == {}  # ended: the late holder cannot renew what claims stopped counting
    assert extend(store, first, NOW + timedelta(seconds=1), LEASE) is None


def test_release_only_by_the_holder(store: Store) -> None:
    db = store._db
    register(store, [(feed(1, "a.example"), "a.example")])
    [mine] = claim(store, "A", NOW, limit=1, lease_seconds=LEASE, per_host=1)
    theirs = Claim(mine.source, mine.host, "B", mine.expires)
    assert not release(store, theirs)
    assert leases(db) == {mine.source: ("a.example", "A")}
    assert release(store, mine)
    assert leases(db) == {}
    assert not release(store, mine)


def test_extend_keeps_a_lease_and_a_lost_lease_cannot_be_extended(store: Store) -> None:
    register(store, [(feed(1, "a.example"), "a.example")])
    [mine] = claim(store, "A", NOW, limit=1, lease_seconds=LEASE, per_host=1)
    renewed = extend(store, mine, NOW + timedelta(seconds=50), LEASE)
    assert renewed == Claim(mine.source, "a.example", "A", NOW + timedelta(seconds=110))
    assert extend(store, Claim(mine.source, mine.host, "B", mine.expires), NOW, LEASE) is None  # not B's
    at_100 = NOW + timedelta(seconds=100)  # the first lease would be dead; the renewed one is not
    assert held(store, at_100) == {mine.source: renewed}
    assert claim(store, "B", at_100, limit=1, lease_seconds=LEASE, per_host=1) == []
    [taken] = claim(store, "B", NOW + timedelta(seconds=110), limit=1, lease_seconds=LEASE, per_host=1)
    assert taken.worker == "B"
    assert extend(store, renewed, NOW + timedelta(seconds=105), LEASE) is None  # lost to B
    assert held(store, NOW + timedelta(seconds=111)) == {mine.source: taken}


# --- host_gap -----------------------------------------------------------------------------------------------------


def test_host_gap_spaces_the_claims_of_one_host(store: Store) -> None:
    db = store._db
    register(store, [(feed(n, "x.example"), "x.example") for n in range(3)] + [(feed(9, "y.example"), "y.example")])
    first = claim(store, "A", NOW, limit=10, lease_seconds=600.0, per_host=5, host_gap=10.0)
    assert sorted(c.host for c in first) == ["x.example", "y.example"]  # one a host: two would be 0 s apart
    assert claim(store, "B", NOW + timedelta(seconds=5), limit=10, lease_seconds=600.0, per_host=5, host_gap=10.0) == []
    assert claim(store, "B", NOW + timedelta(seconds=9.999), limit=10, lease_seconds=600.0, per_host=5) == []
    after = claim(store, "B", NOW + timedelta(seconds=10), limit=10, lease_seconds=600.0, per_host=5, host_gap=10.0)
    assert [c.host for c in after] == ["x.example"]
    next_start = dict(db.execute("SELECT host, next_start FROM hosts").fetchall())
    assert next_start == {"x.example": NOW + timedelta(seconds=20), "y.example": NOW + timedelta(seconds=10)}


# --- register -----------------------------------------------------------------------------------------------------


def test_register_is_idempotent_and_keeps_stored_state(store: Store) -> None:
    db = store._db
    stored = feed(1, "a.example")
    save(
        store,
        SourceState(
            url=stored, fetch_url="https://moved.example/x.xml", failures=2, next_attempt=NOW + timedelta(hours=1)
        ),
        None,
        NOW,
    )
    generation = store.generation()
    pairs = [(stored, "moved.example"), (feed(2, "a.example"), "a.example"), (feed(3, "b.example"), "b.example")]
    assert register(store, pairs) == 2
    assert store.generation() == generation + 1
    assert register(store, pairs) == 0
    assert register(store, reversed(pairs)) == 0
    assert store.generation() == generation + 1
    assert store.count("sources") == 3
    assert db.execute("SELECT COUNT(*) FROM source_hosts").fetchone() == (3,)
    kept = store.states()[stored]
    assert (kept.fetch_url, kept.failures, kept.next_attempt) == (
        "https://moved.example/x.xml",
        2,
        NOW + timedelta(hours=1),
    )
    assert store.states()[feed(2, "a.example")].next_attempt is None  # new: never attempted, so due
    register(store, [(feed(3, "b.example"), "c.example")])  # its fetch URL's host changed
    assert register(store, [(feed(2, "a.example"), "a.example")], prune=True) == 0  # only this one is claimed now
    assert [(c.source, c.host) for c in claim(store, "w", NOW, limit=10, lease_seconds=LEASE, per_host=5)] == [
        (feed(2, "a.example"), "a.example")
    ]
    assert register(store, pairs) == 0
    assert dict(db.execute("SELECT source, host FROM source_hosts").fetchall())[feed(3, "b.example")] == "b.example"


# --- schema -------------------------------------------------------------------------------------------------------


def test_a_state_made_before_the_workers_gets_their_tables(pg_database: str) -> None:
    with Store.connect(pg_database) as first:
        first._db.execute("DROP TABLE leases, hosts, source_hosts")
        first._db.execute("DELETE FROM meta WHERE key = ?", (pgstate.WORKER_VERSION_KEY,))
    with Store.connect(pg_database) as again:
        versions = dict(again._db.execute("SELECT key, value FROM meta").fetchall())
        assert versions["schema_version"] == str(SCHEMA_VERSION)  # the store's version is untouched
        assert versions[pgstate.WORKER_VERSION_KEY] == str(max(pgstate.WORKER_MIGRATIONS))
        assert register(again, [(feed(1, "a.example"), "a.example")]) == 1
        assert len(claim(again, "w", NOW, limit=1, lease_seconds=LEASE, per_host=1)) == 1
        again._db.execute("UPDATE meta SET value = '99' WHERE key = ?", (pgstate.WORKER_VERSION_KEY,))
    with pytest.raises(StoreError, match="newer than this syndicator"):
        Store.connect(pg_database)


def test_a_state_at_the_first_workers_tables_gets_the_due_queue_filled_from_its_sources(pg_database: str) -> None:
    urls = [feed(n, "a.example") for n in range(4)]
    with Store.connect(pg_database) as first:
        db = first._db
        register(first, [(url, "a.example") for url in urls])
        set_next(db, urls[0], "2026-03-01T13:00:00+00:00")  # not due
        set_next(db, urls[1], "2026-03-01T11:00:00+00:00", failures=2)  # failing, due
        set_next(db, urls[2], "2026-03-01T11:30:00+00:00")  # healthy, due
        set_next(db, urls[3], "2026-03-01T10:00:00+00:00", hold="2026-03-01", error_kind="http_410")  # held
        db.execute("DROP TRIGGER sources_queue ON sources")  # back to the workers' tables of version 1
        db.execute("ALTER TABLE source_hosts DROP COLUMN tier, DROP COLUMN due, DROP COLUMN held")
        db.execute("UPDATE meta SET value = '1' WHERE key = ?", (pgstate.WORKER_VERSION_KEY,))
    with Store.connect(pg_database) as again:
        assert sources(claim(again, "w", NOW, limit=10, lease_seconds=LEASE, per_host=5)) == [urls[2], urls[1]]
        set_next(again._db, urls[0], "2026-03-01T11:59:00+00:00")  # the trigger follows the store's writes
        assert sources(claim(again, "w", NOW, limit=10, lease_seconds=LEASE, per_host=5)) == [urls[0]]


def test_claims_read_the_queue_in_pages_past_hosts_without_room(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("syndicator.state.duequeue.PAGE", 3)
    db = store._db
    crowded = [feed(n, "a.example") for n in range(10)]  # the head of the queue: one host
    others = [feed(n, f"h{n}.example") for n in range(10)]
    register(store, [(url, "a.example") for url in crowded] + [(url, url.split("/")[2]) for url in others])
    for n, url in enumerate(crowded + others):
        set_next(db, url, (NOW - timedelta(hours=3) + timedelta(minutes=n)).isoformat())
    first = claim(store, "w1", NOW, limit=4, lease_seconds=LEASE, per_host=2)
    assert sources(first) == crowded[:2] + others[:2]  # a.example's room is 2: the pages go past its others
    second = claim(store, "w2", NOW, limit=7, lease_seconds=LEASE, per_host=2)
    assert sources(second) == others[2:9]  # a.example is full: none of its sources is read or taken
    assert Counter(host for host, _ in leases(db).values())["a.example"] == 2
