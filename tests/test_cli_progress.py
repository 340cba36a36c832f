"""The subcommands' progress bars (tqdm): drawn on a terminal, ended with their line, nothing
on a stream that is not a terminal (a log file, a pipe)."""
from __future__ import annotations

import io

from app.commands.common import ProgressLine


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_line_draws_on_a_terminal_and_ends_its_line():
    term = _Terminal()
    bar = ProgressLine("export (cbz)", term)
    for done in range(4):
        bar(done, 3, f"page-00{done}.png")
    out = term.getvalue()
    assert out.startswith("\rexport (cbz):") and "3/3" in out and "100%|" in out and out.endswith("\n"), out
    assert bar.bar is None  # closed at the end: a next run draws a new bar


def test_the_progress_line_is_silent_when_the_stream_is_not_a_terminal():
    log = io.StringIO()
    bar = ProgressLine("reading", log)
    for done in range(4):
        bar(done, 3)
    assert log.getvalue() == ""
