"""Freshness against cost of syndicator's real schedule code, in-process, with a fake clock.

The population and the accounting are those of the freshness tool
(``../shared/tools/freshness/politesim.py``: feeds drawn from the real
corpus feeds' posting histories, builds every 15 minutes, documents of the
20 newest posts); each check goes through syndicator's own
:func:`syndicator.poll.habits.learn`, :func:`syndicator.poll.intervals.plan` and
:func:`syndicator.poll.jitter.jitter`, with no HTTP. It prints the freshness
tool's table for syndicator beside fixed polling and the oracle, and one
ok/FAIL line per target, so a change to the model can be judged in about a
minute. The end-to-end check (real builds against a farm) is
``../shared/tools/freshness/run``.

    .venv/bin/python benchmarks/freshness_sim.py                 # 1,000 feeds, 14 days, seed 1
    .venv/bin/python benchmarks/freshness_sim.py --seed 2 --n 1000 --days 14

The budget (``requests_per_feed_per_day``) is applied as a build applies
it, with :func:`syndicator.poll.schedule.spend`, over the states every feed
reached at the end of a first run (politesim simulates feed after feed, not
build after build); when that raises ``at_one_per_day``, the run is made
again with it. Then, as a build's correction does at its steady state
(:func:`syndicator.poll.schedule.correction`), the budget is divided by the
requests measured over those expected, and the run made once more.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from syndicator.model import Check, SourceState
from syndicator.poll import habits, intervals, schedule

TOOL = Path(
    os.environ.get("SYNDICATOR_FRESHNESS") or Path(__file__).resolve().parents[2] / "shared" / "tools" / "freshness"
)
EPOCH = datetime(2026, 6, 1, tzinfo=UTC)  # a Monday: the tool's time 0
TARGETS = (
    ("requests per feed per day", "req_fd", 15.0, "{:.2f}"),
    ("post delay median", "med", 600.0, None),
    ("post delay p90", "p90", 1800.0, None),
    ("post delay p99", "p99", 7200.0, None),
    ("median over feeds of each feed's median delay", "feed_med", 2700.0, None),
)


class RealSchedule:
    """A politesim policy that plans with syndicator's schedule: one instance per simulation."""

    def __init__(self, policy: schedule.Policy) -> None:
        self.policy = policy
        self.states: dict[int, SourceState] = {}

    def __call__(self, st: dict, now: int, changed: bool, doc: tuple[float, ...]) -> float:
        key = st.setdefault("key", len(self.states))
        clock = EPOCH + timedelta(seconds=now)
        state = self.states.get(key) or SourceState(f"https://feed{key}.example/", f"https://feed{key}.example/")
        history = state.history
        if state.last_success is not None:
            elapsed = (clock - state.last_success).total_seconds()
            new = sum(1 for t in doc if (state.last_success - EPOCH).total_seconds() < t <= now)
            history = (*history, Check(clock, elapsed, changed, new))[-8:]
        learnt = (
            habits.learn(state.habits, (EPOCH + timedelta(seconds=t) for t in doc), clock) if changed else state.habits
        )
        state = replace(state, last_success=clock, last_attempt=clock, history=history, habits=learnt)
        plan = intervals.plan(state, clock, self.policy)
        assert plan.next_attempt is not None
        self.states[key] = replace(state, next_attempt=plan.next_attempt)
        return (plan.next_attempt - EPOCH).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="feeds (default 1000)")
    parser.add_argument("--days", type=int, default=14, help="simulated days (default 14)")
    parser.add_argument("--warmup", type=float, default=3, help="days left out of the figures (default 3)")
    parser.add_argument("--seed", type=int, default=1, help="population draw (default 1)")
    parser.add_argument("--budget", type=float, default=14.5, help="requests_per_feed_per_day (default 14.5)")
    parser.add_argument(
        "--power", type=float, default=habits.POWER, help=f"try another habits.POWER (default {habits.POWER})"
    )
    parser.add_argument(
        "--at-one-per-day",
        type=float,
        default=habits.AT_ONE_PER_DAY / 60,
        help=f"try another default at_one_per_day, minutes (default {habits.AT_ONE_PER_DAY / 60:g})",
    )
    args = parser.parse_args()
    if not (TOOL / "politesim.py").exists():
        sys.exit(f"freshness_sim: needs the freshness tool's politesim.py in {TOOL} (or SYNDICATOR_FRESHNESS)")
    sys.path.insert(0, str(TOOL))
    sys.dont_write_bytecode = True
    import politesim as ps

    profiles, _ = ps.load_profiles(288.0)
    horizon, warm = args.days * ps.DAY, int(args.warmup * ps.DAY)
    feeds = ps.population(profiles, args.n, args.seed, horizon)
    days = (horizon - warm) / ps.DAY
    counts = {t: sum(f["tier"] == t for f in feeds) for t in ps.TIERS} | {"all": len(feeds)}

    def summary(accs: dict) -> dict:
        return {t: ps.summarize(accs[t], counts[t], days) for t in accs}

    habits.POWER = args.power  # a tuning aid: the module reads it at every call
    end = EPOCH + timedelta(seconds=horizon)
    configured = schedule.Policy(at_one_per_day=args.at_one_per_day * 60)
    run = RealSchedule(configured)
    accs = ps.simulate(feeds, run, warm, horizon)
    spent = schedule.spend(run.states.values(), end, configured, args.budget)
    if spent != run.policy:
        run = RealSchedule(spent)
        accs = ps.simulate(feeds, run, warm, horizon)
    # The build's correction at its steady state: the budget over what was measured against what was expected.
    expected = schedule.expected_requests(run.states.values(), end, spent)
    measured = summary(accs)["all"]["req_fd"]
    if expected and abs(measured / expected - 1) > 0.01:
        low, high = schedule.CORRECTION_BOUNDS
        corrected = schedule.spend(
            run.states.values(), end, configured, args.budget / min(max(measured / expected, low), high)
        )
        if corrected != spent:
            spent = corrected
            accs = ps.simulate(feeds, RealSchedule(spent), warm, horizon)
    rows = [
        (f"syndicator schedule (at_one_per_day {spent.at_one_per_day / 60:.0f} min)", summary(accs)),
        ("fixed 60 min", summary(ps.simulate(feeds, ps.fixed(ps.HOUR), warm, horizon))),
        ("seed tiers 15m/1h/6h", summary(ps.simulate(feeds, ps.seed_tiers, warm, horizon))),
        ("oracle", summary(ps.oracle(feeds, warm, horizon))),
    ]
    print(
        f"seed {args.seed}, {args.n} feeds, {args.days} days ({args.warmup:g} warm-up), budget {args.budget:g}, "
        f"power {args.power:g}"
    )
    print("| | req/feed/day | delay median | p90 | p99 | median over feeds |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, summ in rows:
        a = summ["all"]
        print(
            f"| {name} | {a['req_fd']:.2f} | {ps.fmt_dur(a['med'])} | {ps.fmt_dur(a['p90'])} | "
            f"{ps.fmt_dur(a['p99'])} | {ps.fmt_dur(a['feed_med'])} |"
        )
    mine = rows[0][1]
    print(
        "by tier (req/feed/day; median delay): "
        + "; ".join(f"{ps.TIER_LABEL[t]} {mine[t]['req_fd']:.1f}, {ps.fmt_dur(mine[t]['med'])}" for t in ps.TIERS)
    )
    for label, key, limit, form in TARGETS:
        value = mine["all"][key]
        shown = form.format(value) if form else ps.fmt_dur(value)
        print(
            f"{'ok' if value <= limit else 'FAIL'}: {label} {shown} (target <= "
            f"{form.format(limit) if form else ps.fmt_dur(limit)})"
        )


if __name__ == "__main__":
    main()
