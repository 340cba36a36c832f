"""The translation report: every block a run left untranslated, by page and block number, and why.

`report_rows(outcome, page_numbers)` turns a page's outcome into rows; the run's banner names
them all when they are few, and `ReportDialog` lists every one of them (the banner's "Show every
block"), each row a way to that block; `ReportNotice` is that banner and dialog in the window."""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

IN_BANNER = 8  # rows the banner names itself; more are counted there and listed in the dialog


@dataclass(frozen=True)
class ReportRow:
    page_number: int  # 1-based, in the volume's order
    page: str  # the page's file name
    block_number: int  # the block's reading-order number on its page (0: the page as a whole)
    block_id: str
    why: str


def report_rows(outcome, page_number: int) -> list[ReportRow]:
    """The blocks of `outcome`'s page left untranslated, in reading order (the page itself when
    its blocks are not known)."""
    page = outcome.page
    ids = list(outcome.missing)
    ids += [b for b in outcome.untranslated if b not in ids]
    if (outcome.error or outcome.skipped) and not ids:  # the page failed or was not attempted: its blocks
        ids = [b.id for b in page.blocks if b.id not in outcome.texts and not b.translation]
    rows = []
    for bid in ids:
        block = page.block(bid)
        if bid in outcome.untranslated:
            why = f"looks untranslated (the answer was {outcome.untranslated[bid]!r})"
        else:
            why = outcome.reasons.get(bid) or outcome.error or outcome.skipped or "no translation in the answer"
        rows.append(ReportRow(page_number, outcome.name, block.order if block else 0, bid, why))
    if not rows and (outcome.error or outcome.skipped):
        rows.append(ReportRow(page_number, outcome.name, 0, "", outcome.error or outcome.skipped or ""))
    return sorted(rows, key=lambda r: r.block_number)


def place(row: ReportRow) -> str:
    """"page 3 (p003.png), block 2" as the user finds it in the window."""
    where = f"page {row.page_number} ({row.page})"
    return f"{where}, block {row.block_number}" if row.block_number else where


def banner_text(rows: list[ReportRow]) -> str:
    """The run's banner: how many blocks on how many pages, each one named when they are few."""
    pages = len({r.page for r in rows})
    head = (f"Some blocks were not translated: {len(rows)} on {pages} page(s); Translate all resumes with them.")
    if len(rows) > IN_BANNER:
        return head + " Show every block lists them all."
    by_page: dict[tuple[int, str], list[ReportRow]] = {}
    for r in rows:
        by_page.setdefault((r.page_number, r.page), []).append(r)
    parts = []
    for (number, name), items in by_page.items():
        blocks = [str(r.block_number) for r in items if r.block_number]
        what = f"block {', '.join(blocks)}" if len(blocks) == 1 else f"blocks {', '.join(blocks)}" if blocks else ""
        why = "; ".join(sorted({r.why for r in items}))
        parts.append(f"page {number} ({name}){': ' + what if what else ''} ({why})")
    return head + " " + " · ".join(parts)


class ReportDialog(QDialog):
    """Every block of the report in a table (page, block, why); double-click goes to the block."""

    jump = Signal(str, str)  # page name, block id

    def __init__(self, rows: list[ReportRow], parent=None):
        super().__init__(parent)
        self.setWindowTitle("Blocks not translated")
        self.rows = list(rows)
        table = QTableWidget(len(rows), 3)
        table.setHorizontalHeaderLabels(["Page", "Block", "Why"])
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setWordWrap(True)
        for i, r in enumerate(rows):
            table.setItem(i, 0, QTableWidgetItem(f"{r.page_number} ({r.page})"))
            table.setItem(i, 1, QTableWidgetItem(str(r.block_number) if r.block_number else "whole page"))
            table.setItem(i, 2, QTableWidgetItem(r.why))
        table.horizontalHeader().setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        table.resizeColumnsToContents()
        table.resizeRowsToContents()
        table.cellDoubleClicked.connect(lambda row, _c: self.jump.emit(self.rows[row].page, self.rows[row].block_id))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(QLabel(f"{len(rows)} block(s) were not translated. Translate all sends them again; "
                             "double-click a row to go to the block."))
        lay.addWidget(table)
        lay.addWidget(buttons)
        self.table = table
        self.resize(640, 420)


class ReportNotice:
    """The window's banner for the last run's report, and the dialog it opens. `window`: the
    translation window (show_notice, clear_notice, doc, jump_to_block); `parent`: () -> the
    dialogs' parent widget."""

    def __init__(self, window, parent):
        self.window = window
        self._parent = parent
        self.rows: list[ReportRow] = []

    def show(self, rows) -> None:
        """A banner naming the blocks left untranslated (page and number), with the way to the
        list of every one of them."""
        self.rows = list(rows)
        self.window.show_notice("warning", banner_text(self.rows), [("Show every block", self.open)],
                                owner="translation-report")

    def refresh(self) -> None:
        """The report keeps the blocks still without a translation; once there are none, it goes."""
        doc = self.window.doc

        def untranslated(r) -> bool:
            page = doc.page(r.page) if doc.has_page(r.page) else None
            if page is None:
                return False
            if not r.block_id:  # the page as a whole: while any of its blocks has no translation
                return any(not b.translation for b in page.blocks)
            block = page.block(r.block_id)
            return block is not None and not block.translation

        left = [r for r in self.rows if untranslated(r)]
        if left and left != self.rows:
            self.show(left)
        elif not left:
            self.rows = []
            self.window.clear_notice("translation-report")

    def open(self) -> ReportDialog:
        """The dialog listing every block of the report; returns it (shown modeless)."""
        dialog = ReportDialog(self.rows, self._parent())
        dialog.jump.connect(self.window.jump_to_block)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog
