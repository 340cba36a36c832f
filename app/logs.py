"""Logging, configured once at start-up (`configure_logging`), Qt-free.

- Every process (GUI or command) writes a rotating log file, `hayai-desktop.log` in the user log
  folder (platformdirs `user_log_dir`, or `$HAYAI_LOG_DIR`): at most MAX_BYTES a file, BACKUPS
  older files beside it (`.1`, `.2`, ...). The app's own loggers (`app.*`) log from INFO up,
  other libraries from WARNING up; Python warnings and uncaught exceptions are logged too.
- Commands also print warnings and errors on stderr (`stderr=True`), one line each
  (`hayai-desktop: warning: ...`).
- The GUI forwards the app's warnings to the status bar (app.ui.common.log_bridge). Warnings logged
  before its window exists (a damaged settings file at start-up) wait in `pending_warnings()`.

A record logged with `extra={SHOWN: True}` has already been shown to the user another way (an
error dialog, the notice bar): it goes to the file, not again to the status bar.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
from collections import deque
from logging.handlers import RotatingFileHandler
from pathlib import Path

LOG_FILE = "hayai-desktop.log"
MAX_BYTES = 1_000_000
BACKUPS = 3
APP_LOGGER = "app"
SHOWN = "shown_to_user"
FILE_FORMAT = "%(asctime)s %(levelname)-7s %(name)s [%(threadName)s] %(message)s"

_lock = threading.Lock()
_state: dict = {}
_pending: deque = deque(maxlen=20)


def log_dir() -> Path:
    """Where the log files are: `$HAYAI_LOG_DIR`, else platformdirs' user log folder."""
    override = os.environ.get("HAYAI_LOG_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_log_dir

    return Path(user_log_dir("hayai-desktop", appauthor=False))


def log_file() -> Path | None:
    """The file this process logs to; None before `configure_logging`, or when none could be opened."""
    return _state.get("file")


class _Stderr(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time of each record (it may be replaced)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


class _OneLine(logging.Formatter):
    """`hayai-desktop: WARNING: message`, without the traceback (that goes to the file)."""

    def format(self, record: logging.LogRecord) -> str:
        return f"hayai-desktop: {record.levelname.lower()}: {record.getMessage()}"


class _Pending(logging.Handler):
    """Keeps the app's last warnings until a window takes them over (`pending_warnings`)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        if not getattr(record, SHOWN, False) and not _state.get("claimed"):
            _pending.append((record.levelname, record.getMessage()))


def pending_warnings() -> list[tuple[str, str]]:
    """(level name, message) of the app's warnings logged before a window could show them, oldest
    first. The caller shows them and everything after: nothing is kept from then on."""
    _state["claimed"] = True
    out = list(_pending)
    _pending.clear()
    return out


def configure_logging(*, stderr: bool, max_bytes: int = MAX_BYTES, backups: int = BACKUPS) -> Path | None:
    """Set up logging for this process (the first call wins; later calls return the same file).

    stderr: also print WARNING and above on stderr (the commands). Returns the log file, or None
    when its folder cannot be written (then logging goes to stderr and that is said there).
    """
    with _lock:
        if _state.get("configured"):
            return _state.get("file")
        root = logging.getLogger()
        root.setLevel(logging.WARNING)
        logging.getLogger(APP_LOGGER).setLevel(logging.INFO)
        path = None
        folder = log_dir()
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handler = RotatingFileHandler(folder / LOG_FILE, maxBytes=max_bytes, backupCount=backups,
                                          encoding="utf-8")
        except OSError as exc:
            print(f"hayai-desktop: cannot write a log file in {folder} ({exc.strerror or exc}); "
                  "messages go to the terminal only.", file=sys.stderr)
            stderr = True
        else:
            handler.setFormatter(logging.Formatter(FILE_FORMAT))
            root.addHandler(handler)
            path = folder / LOG_FILE
        if stderr:
            err = _Stderr()
            err.setLevel(logging.WARNING)
            err.setFormatter(_OneLine())
            root.addHandler(err)
        else:
            logging.getLogger(APP_LOGGER).addHandler(_Pending())
        logging.captureWarnings(True)
        _install_excepthooks()
        _state.update(configured=True, file=path)
        logging.getLogger(__name__).info("started (pid %d), log file %s", os.getpid(), path)
        return path


def _install_excepthooks() -> None:
    """Uncaught exceptions (a Qt slot, a thread) are logged with their traceback, then handled as
    before (printed)."""
    log = logging.getLogger("app.uncaught")
    previous = sys.excepthook

    def hook(kind, value, tb) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            log.error("unexpected error: %s: %s", kind.__name__, value, exc_info=(kind, value, tb))
        previous(kind, value, tb)

    sys.excepthook = hook
    previous_thread_hook = threading.excepthook

    def thread_hook(args) -> None:
        if args.exc_type is not None and not issubclass(args.exc_type, SystemExit):
            log.error("unexpected error in thread %s: %s: %s", getattr(args.thread, "name", "?"),
                      args.exc_type.__name__, args.exc_value,
                      exc_info=(args.exc_type, args.exc_value, args.exc_traceback))
        previous_thread_hook(args)

    threading.excepthook = thread_hook
