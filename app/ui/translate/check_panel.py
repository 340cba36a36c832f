"""The Consistency dock: `app.core.translation.consistency` over the open volume, one row per finding (page,
block, kind, detail); a click shows the block. The text checks run at once; the lettering
checks (below the minimum size, clipped) letter the pages as the export does, on a one-thread
pool, and join the list when done. A new check or another volume drops a late result."""
from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.ui.common.threads import track_pool
from app.ui.editor.items import overlay_font


class _Signals(QObject):
    done = Signal(int, object, object)  # check id, findings, skipped


class _LayoutJob(QRunnable):
    def __init__(self, check_id: int, project, signals: _Signals, cancel: threading.Event, options):
        super().__init__()
        self.check_id, self.project, self.signals, self.cancel, self.options = \
            check_id, project, signals, cancel, options

    def run(self) -> None:
        from app.core.translation.consistency import check_project
        from app.errors import Cancelled

        try:
            findings, skipped = check_project(self.project, layout=True, options=self.options,
                                              cancel=self.cancel.is_set, text=False)
        except Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - reported in the panel, never lost
            findings, skipped = [], [("*", f"the lettering check failed: {exc}")]
        self.signals.done.emit(self.check_id, findings, skipped)


class CheckPanel(QWidget):
    """`jump(page, block id)` when a row is clicked; `checked(count)` when a check is complete."""

    jump = Signal(str, str)
    checked = Signal(int)

    def __init__(self, doc, parent=None):
        super().__init__(parent)
        from app.core.translation.consistency import LABELS

        self.doc = doc
        self.labels = LABELS
        self.findings: list = []
        self.check_id = 0
        self._cancel = threading.Event()
        self.pool = track_pool(QThreadPool(self))
        self.pool.setMaxThreadCount(1)
        self._signals = _Signals()
        self._signals.done.connect(self._on_layout)
        self.run_button = QPushButton("Check the volume")
        self.layout_box = QCheckBox("Lettering (size, clipped)")
        self.layout_box.setChecked(True)
        self.status = QLabel("Finds lines translated differently, names not used, untranslated, degenerate and repeated "
                            "answers, and clipped blocks.")
        self.status.setWordWrap(True)
        self.table = QTableWidget(0, 3)
        self.table.setHorizontalHeaderLabels(["Where", "Kind", "Detail"])
        self.table.setWordWrap(True)
        self.table.setFont(overlay_font(13))
        self.table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.cellClicked.connect(self._on_click)
        top = QHBoxLayout()
        top.addWidget(self.run_button)
        top.addWidget(self.layout_box)
        top.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(top)
        lay.addWidget(self.status)
        lay.addWidget(self.table, 1)
        self.run_button.clicked.connect(lambda: self.run_check())
        doc.project_reset.connect(self.clear)

    def clear(self) -> None:
        self._cancel.set()
        self.check_id += 1
        self.findings = []
        self.table.setRowCount(0)

    def run_check(self, layout: bool | None = None, glossary=(), options=None) -> int:
        """Check the open volume; returns the check's id."""
        from app.core.document.types import Project
        from app.core.translation.consistency import check_text, sort_findings

        self.clear()
        project = self.doc.project
        if project is None:
            return self.check_id
        self._cancel = threading.Event()
        self.findings = sort_findings(project, check_text(project, glossary))
        self._show()
        layout = self.layout_box.isChecked() if layout is None else layout
        if layout:
            snapshot = Project(source=project.source, pages=list(project.pages), order=project.order,
                               style=project.style, sizes=project.sizes, outside=dict(project.outside))
            self.status.setText(f"{len(self.findings)} finding(s) so far; lettering the pages…")
            self.pool.start(_LayoutJob(self.check_id, snapshot, self._signals, self._cancel, options))
        else:
            self._done([])
        return self.check_id

    def _on_layout(self, check_id: int, findings, skipped) -> None:
        from app.core.translation.consistency import sort_findings

        if check_id != self.check_id or self.doc.project is None:
            return  # an older check, or another volume
        self.findings = sort_findings(self.doc.project, [*self.findings, *findings])
        self._show()
        self._done(skipped)

    def _done(self, skipped) -> None:
        note = f"{len(self.findings)} finding(s)." if self.findings else "Nothing found."
        if skipped:
            note += " Not lettered: " + "; ".join(f"{n}: {why}" for n, why in skipped[:3])
        self.status.setText(note)
        self.checked.emit(len(self.findings))

    def _show(self) -> None:
        self.table.setRowCount(0)
        for f in self.findings:
            row = self.table.rowCount()
            self.table.insertRow(row)
            for col, value in enumerate((f"{f.page} #{f.order}", self.labels.get(f.kind, f.kind), f.detail)):
                cell = QTableWidgetItem(value)
                cell.setToolTip(f.detail)
                self.table.setItem(row, col, cell)
        self.table.resizeColumnToContents(0)
        self.table.resizeColumnToContents(1)
        self.table.resizeRowsToContents()

    def _on_click(self, row: int, _col: int) -> None:
        if 0 <= row < len(self.findings):
            f = self.findings[row]
            self.jump.emit(f.page, f.block)

    def stop(self, timeout_ms: int = 30000) -> bool:
        self._cancel.set()
        return self.pool.waitForDone(timeout_ms)
