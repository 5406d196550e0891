"""A real PostgreSQL server for the tests: one throwaway cluster a session, one fresh database a test.

``postgres_url`` (session scope) is the URL of a superuser connection to the
``postgres`` database of a server that only this run uses:

* ``SYNDICATOR_PG_URL``, when set, names an existing server to use instead
  (the user in it must be allowed to create and drop databases);
* else a cluster is made with ``initdb`` in a temporary folder and started
  with ``pg_ctl``: Debian's binaries (``/usr/lib/postgresql/VERSION/bin``,
  the highest version), the folder named by ``SYNDICATOR_PG_BIN``, or
  ``initdb`` and ``pg_ctl`` on the PATH. It listens on 127.0.0.1 only, on a
  free port, its socket in the temporary folder, trusting local and
  127.0.0.1 connections (nothing else may connect); fsync is off (it is
  thrown away). ``initdb`` refuses to run as root, so as root both commands
  run as the ``postgres`` system user (Debian's package makes it), the
  folder chowned to it. At the end of the session the server is stopped
  (immediate mode) and the folder removed, whatever happened.

Without the binaries the fixtures skip, saying what is missing and how to get it.

``pg_database`` (function scope) creates an empty database on that server for
one test, yields its URL ``postgresql://USER@127.0.0.1:PORT/NAME``, and drops
it afterwards (connections the test left open are ended).

A test module uses them by importing them (not in conftest.py)::

    from .postgres import pg_database, postgres_url  # noqa: F401
"""

from __future__ import annotations

import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

#: Names an existing server to use instead of starting one (a libpq URL).
URL_VARIABLE = "SYNDICATOR_PG_URL"
#: Names the folder holding ``initdb`` and ``pg_ctl``.
BIN_VARIABLE = "SYNDICATOR_PG_BIN"
#: The system user that runs the server when the tests run as root.
SYSTEM_USER = "postgres"
#: The superuser of the throwaway cluster (the user in its URLs).
SUPERUSER = "postgres"
#: Seconds the server may take to start and to accept a connection; seconds any one command may take.
START_TIMEOUT = 30.0
COMMAND_TIMEOUT = 60.0
#: Appended to postgresql.conf: speed over durability (the cluster is thrown away), little memory.
SETTINGS = """
listen_addresses = '127.0.0.1'
unix_socket_directories = '{sockets}'
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 16MB
max_connections = 50
"""
#: The whole pg_hba.conf: the socket (in the private temporary folder) and 127.0.0.1, nothing else.
HBA = """\
local all all trust
host all all 127.0.0.1/32 trust
"""
NO_SERVER = (
    f"no PostgreSQL server binaries (initdb, pg_ctl) found in /usr/lib/postgresql/*/bin, ${BIN_VARIABLE} "
    "or on the PATH: install Debian's postgresql package (apt-get install postgresql), "
    f"set {BIN_VARIABLE} to the folder holding them, or set {URL_VARIABLE} to the URL of a server to use"
)


class ClusterError(Exception):
    """The throwaway cluster could not be made, started or reached (the message ends with its log)."""


def find_bin() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``: ``SYNDICATOR_PG_BIN``, else Debian's of the
    highest version, else the folder of ``initdb`` on the PATH; None when there are none."""
    chosen = os.environ.get(BIN_VARIABLE)
    candidates: list[Path] = [Path(chosen)] if chosen else []
    if not chosen:

        def version(folder: Path) -> tuple[int, ...]:
            return tuple(int(part) for part in re.findall(r"\d+", folder.parent.name)) or (0,)

        candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True)
        on_path = shutil.which("initdb")
        if on_path:
            candidates.append(Path(on_path).resolve().parent)
    for folder in candidates:
        if all(os.access(folder / name, os.X_OK) for name in ("initdb", "pg_ctl")):
            return folder
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_accepting(url: str, timeout: float = START_TIMEOUT) -> None:
    """Return once ``url`` accepts a connection; ClusterError after ``timeout`` seconds."""
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            with psycopg.connect(url, connect_timeout=max(1, min(5, int(left))), autocommit=True) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError as error:
            if left <= 0:
                raise ClusterError(f"{url} accepted no connection in {timeout:.0f} s: {error}") from error
        time.sleep(0.1)


class _Runner:
    """Runs the cluster's commands: as the ``postgres`` system user when this is root, else as this user."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.output = folder / "commands.log"
        self.as_root = os.geteuid() == 0

    def prepare(self) -> None:
        if not self.as_root:
            return
        try:
            user = pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            raise ClusterError(
                f"running as root, and initdb refuses root; there is no {SYSTEM_USER!r} system user to run it as "
                "(Debian's postgresql package makes one)"
            ) from None
        os.chown(self.folder, user.pw_uid, user.pw_gid)
        probe = self.run(["test", "-w", str(self.folder), "-a", "-x", str(self.folder)], check=False)
        if probe.returncode != 0:
            raise ClusterError(f"the {SYSTEM_USER} user cannot reach {self.folder} (is a parent folder private?)")

    def run(self, argv: Sequence[str], *, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        command = list(argv)
        if self.as_root:
            if shutil.which("runuser"):
                command = ["runuser", "-u", SYSTEM_USER, "--", *command]
            else:
                command = ["su", SYSTEM_USER, "-s", "/bin/sh", "-c", shlex.join(command)]
        # Output goes to a file, not a pipe: the server pg_ctl starts must hold nothing of ours open.
        with open(self.output, "ab") as log:
            log.write(f"$ {shlex.join(command)}\n".encode())
            log.flush()
            try:
                done = subprocess.run(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    cwd=self.folder,
                    env={**os.environ, "LC_ALL": "C", "LANG": "C"},
                    timeout=COMMAND_TIMEOUT,
                    check=False,
                )
            except subprocess.TimeoutExpired as error:
                raise ClusterError(f"{shlex.join(command)} took over {COMMAND_TIMEOUT:.0f} s{self.logs()}") from error
        if check and done.returncode != 0:
            raise ClusterError(f"{shlex.join(command)} exited with {done.returncode}{self.logs()}")
        return done

    def logs(self) -> str:
        """The ends of the commands' output and of the server's log, to explain a failure."""
        text = ""
        for path in (self.output, self.folder / "server.log"):
            with suppress(OSError):
                tail = path.read_text(errors="replace").splitlines()[-30:]
                text += f"\n--- {path.name}:\n" + "\n".join(tail)
        return text


@contextmanager
def throwaway_cluster(bin_dir: Path) -> Iterator[str]:
    """Make and start a cluster with the binaries in ``bin_dir``; yield its superuser URL (database
    ``postgres``); stop it and remove its folder on the way out, whatever happened."""
    base = None if len(tempfile.gettempdir()) < 60 else "/tmp"  # a socket's path has at most 107 bytes
    folder = Path(tempfile.mkdtemp(prefix="syndicator-pg-", dir=base))
    data = folder / "data"
    runner = _Runner(folder)
    started = False
    try:
        runner.prepare()
        runner.run(
            [
                str(bin_dir / "initdb"),
                "--pgdata",
                str(data),
                "--username",
                SUPERUSER,
                "--auth",
                "trust",
                "--encoding",
                "UTF8",
                "--locale",
                "C",
                "--no-sync",
            ]
        )
        with open(data / "postgresql.conf", "a") as conf:
            conf.write(SETTINGS.format(sockets=folder))
        (data / "pg_hba.conf").write_text(HBA)
        for _attempt in range(3):  # the free port may be taken between choosing and binding it
            port = free_port()
            started = True
            done = runner.run(
                [
                    str(bin_dir / "pg_ctl"),
                    "start",
                    "--pgdata",
                    str(data),
                    "--log",
                    str(folder / "server.log"),
                    "--wait",
                    "--timeout",
                    str(int(START_TIMEOUT)),
                    "--options",
                    f"-p {port}",
                ],
                check=False,
            )
            if done.returncode == 0:
                break
            if "already in use" not in runner.logs():
                raise ClusterError(f"pg_ctl start exited with {done.returncode}{runner.logs()}")
        else:
            raise ClusterError(f"no free port for the server after 3 tries{runner.logs()}")
        url = f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres"
        try:
            wait_until_accepting(url)
        except ClusterError as error:
            raise ClusterError(f"{error}{runner.logs()}") from error
        yield url
    finally:
        if started:
            stopped = (
                runner.run(
                    [
                        str(bin_dir / "pg_ctl"),
                        "stop",
                        "--pgdata",
                        str(data),
                        "--mode",
                        "immediate",
                        "--wait",
                        "--timeout",
                        str(int(START_TIMEOUT)),
                    ],
                    check=False,
                )
                if data.exists()
                else None
            )
            if stopped is not None and stopped.returncode != 0:
                _kill_postmaster(data)
        shutil.rmtree(folder, ignore_errors=True)


def _kill_postmaster(data: Path) -> None:
    """The last resort when pg_ctl could not stop the server: SIGKILL the postmaster named in its pid file."""
    with suppress(OSError, ValueError, IndexError):
        pid = int((data / "postmaster.pid").read_text().splitlines()[0])
        os.kill(pid, 9)


def with_database(url: str, name: str) -> str:
    """``url`` naming the database ``name`` instead of its own."""
    if url.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(url)
        return urlunsplit(parts._replace(path="/" + name))
    from psycopg.conninfo import make_conninfo

    return make_conninfo(url, dbname=name)


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """The URL of a superuser connection to a PostgreSQL server only this run uses (see the module)."""
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install -e '.[test]'")
    existing = os.environ.get(URL_VARIABLE)
    if existing:
        wait_until_accepting(existing, timeout=10.0)
        yield existing
        return
    bin_dir = find_bin()
    if bin_dir is None:
        chosen = os.environ.get(BIN_VARIABLE)
        pytest.skip(f"{BIN_VARIABLE}={chosen} holds no initdb and pg_ctl" if chosen else NO_SERVER)
    with throwaway_cluster(bin_dir) as url:
        yield url


@pytest.fixture
def pg_database(postgres_url: str) -> Iterator[str]:
    """The URL of a new, empty database for this test alone; dropped afterwards."""
    import psycopg
    from psycopg import sql

    name = f"syndicator_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_url, autocommit=True, connect_timeout=10) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield with_database(postgres_url, name)
    finally:
        with psycopg.connect(postgres_url, autocommit=True, connect_timeout=10) as admin:
            admin.execute("SET statement_timeout = '30s'")
            # FORCE (PostgreSQL 13+) ends the connections a test left open.
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
