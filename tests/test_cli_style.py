"""cli style: one error line for every command, whole help texts, every option in the docs,
and a progress bar only for a person watching that no log line ever lands on."""

from __future__ import annotations

import html
import io
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from syndicator.cli import build as build_command
from syndicator.cli import main
from syndicator.cli.build import build_with_progress, progress_shown
from syndicator.cli.logs import LogHandler
from syndicator.cli.reference import commands_reference, leaf_commands
from syndicator.drivers.pipeline import BuildOptions

from .conftest import NOW, NOW_ISO, post, rss, write_config

ROOT = Path(__file__).resolve().parents[1]


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


def squeezed(text: str) -> str:
    """``text`` with every run of white space made one space (help texts are wrapped)."""
    return " ".join(text.split())


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message", "command"),
    [
        pytest.param(["build", "--bogus"], "No such option '--bogus'", "build", id="unknown-option"),
        pytest.param(["--bogus"], "No such option '--bogus'", "", id="unknown-option-of-the-group"),
        pytest.param(["nope"], "No such command 'nope'.", "", id="unknown-command"),
        pytest.param(
            ["build", "--workers", "0"],
            "Invalid value for '--workers': 0 is not in the range 1<=x<=64.",
            "build",
            id="out-of-range",
        ),
        pytest.param(
            ["status", "--now", "someday"],
            "Invalid value for '--now': 'someday' is not an ISO 8601 time such as 2026-11-30T12:00:00Z",
            "status",
            id="bad-now",
        ),
        pytest.param(
            ["build", "--templates", "missing"],
            "Invalid value for '--templates': Directory 'missing' does not exist.",
            "build",
            id="missing-folder",
        ),
        pytest.param(["build", "extra"], "Got unexpected extra argument (extra)", "build", id="extra-argument"),
        pytest.param(["discover"], "Missing argument 'URL'.", "discover", id="missing-argument"),
        pytest.param(
            ["discover", "ftp://example.org/feed"],
            "Invalid value for 'URL': 'ftp://example.org/feed' is not an http(s) URL",
            "discover",
            id="not-http",
        ),
        pytest.param(
            ["import", "a.opml", "b.opml"], "Got unexpected extra argument (b.opml)", "import", id="two-files"
        ),
        pytest.param(
            ["add", "https://example.org/", "--name"],
            "Option '--name' requires an argument.",
            "add",
            id="option-without-value",
        ),
    ],
)
def test_a_usage_error_is_one_error_line_and_the_help_to_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str, command: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    first, second = result.stderr.splitlines()
    assert first.startswith(f"syndicator: error: {message}"), first  # "Did you mean ...?" may follow
    assert second == f"Try '{' '.join(['syndicator', command]).strip()} --help'."
    assert "Usage:" not in result.stderr and "Error:" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # refused before anything was read or written


def test_a_domain_error_stays_one_line_with_its_exit_code(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    for args in (["build", "--config", str(missing)], ["status", "--config", str(missing)]):
        result = invoke(*args)
        assert (result.exit_code, result.stdout) == (2, "")
        assert result.stderr == f"syndicator: error: {missing}: cannot read: No such file or directory\n"


def test_discover_failing_is_one_line_exit_1(server: HTTPServer) -> None:
    server.expect_request("/gone").respond_with_data("gone", status=410)
    result = invoke("discover", server.url_for("/gone"))
    assert (result.exit_code, result.stdout) == (1, "")
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"syndicator: error: {server.url_for('/gone')}: ")


def test_no_arguments_prints_the_help() -> None:
    """Not an error line: `syndicator` alone shows what it can do (click exits 2 for it)."""
    result = invoke()
    assert result.exit_code == 2
    assert "Commands:" in result.stderr and "syndicator: error:" not in result.stderr


# --- help ---------------------------------------------------------------------------------


def test_the_command_list_shows_each_first_sentence_whole() -> None:
    result = invoke("--help")
    assert result.exit_code == 0 and result.stderr == ""
    commands = result.stdout.split("\nCommands:\n")[1]
    assert "..." not in commands
    shown = squeezed(commands)
    lengths = []
    for name, command in main.commands.items():
        sentence = squeezed(command.help or "").split(". ")[0].rstrip(".") + "."
        lengths.append(len(sentence))
        assert f" {name} {sentence} " in f" {shown} ", name
    assert max(lengths) > 45  # longer than click's default cut, so the check means something


def test_every_option_help_is_shown_whole() -> None:
    for name, command in leaf_commands(main.commands):
        result = invoke(*name.split(), "--help")
        assert result.exit_code == 0 and result.stderr == ""
        shown = squeezed(result.stdout)
        assert squeezed(command.help or "") in shown
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help and squeezed(param.help) in shown, (name, param.name)


# --- the commands page ----------------------------------------------------------------------


def commands_page() -> str:
    """docs/reference/commands.md as written: the prose about the commands (its list of every command and
    option is made by :func:`commands_reference` when the docs are built)."""
    return (ROOT / "docs" / "reference" / "commands.md").read_text(encoding="utf-8")


def reference_of(command: str) -> str:
    """The section of :func:`commands_reference` about ``syndicator COMMAND``, as the page shows it
    (Markdown escapes undone)."""
    text = commands_reference().split(f"## `syndicator {command}`\n", 1)[1].split("\n## ", 1)[0]
    return html.unescape(re.sub(r"\\(.)", r"\1", text))


def named(name: str, text: str) -> bool:
    """Whether ``name`` (an option such as ``-v`` or ``--config``) appears in ``text`` as a whole word."""
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def test_the_commands_reference_shows_every_command_option_and_help() -> None:
    assert "filter test" in dict(leaf_commands(main.commands))  # a group's commands, named with it
    for name, command in leaf_commands(main.commands):
        section = reference_of(name)
        synopsis = section.split("```\n", 2)[1]
        assert synopsis.startswith(f"syndicator {name}"), f"no synopsis of {name}"
        assert squeezed(command.help or "") in squeezed(section), name
        for param in command.params:
            if isinstance(param, click.Argument):
                assert synopsis.startswith(f"syndicator {name} {param.human_readable_name}"), (name, param.name)
                continue
            assert any(named(option, synopsis) for option in param.opts), (name, param.opts)
            row = next(line for line in section.splitlines() if line.startswith(f"| `{param.opts[0]}"))
            assert all(named(option, row) for option in param.opts + param.secondary_opts), (name, row)
            assert param.help and squeezed(param.help) in squeezed(row), (name, param.name)


def test_the_commands_page_names_the_options_of_syndicator_itself() -> None:
    in_code = " ".join(re.findall(r"`([^`]+)`", commands_page()))
    context = click.Context(main)
    for param in main.get_params(context):  # --version, -h/--help
        for option in param.opts:
            assert named(option, in_code), option


def test_the_commands_page_says_what_v_and_q_do() -> None:
    prose = commands_page()
    assert re.search(r"`-v` \(`--verbose`\) [a-z]", prose)
    assert re.search(r"`-q` \(`--quiet`\) [a-z]", prose)


def test_the_commands_page_shows_the_error_lines_as_printed() -> None:
    result = invoke("build", "--bogus")
    assert result.stderr in commands_page()


# --- the progress bar ----------------------------------------------------------------------


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def screen(text: str) -> list[str]:
    """The lines a terminal shows for ``text``: a carriage return goes back to the line's start,
    ``ESC [ K`` erases to its end, other escape sequences (hiding the cursor) show nothing."""
    lines = []
    for raw in text.split("\n"):
        line, column = "", 0
        for piece in re.split(r"(\r|\x1b\[[?0-9;]*[A-Za-z])", raw):
            if piece == "\r":
                column = 0
            elif piece == "\x1b[K":
                line = line[:column]
            elif not piece.startswith("\x1b"):
                line = line[:column] + piece + line[column + len(piece) :]
                column += len(piece)
        lines.append(line)
    return lines


@pytest.mark.parametrize(
    ("environ", "quiet", "terminal", "shown"),
    [
        pytest.param({}, 0, True, True, id="terminal"),
        pytest.param({}, 0, False, False, id="not-a-terminal"),
        pytest.param({}, 1, True, False, id="quiet"),
        pytest.param({"CI": "true"}, 0, True, False, id="ci-true"),
        pytest.param({"CI": "1"}, 0, True, False, id="ci-1"),
        pytest.param({"CI": "woodpecker"}, 0, True, False, id="ci-any-text"),
        pytest.param({"CI": "false"}, 0, True, True, id="ci-false"),
        pytest.param({"CI": "False"}, 0, True, True, id="ci-False"),
        pytest.param({"CI": "0"}, 0, True, True, id="ci-0"),
        pytest.param({"CI": ""}, 0, True, True, id="ci-empty"),
    ],
)
def test_progress_is_shown_only_to_a_person_watching(
    environ: dict[str, str], quiet: int, terminal: bool, shown: bool
) -> None:
    stream = Terminal() if terminal else io.StringIO()
    assert progress_shown(stream, quiet, environ) is shown


@pytest.mark.parametrize("bar_shown", [True, False])
def test_a_log_line_clears_the_bar_line_first(bar_shown: bool) -> None:
    stream = Terminal()
    stream.write("\rfetching  [####        ]  1/3")
    handler = LogHandler(stream)
    handler.bar_shown = bar_shown
    handler.handle(
        logging.makeLogRecord(
            {"msg": "site %r: failed", "args": ("A",), "levelname": "WARNING", "levelno": logging.WARNING}
        )
    )
    written = stream.getvalue()
    visible = screen(written)
    if bar_shown:
        assert written.endswith("\r\x1b[Ksyndicator: warning: site 'A': failed\n")
        assert visible == ["syndicator: warning: site 'A': failed", ""]
    else:
        assert written.endswith("1/3syndicator: warning: site 'A': failed\n")


def test_log_lines_during_a_build_never_share_the_bar_line(monkeypatch: pytest.MonkeyPatch) -> None:
    log = logging.getLogger("syndicator")

    def fake_build(config: Any, options: BuildOptions) -> str:
        assert options.progress is not None
        log.warning("before")
        options.progress(1, 3)
        log.warning("during")
        options.progress(2, 3)
        options.progress(3, 3)
        log.warning("after")
        return "report"

    stream = Terminal()
    handler = LogHandler(stream)
    monkeypatch.setattr(log, "handlers", [handler])
    monkeypatch.setattr(build_command, "run_build", fake_build)
    assert build_with_progress(None, BuildOptions(now=NOW), handler) == "report"
    before, during, bar, after, end = screen(stream.getvalue())
    assert (before, during, after, end) == (
        "syndicator: warning: before",
        "syndicator: warning: during",
        "syndicator: warning: after",
        "",
    )
    assert bar.startswith("fetching") and "3/3" in bar and "syndicator" not in bar
    assert handler.bar_shown is False


def local_feed_config(tmp_path: Path) -> Path:
    (tmp_path / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    return write_config(tmp_path, [{"name": "A", "feed": "a.xml"}])


@pytest.mark.parametrize("environ", [{}, {"CI": "true"}], ids=["no-ci", "ci"])
def test_no_bar_through_the_cli_runner(tmp_path: Path, environ: dict[str, str]) -> None:
    """CliRunner's stderr is not a terminal: log lines only (click would print the bar's label once)."""
    result = invoke("build", "--config", str(local_feed_config(tmp_path)), "--now", NOW_ISO, env=environ)
    assert result.exit_code == 0, result.output
    assert "fetching" not in result.stderr and "\r" not in result.stderr
    assert result.stdout.startswith("1 site: 1 feed due")


def on_a_terminal(args: list[str], cwd: Path, ci: str | None) -> str:
    """Run ``syndicator ARGS`` with stderr on a pseudo-terminal; what it wrote there."""
    import pty

    environ = {key: value for key, value in os.environ.items() if key != "CI"}
    if ci is not None:
        environ["CI"] = ci
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", "from syndicator.cli import main; main()", *args],
        cwd=cwd,
        env=environ,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=follower,
    )
    os.close(follower)
    chunks = []
    try:
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
        assert process.wait(30) == 0, b"".join(chunks)
    return b"".join(chunks).decode()


needs_pty = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX only")


@needs_pty
@pytest.mark.parametrize(
    ("ci", "bar"),
    [
        pytest.param(None, True, id="unset"),
        pytest.param("false", True, id="false"),
        pytest.param("true", False, id="true"),
    ],
)
def test_bar_on_a_terminal_unless_ci(tmp_path: Path, ci: str | None, bar: bool) -> None:
    written = on_a_terminal(["build", "--config", str(local_feed_config(tmp_path)), "--now", NOW_ISO], tmp_path, ci)
    assert ("fetching" in written) is bar
    assert ("\x1b[" in written) is bar


@needs_pty
def test_on_a_terminal_no_log_line_lands_on_the_bar(server: HTTPServer, tmp_path: Path) -> None:
    def slow_failure(request: Request) -> Response:
        time.sleep(0.5)  # the last to finish, while the bar shows
        return Response("no", status=404)

    server.expect_request("/a.xml").respond_with_data(rss(post(1)))
    server.expect_request("/b.xml").respond_with_data(rss(post(2)))
    server.expect_request("/late.xml").respond_with_handler(slow_failure)
    config = write_config(
        tmp_path,
        [
            {"name": "A", "feed": server.url_for("/a.xml")},
            {"name": "B", "feed": server.url_for("/b.xml")},
            {"name": "Late", "feed": server.url_for("/late.xml")},
        ],
        host_gap=0,
    )
    written = on_a_terminal(["build", "--config", str(config), "--now", NOW_ISO, "-v"], tmp_path, None)
    lines = [line.rstrip() for line in screen(written.replace("\r\n", "\n"))]
    failure = f"syndicator: info: {server.url_for('/late.xml')}: HTTP 404"
    assert any(line.startswith(failure) for line in lines), lines
    assert [line for line in lines if "fetching" in line and "syndicator:" in line] == []
    assert any(line.startswith("fetching") and "3/3" in line for line in lines), lines
