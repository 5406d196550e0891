"""The output folder and the cache folder on disk: nothing outside the planet's folders is published, a
folder's mode survives the swap, a read-only or planted folder is one line and leaves nothing half done,
and state files are private and never reached through a symlink. Every build runs the real CLI."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from syndicator.site.output import CARRIED
from syndicator.state import cachefiles
from syndicator.state.pushstate import PushState

from .conftest import build, post, rss, tree, write_config

NOBODY = 65534


def planet(folder: Path, **settings: object) -> Path:
    """A planet of one local feed in ``folder`` (output ``public``, cache ``cache``); its sites.yaml."""
    (folder / "a.xml").write_text(rss(post(1)), encoding="utf-8")
    return write_config(folder, [{"name": "A", "feed": "a.xml"}], **settings)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def leftovers(folder: Path) -> list[str]:
    """The names beside the output that a publish may leave (staging and aside folders)."""
    return sorted(p.name for p in folder.iterdir() if ".staging" in p.name or ".old" in p.name)


def one_line(stderr: str) -> str:
    """The one ``error:`` line of ``stderr``; fails on a traceback or on several lines."""
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1, stderr
    return errors[0]


# --- 1. static/: links and special files ------------------------------------------------------------


def test_links_out_of_static_and_special_files_are_not_published(tmp_path: Path) -> None:
    config = planet(tmp_path)
    static = tmp_path / "static"
    (static / "img").mkdir(parents=True)
    (static / "img" / "logo.svg").write_text("<svg/>")
    assert build(config).exit_code == 0  # the cache now holds state.sqlite
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "key").write_text("secret key")
    (static / "environ").symlink_to("/proc/self/environ")
    (static / "cmdline").symlink_to("/proc/self/cmdline")
    (static / "passwd").symlink_to("/etc/passwd")
    (static / "state.sqlite").symlink_to("../cache/state.sqlite")
    (static / "keys").symlink_to(tmp_path / "private", target_is_directory=True)
    (static / "broken").symlink_to(tmp_path / "nowhere")
    (static / "dangling").symlink_to("missing.txt")  # inside the folder, to nothing
    (static / "logo-link.svg").symlink_to("img/logo.svg")  # inside the folder: published as a copy
    os.mkfifo(static / "pipe")
    result = build(config, "--force", now="2026-11-30T13:00:00Z")
    assert result.exit_code == 0, result.output
    public = tmp_path / "public"
    assert {"img/logo.svg", "logo-link.svg", "index.html"} <= set(tree(public))
    for name in ("environ", "cmdline", "passwd", "state.sqlite", "keys", "broken", "dangling", "pipe"):
        assert not os.path.lexists(public / name), name
    assert (public / "logo-link.svg").read_text() == "<svg/>" and not (public / "logo-link.svg").is_symlink()
    for name in ("environ", "cmdline", "passwd", "state.sqlite"):
        assert f"static/{name}: a symlink out of" in result.stderr, name
    assert "static/keys: a symlink to a folder; not published" in result.stderr
    assert "static/pipe: not a regular file" in result.stderr
    assert "static/dangling: cannot be read (a broken symlink to missing.txt)" in result.stderr  # named as in static/
    assert b"secret" not in b"".join(tree(public).values())
    assert b"SQLite format" not in b"".join(tree(public).values())


def test_a_static_folder_linked_out_of_the_planet_or_the_theme_is_not_published(tmp_path: Path) -> None:
    planet_folder, elsewhere, theme = tmp_path / "planet", tmp_path / "elsewhere", tmp_path / "theme"
    for folder in (planet_folder, elsewhere, theme):
        folder.mkdir()
    (elsewhere / "secret.txt").write_text("secret")
    config = planet(planet_folder)
    (planet_folder / "static").symlink_to(elsewhere, target_is_directory=True)
    (theme / "static").symlink_to(elsewhere, target_is_directory=True)
    result = build(config, "--templates", str(theme))
    assert result.exit_code == 0, result.output
    assert not (planet_folder / "public" / "secret.txt").exists()
    assert result.stderr.count("a symlink out of") == 2, result.stderr


def test_links_in_a_theme_are_not_followed_out_of_it(tmp_path: Path) -> None:
    config = planet(tmp_path)
    theme = tmp_path / "theme"
    (theme / "static").mkdir(parents=True)
    (theme / "static" / "environ").symlink_to("/proc/self/environ")
    (theme / "leak.txt").symlink_to("/etc/passwd")  # would be a page of its own
    result = build(config, "--templates", str(theme))
    assert result.exit_code == 0, result.output
    assert not os.path.lexists(tmp_path / "public" / "environ")
    assert not os.path.lexists(tmp_path / "public" / "leak.txt")
    (theme / "sites.html").symlink_to("/etc/passwd")  # a template the build needs: the build stops
    result = build(config, "--templates", str(theme), "--force")
    assert result.exit_code == 6
    assert "sites.html: a symlink out of the templates folders (to /etc/passwd); not read" in one_line(result.stderr)
    assert "root:" not in (tmp_path / "public" / "sites.html").read_text()


# --- 2. a read-only output folder; an unusable state database ----------------------------------------


def test_a_read_only_output_folder_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    """Mode 555 is refused even for root, who could write it: read-only means "do not publish here"."""
    config = planet(tmp_path)
    assert build(config).exit_code == 0
    public = tmp_path / "public"
    before = tree(public)
    public.chmod(0o555)
    try:
        result = build(config, now="2026-11-30T13:00:00Z")
        assert result.exit_code == 6
        assert "public: the output folder is read-only (mode 555); make it writable" in one_line(result.stderr)
        assert tree(public) == before and mode(public) == 0o555
        assert leftovers(tmp_path) == []
    finally:
        public.chmod(0o755)
    result = build(config, now="2026-11-30T14:00:00Z")
    assert result.exit_code == 0, result.output
    assert leftovers(tmp_path) == []


def test_a_read_only_output_folder_is_refused_before_any_request_or_state(server: HTTPServer, tmp_path: Path) -> None:
    """A fixed condition: refused up front (exit 6, the same line), so no feed is asked and no state
    is created or changed, on a first build and on a later one."""
    server.expect_request("/feed.xml").respond_with_data(rss(post(1, host="127.0.0.1")))
    config = write_config(tmp_path, [{"name": "A", "feed": server.url_for("/feed.xml")}])
    public = tmp_path / "public"
    public.mkdir()
    public.chmod(0o555)
    try:
        first = build(config)
        assert first.exit_code == 6, first.output
        assert "public: the output folder is read-only (mode 555); make it writable" in one_line(first.stderr)
        assert server.log == []
        assert not (tmp_path / "cache").exists()  # no state database, no lock: nothing was written
    finally:
        public.chmod(0o755)
    assert build(config).exit_code == 0
    state = tree(tmp_path / "cache")
    assert "state.sqlite" in state
    server.clear_log()
    public.chmod(0o555)
    try:
        later = build(config, "--force", now="2026-11-30T13:00:00Z")
        assert later.exit_code == 6, later.output
        assert "public: the output folder is read-only (mode 555); make it writable" in one_line(later.stderr)
    finally:
        public.chmod(0o755)
    assert server.log == []
    assert tree(tmp_path / "cache") == state


#: Root without the capabilities that override file permissions: bound by modes like any user.
SETPRIV = shutil.which("setpriv")
_DROPPED = "-dac_override,-dac_read_search,-fowner"
bound_by_modes = pytest.mark.skipif(
    os.geteuid() == 0 and SETPRIV is None, reason="as root, needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE"
)


def unprivileged(config: Path) -> subprocess.CompletedProcess[str]:
    """Run ``syndicator build`` in a subprocess that file modes bind: as this user, or, when the tests
    run as root (CI), as root without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER (setpriv)."""
    command = [
        sys.executable,
        "-c",
        "from syndicator.cli import main; main()",
        "build",
        "--config",
        str(config),
        "--now",
        "2026-11-30T13:00:00Z",
    ]
    if os.geteuid() == 0:
        command = [str(SETPRIV), "--bounding-set", _DROPPED, *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=config.parent, check=False)


@bound_by_modes
def test_a_read_only_output_folder_is_refused_for_a_user_it_binds(tmp_path: Path) -> None:
    config = planet(tmp_path)
    assert build(config).exit_code == 0
    public = tmp_path / "public"
    before = tree(public)
    public.chmod(0o555)  # the case: the new site was swapped in, then a traceback
    try:
        result = unprivileged(config)
    finally:
        public.chmod(0o755)
    assert result.returncode == 6, result.stderr
    assert "public: the output folder is read-only (mode 555)" in one_line(result.stderr)
    assert tree(public) == before and leftovers(tmp_path) == []


@bound_by_modes
def test_a_read_only_folder_inside_the_old_site_does_not_stop_the_build(tmp_path: Path) -> None:
    """Before: the new site was swapped in, then removing the old one failed; a traceback and a staging
    folder that broke every later build. The old copy is this user's, so it is opened up and removed."""
    config = planet(tmp_path)
    (tmp_path / "static" / "img").mkdir(parents=True)
    (tmp_path / "static" / "img" / "logo.svg").write_text("<svg/>")
    assert build(config).exit_code == 0
    (tmp_path / "public" / "img").chmod(0o555)
    result = unprivileged(config)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert leftovers(tmp_path) == []
    assert (tmp_path / "public" / "img" / "logo.svg").read_text() == "<svg/>"


@bound_by_modes
def test_an_unreadable_state_database_is_one_line(tmp_path: Path) -> None:
    config = planet(tmp_path)
    assert build(config).exit_code == 0
    state = tmp_path / "cache" / "state.sqlite"
    state.chmod(0o000)
    result = unprivileged(config)
    assert result.returncode == 5, result.stderr
    assert "state.sqlite: cannot open the state file: Permission denied" in one_line(result.stderr)
    assert leftovers(tmp_path) == []


def test_a_state_database_that_is_a_folder_is_one_line(tmp_path: Path) -> None:
    config = planet(tmp_path)
    (tmp_path / "cache" / "state.sqlite").mkdir(parents=True)
    result = build(config)
    assert result.exit_code == 5
    assert "state.sqlite: a state file is not a regular file; move it aside" in one_line(result.stderr)
    assert not (tmp_path / "public").exists()


# --- 3. the output folder's mode and owner survive the swap -------------------------------------------


@pytest.mark.parametrize("kept", [0o750, 0o700, 0o775], ids=oct)
def test_the_output_folders_mode_is_kept(tmp_path: Path, kept: int) -> None:
    config = planet(tmp_path)
    public = tmp_path / "public"
    public.mkdir()
    (public / ".git").mkdir()  # a git checkout (a home folder kept in git, GitHub Pages)
    (public / ".ssh").mkdir(mode=0o700)
    public.chmod(kept)
    for hour in (12, 13):
        result = build(config, *(["--force"] if hour == 13 else []), now=f"2026-11-30T{hour}:00:00Z")
        assert result.exit_code == 0, result.output
        assert mode(public) == kept
        assert (public / ".ssh").is_dir() and (public / "index.html").is_file()


def test_a_new_output_folder_gets_the_umasks_mode(tmp_path: Path) -> None:
    config = planet(tmp_path)
    assert build(config).exit_code == 0
    umask = os.umask(0)
    os.umask(umask)
    assert mode(tmp_path / "public") == 0o777 & ~umask
    assert mode(tmp_path / "public" / "index.html") == 0o666 & ~umask


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a folder to another user")
def test_the_output_folders_owner_is_kept(tmp_path: Path) -> None:
    config = planet(tmp_path)
    public = tmp_path / "public"
    public.mkdir()
    os.chown(public, NOBODY, NOBODY)
    assert build(config).exit_code == 0
    assert (public.stat().st_uid, public.stat().st_gid) == (NOBODY, NOBODY)


# --- 4. leftovers beside the output ---------------------------------------------------------------------


def test_a_planted_staging_link_is_never_followed(tmp_path: Path) -> None:
    config = planet(tmp_path)
    assert build(config).exit_code == 0
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "secret.txt").write_text("secret")
    (planted / CARRIED).write_text("secret.txt\n")
    (tmp_path / ".public.staging-1-abcd").symlink_to(planted, target_is_directory=True)
    (tmp_path / ".public.old-1-abcd").symlink_to(planted, target_is_directory=True)
    result = build(config, "--force", now="2026-11-30T13:00:00Z")
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "public" / "secret.txt").exists()
    assert tree(planted) == {"secret.txt": b"secret", CARRIED: b"secret.txt\n"}
    assert leftovers(tmp_path) == []  # the links are removed, their target is not touched


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may plant a folder of another user")
def test_a_staging_folder_of_another_user_is_left_alone(tmp_path: Path) -> None:
    config = planet(tmp_path)
    assert build(config).exit_code == 0
    planted = tmp_path / ".public.staging-1-abcd"
    planted.mkdir()
    (planted / "secret.txt").write_text("secret")
    (planted / CARRIED).write_text("secret.txt\n")
    os.chown(planted, NOBODY, NOBODY)
    result = build(config, "--force", now="2026-11-30T13:00:00Z")
    assert result.exit_code == 0, result.output
    assert "not a folder of a syndicator build" in result.stderr
    assert not (tmp_path / "public" / "secret.txt").exists()
    assert (planted / "secret.txt").read_text() == "secret"


@bound_by_modes
def test_a_killed_builds_read_only_staging_folder_is_cleaned_up(tmp_path: Path) -> None:
    config = planet(tmp_path)
    assert build(config).exit_code == 0
    staging = tmp_path / ".public.staging-1-dead"
    (staging / "img").mkdir(parents=True)
    (staging / "img" / "logo.svg").write_text("<svg/>")
    (staging / "img").chmod(0o555)
    staging.chmod(0o555)
    result = unprivileged(config)
    assert result.returncode == 0, result.stderr
    assert leftovers(tmp_path) == []


# --- 5. and 6. state files: private, never through a symlink ----------------------------------------


def test_state_files_are_private_and_published_files_are_not(tmp_path: Path) -> None:
    config = planet(tmp_path, snapshot=True)
    cache = tmp_path / "cache"
    assert build(config).exit_code == 0
    assert mode(cache) == 0o700
    assert mode(cache / "state.sqlite") == 0o600
    assert mode(cache / "syndicator.lock") == 0o600
    umask = os.umask(0)
    os.umask(umask)
    assert mode(tmp_path / "public" / "syndicator-state.json.gz") == 0o666 & ~umask


def test_state_files_of_earlier_versions_are_made_private(tmp_path: Path) -> None:
    config = planet(tmp_path)
    cache = tmp_path / "cache"
    assert build(config).exit_code == 0
    for name in ("state.sqlite", "syndicator.lock"):
        (cache / name).chmod(0o644)
    (cache / "state.sqlite-wal").write_bytes(b"")  # a companion left by a killed build
    (cache / "state.sqlite-wal").chmod(0o644)
    assert build(config, "--force", now="2026-11-30T13:00:00Z").exit_code == 0
    assert mode(cache / "state.sqlite") == 0o600 and mode(cache / "syndicator.lock") == 0o600
    assert not (cache / "state.sqlite-wal").exists() or mode(cache / "state.sqlite-wal") == 0o600


def test_the_push_database_and_its_companions_are_private(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    push = PushState.open(cache)
    try:
        push.keep("secret", "hub secret")
        for name in ("push.sqlite", "push.sqlite-wal", "push.sqlite-shm"):
            assert mode(cache / name) == 0o600, name
    finally:
        push.close()


@pytest.mark.parametrize("name", ["state.sqlite", "syndicator.lock", "state.sqlite-wal"])
def test_a_symlinked_state_file_is_refused(tmp_path: Path, name: str) -> None:
    config = planet(tmp_path)
    outside = tmp_path / "outside"
    outside.write_bytes(b"")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / name).symlink_to(outside)
    result = build(config)
    assert result.exit_code == 5
    assert f"cache/{name}: a state file is a symbolic link (to {outside})" in one_line(result.stderr)
    assert outside.read_bytes() == b""
    assert not (tmp_path / "public").exists()


def test_a_symlinked_push_database_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_bytes(b"")
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "push.sqlite").symlink_to(outside)
    with pytest.raises(Exception, match="push.sqlite: a state file is a symbolic link"):
        PushState.open(tmp_path / "cache")
    assert outside.read_bytes() == b""


@pytest.mark.skipif(os.geteuid() != 0, reason="only root may give a folder to another user")
def test_roots_build_killed_after_giving_staging_the_outputs_owner_is_recovered(tmp_path: Path) -> None:
    """A staging folder of the output's owner, holding the carried ``.git``, is recovered, not left alone."""
    config = planet(tmp_path)
    public = tmp_path / "public"
    public.mkdir()
    os.chown(public, NOBODY, NOBODY)
    staging = tmp_path / ".public.staging-1-dead"
    (staging / ".git").mkdir(parents=True)
    (staging / ".git" / "HEAD").write_text("ref: refs/heads/gh-pages\n")
    (staging / CARRIED).write_text(".git\n")
    os.chown(staging, NOBODY, NOBODY)
    result = build(config)
    assert result.exit_code == 0, result.output
    assert (public / ".git" / "HEAD").read_text() == "ref: refs/heads/gh-pages\n"
    assert leftovers(tmp_path) == [] and "left alone" not in result.stderr


def test_checking_a_state_file_keeps_the_locks_of_a_connection_to_it(tmp_path: Path) -> None:
    """A close of any descriptor of a file drops this process's POSIX locks on it (SQLite's own
    among them): another process then thinks it is the last reader and deletes the WAL."""
    database = tmp_path / "cache" / "state.sqlite"
    database.parent.mkdir()
    reader = sqlite3.connect(database, isolation_level=None)
    try:
        reader.execute("PRAGMA journal_mode=WAL")
        reader.execute("PRAGMA wal_autocheckpoint=0")
        reader.execute("CREATE TABLE t (x)")
        reader.execute("INSERT INTO t VALUES (1)")
        cachefiles.prepare(database, cachefiles.COMPANIONS)
        other = f"import sqlite3; db = sqlite3.connect({str(database)!r}); db.execute('SELECT * FROM t'); db.close()"
        subprocess.run([sys.executable, "-c", other], check=True, timeout=60)
        assert (database.parent / "state.sqlite-wal").stat().st_size > 0  # not checkpointed away under us
        assert reader.execute("SELECT x FROM t").fetchall() == [(1,)]
    finally:
        reader.close()
