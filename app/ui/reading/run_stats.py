"""Counts and time estimates of one run over pages, for the status bar (no Qt).

The estimate leaves out loading the models: the clock starts at the pipeline's first progress
report, which comes once the models are loaded; from then on, the time per page so far times the
pages left. The summary counts the pages whose results arrived, not the pages asked for (a
cancelled run of 80 pages that read 20 says so).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class RunStats:
    total: int  # pages asked for
    clock: Callable[[], float] = time.monotonic
    started: float = field(default=0.0)  # when the run was asked for
    read: int = 0  # pages whose results arrived
    _work_started: float | None = None  # first progress report: the models are loaded

    def __post_init__(self) -> None:
        self.started = self.started or self.clock()

    def progressed(self, pages_done: int) -> None:
        if self._work_started is None:
            self._work_started = self.clock()

    def page_read(self) -> None:
        self.read += 1

    def seconds_left(self, pages_done: int) -> float | None:
        """Estimated seconds to the end, None before the first page is done (or at the end)."""
        if self._work_started is None or pages_done <= 0 or pages_done >= self.total:
            return None
        per_page = (self.clock() - self._work_started) / pages_done
        return per_page * (self.total - pages_done)

    def eta_text(self, pages_done: int) -> str:
        left = self.seconds_left(pages_done)
        if left is None:
            return ""
        return f" · about {int(left // 60)}:{int(left % 60):02d} left"

    def summary(self, status: str) -> str:
        """'Done: 12 page(s) in 8.1 s', 'Cancelled: 20 of 80 page(s) read in 4.2 s', ..."""
        secs = self.clock() - self.started
        label = {"done": "Done", "cancelled": "Cancelled", "failed": "Failed"}.get(status, status)
        if status == "done" and self.read == self.total:
            return f"{label}: {self.read} page(s) in {secs:.1f} s"
        return f"{label}: {self.read} of {self.total} page(s) read in {secs:.1f} s"
