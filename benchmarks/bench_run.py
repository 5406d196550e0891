"""Run one build as a child process with a timeout and measure its peak memory.

The child runs in its own process group (session) so that a timeout or Ctrl-C
ends it and everything it started. Peak RSS comes from `/usr/bin/time -v` when
that exists, else from the rusage that os.wait4 returns for the child.
"""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TIME = Path("/usr/bin/time")


@dataclass(frozen=True)
class Run:
    """How a build ended: exit code (None if killed), wall seconds, peak RSS bytes."""

    exit_code: int | None
    wall_s: float
    peak_rss_bytes: int | None


def run_build(cmd: list[str], logdir: Path, name: str, timeout_s: float) -> Run:
    """Run `cmd` in its own process group, output to logdir/name.{out,err}; kill the
    group after timeout_s seconds. Peak RSS from /usr/bin/time -v if present, else
    from os.wait4's rusage of the child."""
    timefile = logdir / f"{name}.time"
    use_time = TIME.exists()
    full = [str(TIME), "-v", "-o", str(timefile), *cmd] if use_time else cmd
    began = time.monotonic()
    with open(logdir / f"{name}.out", "wb") as out, open(logdir / f"{name}.err", "wb") as err:
        proc = subprocess.Popen(full, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        code, rusage = _wait(proc, began + timeout_s)
    wall = time.monotonic() - began
    rss = _time_rss(timefile) if use_time else _rusage_rss(rusage)
    return Run(code, wall, rss)


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> tuple[int | None, Any]:
    """Reap proc with os.wait4, killing its group at `deadline` (monotonic seconds).
    Returns (exit code or None if killed for the timeout, rusage)."""
    killed = False
    try:
        while True:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(status)
                return (None if killed else proc.returncode), rusage
            if not killed and time.monotonic() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                killed = True
            time.sleep(0.02)
    except BaseException:  # e.g. Ctrl-C: the build runs in its own session, end it too
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            os.waitpid(proc.pid, 0)
            proc.returncode = -signal.SIGKILL
        raise


def _time_rss(timefile: Path) -> int | None:
    try:
        for line in timefile.read_text().splitlines():
            if "Maximum resident set size" in line:
                return int(line.rsplit(":", 1)[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def _rusage_rss(rusage: Any) -> int | None:
    if rusage is None:
        return None
    return int(rusage.ru_maxrss) * (1 if platform.system() == "Darwin" else 1024)
