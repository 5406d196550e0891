"""Signals for the long-running commands (``serve``, ``worker``), handled on a thread of their own.

A Python signal handler runs in the main thread between two of its steps, whatever the main thread
holds: a handler that puts on a :class:`queue.Queue` or sets a :class:`threading.Event` while the main
thread is inside that queue's or event's lock waits for itself forever (their locks are not
reentrant; the Python documentation only calls :class:`queue.SimpleQueue` safe there). So the signals
are blocked in every thread (``pthread_sigmask``, inherited by the threads started later) and one
thread takes them with ``sigwait`` and runs the action as ordinary code. Where the platform has no
``pthread_sigmask`` (Windows), the actions are plain handlers.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Mapping


def handle_on_a_thread(actions: Mapping[signal.Signals, Callable[[], None]]) -> None:
    """Run ``actions[number]`` (no arguments) each time the process receives that signal.

    Call it before any other thread starts: a thread started earlier keeps the signals unblocked and
    may take one with the default action.
    """
    if not hasattr(signal, "pthread_sigmask"):
        for number, action in actions.items():
            signal.signal(number, lambda *_, act=action: act())
        return
    numbers = set(actions)
    signal.pthread_sigmask(signal.SIG_BLOCK, numbers)

    def take() -> None:
        while True:
            actions[signal.Signals(signal.sigwait(numbers))]()

    threading.Thread(target=take, name="signals", daemon=True).start()
