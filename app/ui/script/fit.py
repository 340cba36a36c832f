"""The lettering fit of the volume's translated blocks, for the Script view and the block list.

A block "overflows" (its translation does not fit even at the smallest size and is cut to the
bubble) or is set "below minimum size", as the export letters it: `app.core.translation.consistency.fit_statuses`,
the layout of app.render.page.PageRenderer with the page's harmonised sizes and the translated
view's options, so what the Script view says is what `hayai-desktop render` / `check` find.

The layout needs the page image, so pages are checked on a one-thread pool, page by page: the
page shown, and every page with a translation while the Script view is shown. Each page's result
is kept with its key (`app.core.translation.consistency.fit_key`: the blocks' text, boxes, styles, the page's
sizes, the options); an edit that changes the key drops the page's result and checks it again,
so the statuses never describe an older text. Looking a status up is a dict lookup (10,000
blocks filter at once).
"""
from __future__ import annotations

import threading
from dataclasses import replace

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from app.ui.common.threads import track_pool

FIT_STATUSES = ("overflows", "below minimum size")


class _Signals(QObject):
    checked = Signal(int, str, object, object)  # generation, page name, key, {block id: status}
    failed = Signal(int, str, str)  # generation, page name, why
    ended = Signal(int)


class _CheckJob(QRunnable):
    """Decode each page and lay its translations out (no cleaning), until cancelled."""

    def __init__(self, signals: _Signals, gen: int, source: str, jobs: list, project, options,
                 cancel: threading.Event):
        super().__init__()
        self.signals, self.gen, self.source, self.jobs = signals, gen, source, jobs
        self.project, self.options, self.cancel = project, options, cancel

    def run(self) -> None:
        from app.core.sources.source import open_source
        from app.core.translation.consistency import (  # the render stack loads here, off the GUI thread
            fit_key,
            fit_statuses,
        )

        try:
            try:
                source = open_source(self.source)
            except Exception as exc:  # noqa: BLE001 - thread boundary: said once, nothing checked
                self.signals.failed.emit(self.gen, "", str(exc))
                return
            try:
                for name, page in self.jobs:
                    if self.cancel.is_set():
                        break
                    try:
                        key = fit_key(page, self.project, self.options)
                        statuses = fit_statuses(page, source.load(name), self.project, self.options)
                    except Exception as exc:  # noqa: BLE001 - this page only
                        self.signals.failed.emit(self.gen, name, str(exc))
                        continue
                    self.signals.checked.emit(self.gen, name, key, statuses)
            finally:
                source.close()
        finally:
            self.signals.ended.emit(self.gen)


class FitChecker(QObject):
    """Emits `changed(page name)` when a page's fit statuses changed (found or dropped),
    `progressed()` when the count of pages checked moves."""

    changed = Signal(str)
    progressed = Signal()

    def __init__(self, doc, settings, current=lambda: "", parent=None):
        """`settings()`: the app's settings now (the translation's target language);
        `current()`: the page shown (checked also while the Script view is hidden)."""
        super().__init__(parent)
        self.doc, self.settings, self.current = doc, settings, current
        self._fit: dict[str, tuple[tuple | None, dict[str, str]]] = {}  # page name -> (key, statuses)
        self._pending: list[str] = []
        self._gen = 0
        self._cancel = threading.Event()
        self._running = False
        self.active = False  # check every page (the Script view is shown), not only the page shown
        self.pool = track_pool(QThreadPool(self))
        self.pool.setObjectName("script-fit")
        self.pool.setMaxThreadCount(1)
        self.signals = _Signals(self)
        self.signals.checked.connect(self._on_checked)
        self.signals.ended.connect(self._on_ended)
        doc.project_reset.connect(self._on_reset)
        doc.page_changed.connect(self._on_page_changed)
        doc.project_changed.connect(self._on_project_changed)

    # --- what the views read ------------------------------------------------------------------
    def status(self, name: str, block_id: str) -> str:
        """"overflows", "below minimum size" or "" (fits, nothing lettered, or not checked yet)."""
        hit = self._fit.get(name)
        return hit[1].get(block_id, "") if hit is not None else ""

    def statuses(self, name: str) -> dict[str, str]:
        hit = self._fit.get(name)
        return dict(hit[1]) if hit is not None else {}

    def checked_pages(self) -> tuple[int, int]:
        """(pages checked, pages with a translation to check)."""
        names = self._to_check()
        return sum(1 for n in names if n in self._fit), len(names)

    def busy(self) -> bool:
        return self._running or bool(self._pending)

    # --- scheduling ---------------------------------------------------------------------------
    def set_active(self, on: bool) -> None:
        self.active = on
        if on:
            self.check([n for n in self._to_check() if n not in self._fit])
        else:
            self._pending.clear()

    def ensure(self, name: str) -> None:
        """Check page `name` unless its result is known (the page shown)."""
        if name and name not in self._fit:
            self.check([name])

    def check(self, names) -> None:
        """Check these pages (in this order, after those already waiting)."""
        if self.doc.project is None:
            return
        for name in names:
            if name not in self._pending and self.doc.has_page(name):
                self._pending.append(name)
        self._start()

    def remember(self, name: str, key: tuple | None, statuses: dict[str, str]) -> None:
        """A page's result (from the background job; benchmarks fill it directly)."""
        old = self._fit.get(name)
        self._fit[name] = (key, dict(statuses))
        if old is None or old[1] != statuses:
            self.changed.emit(name)
        self.progressed.emit()

    def _to_check(self) -> list[str]:
        project = self.doc.project
        if project is None:
            return []
        return [p.name for p in project.pages if p.processed and not p.error and
                any(b.translation.strip() for b in p.blocks)]

    def _options(self):
        from app.core.exports.translated_pages import translated_options

        return translated_options(getattr(self.settings(), "translation_target", ""))

    def _key(self, page):
        from app.core.translation.consistency import fit_key

        return fit_key(page, self.doc.project, self._options())

    def _start(self) -> None:
        if self._running or not self._pending or self.doc.project is None:
            return
        project = self.doc.project
        jobs = []
        for name in self._pending:
            page = self.doc.page(name)
            if not any(b.translation.strip() for b in page.blocks):
                self.remember(name, None, {})  # nothing lettered: nothing can overflow
                continue
            jobs.append((name, page))
        self._pending.clear()
        if not jobs:
            return
        self._running = True
        self._cancel = threading.Event()
        shell = replace(project, pages=[])  # the style and sizes the layout needs
        self.pool.start(_CheckJob(self.signals, self._gen, project.source, jobs, shell, self._options(),
                                  self._cancel))

    def _on_checked(self, gen: int, name: str, key, statuses) -> None:
        if gen != self._gen or not self.doc.has_page(name):
            return
        if self._key(self.doc.page(name)) == key:  # else changed meanwhile: checked again (page_changed)
            self.remember(name, key, statuses)

    def _on_ended(self, gen: int) -> None:
        if gen == self._gen:
            self._running = False
            self._start()

    # --- the document changed -----------------------------------------------------------------
    def _drop(self, name: str) -> None:
        old = self._fit.pop(name, None)
        if old is not None and old[1]:
            self.changed.emit(name)

    def _on_page_changed(self, name: str) -> None:
        hit = self._fit.get(name)
        # (a key is None for a page with nothing lettered; computing one loads the render stack,
        # which a checked page has done already, off the GUI thread)
        if hit is not None and hit[0] is not None and self.doc.has_page(name) \
                and hit[0] == self._key(self.doc.page(name)):
            return  # nothing the lettering depends on changed
        self._drop(name)
        if self.active or name == self.current():
            self.check([name])
        self.progressed.emit()

    def _on_project_changed(self, what: str) -> None:
        if what in ("style", "sizes", "outside"):  # what the lettering fit depends on
            for name in list(self._fit):
                self._on_page_changed(name)

    def _on_reset(self) -> None:
        self._gen += 1  # what the running job still sends is for the project before
        self._cancel.set()
        self._running = False
        self._pending.clear()
        names = list(self._fit)
        self._fit.clear()
        for name in names:
            self.changed.emit(name)
        self.progressed.emit()
        if self.active:
            self.set_active(True)

    def stop(self, timeout_ms: int = 30000) -> bool:
        """At exit: cancel and wait for the running page at most `timeout_ms`."""
        self._gen += 1
        self._cancel.set()
        self._pending.clear()
        self.pool.clear()
        return self.pool.waitForDone(timeout_ms)
