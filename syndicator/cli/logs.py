"""The commands' log lines on stderr: ``syndicator: LEVEL: MESSAGE``, as many as -v and -q ask
for, kept off the line of a progress bar drawn on the same stream."""

from __future__ import annotations

import logging
import sys
from typing import TextIO


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
    kept between DEBUG and CRITICAL; handlers set before are removed.
    """
    level = logging.WARNING + 10 * (quiet - verbose)
    logger = logging.getLogger("syndicator")
    logger.handlers.clear()
    handler = LogHandler(sys.stderr)
    logger.addHandler(handler)
    logger.setLevel(max(logging.DEBUG, min(level, logging.CRITICAL)))
    logger.propagate = False
    return handler
