"""Parse-work bounds: a dense full-text feed, and attribute bombs through the real ``syndicator build``.

    .venv/bin/python benchmarks/parse_bounds.py [--only fulltext fulltext-xhtml builds]
                                                [--counts 50000 100000 300000 1000000] [--timeout 900]

1. ``fulltext``: a generated full-text Atom feed of about 5 MB (300 entries,
   HTML paragraphs of inline markup in CDATA, one ``<`` per 9 characters:
   denser than the old tag-density guard accepted) is parsed by
   ``parse_feed`` in a fresh child process; prints its size, its ``<``, the
   thread CPU seconds of the parse, and the child's peak resident memory
   before and after the parse (``ru_maxrss``, MiB). ``fulltext-xhtml``: the
   same feed with ``type="xhtml"`` content (real XHTML elements, not CDATA).
2. ``builds``: for each count, a planet of two sites on a loopback HTTP
   server, "Bomb" (an Atom feed whose root element holds that many
   attributes) and "Healthy" (an ordinary RSS feed), built by the real CLI
   (``.venv/bin/syndicator build --now ...`` in a child process, a fresh
   cache each time; ``max_bytes`` raised to 32 MiB when the body is larger
   than the default 10 MiB); prints the body size, the build's wall seconds,
   its exit code, the failure classes of report.json and whether the
   healthy site's post is on the published front page.

Prints figures only; asserts nothing (tests/test_bounded.py asserts the outcomes).
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import json
import multiprocessing
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from syndicator.errors import FeedError
from syndicator.parse.feed import parse_feed

ROOT = Path(__file__).resolve().parents[1]
NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
NOW_ISO = "2026-11-30T12:00:00Z"
DEFAULT_MAX_BYTES = 10 * 1024 * 1024


def full_text_feed(entries: int = 300, paragraphs: int = 255, xhtml: bool = False) -> bytes:
    """A full-text Atom feed: ``entries`` entries of ``paragraphs`` short HTML paragraphs each, in CDATA
    (or, with ``xhtml``, as ``type="xhtml"`` content: real XHTML elements in a div, RFC 4287 section 4.1.3.3)."""

    def body(n: int) -> str:
        return "".join(
            f'<p>Part {n}.{k}: <a href="/p/{k}">a</a>, <em>b</em> <b>c</b>.</p>\n' for k in range(paragraphs)
        )

    def content(n: int) -> str:
        if xhtml:
            return f'<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">{body(n)}</div></content>'
        return f'<content type="html"><![CDATA[{body(n)}]]></content>'

    return (
        '<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
        '<title>Full Text</title><id>urn:full</id><link href="https://full.example.org/"/>'
        "<updated>2026-11-29T10:00:00Z</updated>"
        + "".join(
            f"<entry><id>urn:full:{n}</id><title>Entry {n}</title>"
            f'<link href="https://full.example.org/{n}"/>'
            f"<updated>2026-11-{1 + n % 28:02d}T10:00:00Z</updated>"
            f"{content(n)}</entry>"
            for n in range(entries)
        )
        + "</feed>"
    ).encode()


def attribute_bomb(count: int) -> bytes:
    """An Atom feed of one entry whose root element holds ``count`` attributes."""
    attributes = "".join(f' a{n}="v"' for n in range(count))
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        f'<feed xmlns="http://www.w3.org/2005/Atom"{attributes}><title>Bomb</title><id>urn:bomb</id>'
        '<entry><id>urn:bomb:1</id><title>Bomb entry</title><link href="https://bomb.example.org/1"/>'
        "<updated>2026-11-29T10:00:00Z</updated><content>hi</content></entry></feed>"
    ).encode()


HEALTHY = (
    b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Healthy</title>'
    b"<link>https://healthy.example.org/</link><description>d</description>"
    b"<item><title>Healthy post</title><link>https://healthy.example.org/1</link>"
    b"<guid>https://healthy.example.org/1</guid><pubDate>Sun, 29 Nov 2026 10:00:00 +0000</pubDate>"
    b"<description>fine</description></item></channel></rss>"
)


def _parse_in_child(connection: Any, body: bytes) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.thread_time()
    try:
        outcome = f"ok ({len(parse_feed(body, 'https://full.example.org/feed', {}, NOW).entries)} entries)"
    except FeedError as error:
        outcome = f"{error.kind}: {error}"
    seconds = time.thread_time() - started
    connection.send((seconds, before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, outcome))
    connection.close()


def fulltext(xhtml: bool = False) -> None:
    """Print the full-text feed's figures (see the module docstring)."""
    body = full_text_feed(xhtml=xhtml)
    text = body.decode()
    context = multiprocessing.get_context("spawn")  # a fresh process: its peak memory is this parse's
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_parse_in_child, args=(sender, body))
    process.start()
    seconds, before, after, outcome = receiver.recv()
    process.join()
    print(
        f"full-text feed: {len(body):,} bytes, {text.count('<'):,} '<' ({len(text) / text.count('<'):.1f} "
        f"characters each), 300 entries{', XHTML content' if xhtml else ', HTML in CDATA'}"
    )
    print(
        f"  parse: {seconds:.3f} s CPU, {seconds / (len(body) / 1e6):.3f} s/MB; peak RSS {before:.0f} MiB "
        f"before, {after:.0f} MiB after (+{after - before:.0f} MiB); {outcome}"
    )


@contextlib.contextmanager
def serving(files: dict[str, bytes]) -> Iterator[str]:
    """Serve ``files`` (path -> body) on 127.0.0.1; yield the base URL."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server interface
            body = files.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header(
                "Content-Type", "application/atom+xml" if b"<feed" in body[:200] else "application/rss+xml"
            )
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def build_once(count: int, timeout: float) -> None:
    """Build the two-site planet with a bomb of ``count`` attributes; print one line."""
    bomb = attribute_bomb(count)
    with serving({"/bomb.xml": bomb, "/healthy.xml": HEALTHY}) as base, tempfile.TemporaryDirectory() as folder:
        settings: dict[str, Any] = {"title": "Planet Bench", "link": "https://planet.example.org/"}
        if len(bomb) > DEFAULT_MAX_BYTES:
            settings["max_bytes"] = 32 * 1024 * 1024
        settings["sites"] = [
            {"name": "Bomb", "feed": f"{base}/bomb.xml"},
            {"name": "Healthy", "feed": f"{base}/healthy.xml"},
        ]
        config = Path(folder) / "sites.yaml"
        config.write_text(yaml.safe_dump(settings, sort_keys=False))
        started = time.monotonic()
        try:
            done = subprocess.run(
                [str(Path(sys.executable).with_name("syndicator")), "build", "--config", str(config), "--now", NOW_ISO],
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=ROOT,
            )
            code: int | str = done.returncode
            errors = done.stderr.strip().splitlines()
        except subprocess.TimeoutExpired:
            code, errors = f"killed after {timeout:.0f} s", []
        seconds = time.monotonic() - started
        report_path = Path(folder) / "cache" / "report.json"
        report = json.loads(report_path.read_text()) if report_path.exists() else {}
        index = Path(folder) / "public" / "index.html"
        healthy = index.exists() and "Healthy post" in index.read_text()
        bomb_line = next((line for line in errors if "bomb" in line.lower()), "")
        print(
            f"{count:>9,} attributes {len(bomb):>12,} bytes  build {seconds:7.2f} s  exit {code}  "
            f"failed {report.get('failed_by_class')}  parse {report.get('parse_seconds')} s  "
            f"healthy published: {healthy}",
            flush=True,
        )
        if bomb_line:
            print(f"           {bomb_line[:200]}")


def main() -> None:
    """Run the benchmark (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        nargs="*",
        default=["fulltext", "fulltext-xhtml", "builds"],
        choices=["fulltext", "fulltext-xhtml", "builds"],
    )
    parser.add_argument("--counts", nargs="*", type=int, default=[50_000, 100_000, 300_000, 1_000_000])
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per build at most (default 900)")
    args = parser.parse_args()
    if "fulltext" in args.only:
        fulltext()
    if "fulltext-xhtml" in args.only:
        fulltext(xhtml=True)
    if "builds" in args.only:
        for count in args.counts:
            build_once(count, args.timeout)


if __name__ == "__main__":
    main()
