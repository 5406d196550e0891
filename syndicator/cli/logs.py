"""The commands' log lines on stderr: ``syndicator: LEVEL: MESSAGE``, as many as -v and -q ask
for, kept off the line of a progress bar drawn on the same stream.

One policy for build, serve and worker (docs/monitoring.md): ``info`` for their life-cycle (started,
listening, reloaded, stopped) and a feed that recovers, said on the ``syndicator.lifecycle`` logger,
which is shown one level lower than the rest, so by default; ``warning`` for what is degraded (a feed
failing with a last good copy, a host left alone); ``error`` for what fails (a feed that never worked,
a broken sites.yaml). Other ``info`` lines are details shown with ``-v``.
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

#: The logger of the commands' life-cycle lines (started, listening, reloaded, stopped, a feed recovered),
#: shown at INFO by default.
LIFECYCLE = "syndicator.lifecycle"


class LogHandler(logging.StreamHandler):
    """Log records as lines on a stream: ``syndicator: LEVEL: MESSAGE``.

    While a progress bar is drawn on that stream (``bar_shown``), a record
    first clears the bar's line, so no log line is written onto the bar; the
    bar draws itself again on the line below at its next step.
    """

    CLEAR_LINE = "\r\033[K"  # back to the start of the line, then erase to its end (ANSI)

    def __init__(self, stream: TextIO) -> None:
        super().__init__(stream)
        self.bar_shown = False

    def format(self, record: logging.LogRecord) -> str:
        return f"syndicator: {record.levelname.lower()}: {record.getMessage()}"

    def emit(self, record: logging.LogRecord) -> None:
        try:
            # One write, so a bar drawn from another thread cannot come between the clearing and the line.
            self.stream.write((self.CLEAR_LINE if self.bar_shown else "") + self.format(record) + self.terminator)
            self.flush()
        except Exception:
            self.handleError(record)


def setup_logging(verbose: int, quiet: int) -> LogHandler:
    """Send the ``syndicator`` logger's records to stderr through a new :class:`LogHandler`, returned.

    The level is WARNING, one step (10) lower per ``verbose`` and higher per ``quiet``,
    kept between DEBUG and CRITICAL; the :data:`LIFECYCLE` logger's is one step lower (INFO by
    default, so life-cycle lines show without ``-v`` and go with ``-q``). Handlers set before are removed.
    """
    level = logging.WARNING + 10 * (quiet - verbose)
    logger = logging.getLogger("syndicator")
    logger.handlers.clear()
    handler = LogHandler(sys.stderr)
    logger.addHandler(handler)
    logger.setLevel(_bounded(level))
    logger.propagate = False
    logging.getLogger(LIFECYCLE).setLevel(_bounded(level - 10))  # its records reach the handler above
    return handler


def _bounded(level: int) -> int:
    """``level`` kept between DEBUG and CRITICAL."""
    return max(logging.DEBUG, min(level, logging.CRITICAL))
