"""Ending on a signal: SIGTERM (a logout, `kill`, a service manager), SIGHUP (the terminal that
started the app closed) and SIGINT (Ctrl+C in that terminal) end the app as closing its window
does, without the questions nobody is there to answer: the text being typed is committed, unsaved
edits are autosaved (the next start offers them, as after a crash), background work stops and the
project's lock is released, so the next start neither warns of a lock left behind nor loses an
edit. Python runs a signal handler only between its own bytecodes and Qt's event loop runs in C++,
so the signal is carried into the loop through `signal.set_wakeup_fd` on a socket pair that a
QSocketNotifier watches.
"""
from __future__ import annotations

import logging
import signal
import socket
from collections.abc import Callable

log = logging.getLogger(__name__)

SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name))


def end_now(window, quit_app: Callable[[], None], why: str) -> None:
    """Close `window` keeping every edit: commit the editors, autosave what is unsaved, stop the
    background work (the lock released), then `quit_app`."""
    if window.closing:
        return
    log.info("%s: closing; unsaved edits are kept in the autosave", why)
    window.finish_editing()
    window.session.autosave()
    window.hide()
    window.shutdown()
    quit_app()


def end_on_signals(window, quit_app: Callable[[], None]) -> Callable[[], None]:
    """From now on the signals of `SIGNALS` end the app through `end_now`. Call from the GUI
    thread; returns a function that puts the earlier handlers back."""
    from PySide6.QtCore import QSocketNotifier

    receiver, sender = socket.socketpair()
    receiver.setblocking(False)
    sender.setblocking(False)
    earlier_fd = signal.set_wakeup_fd(sender.fileno(), warn_on_full_buffer=False)
    earlier = {sig: signal.signal(sig, lambda *_: None) for sig in SIGNALS}  # the wakeup fd carries it
    notifier = QSocketNotifier(receiver.fileno(), QSocketNotifier.Type.Read, window)

    def woke() -> None:
        try:
            got = receiver.recv(64)
        except (BlockingIOError, InterruptedError):
            return
        if got:
            end_now(window, quit_app, signal.Signals(got[-1]).name)

    notifier.activated.connect(woke)

    def undo() -> None:
        notifier.setEnabled(False)
        signal.set_wakeup_fd(earlier_fd)
        for sig, handler in earlier.items():
            signal.signal(sig, handler)
        receiver.close()
        sender.close()

    return undo
