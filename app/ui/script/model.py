"""The Script table: every block of the volume as a row, over the window's DocumentModel.

`ScriptModel` (a QAbstractTableModel) lists the blocks page by page in reading order; the
Source and Translation cells are editable, each edit one undo step through the window's
`edit` (app.ui.editor.port.EditorWindow: the same undo commands as the block panel). A page changed anywhere (the canvas,
the panel, an undo, a translation run) updates its rows. The status is the translation's
(app.core.exports.script_table.block_status) and, where the lettering does not fit, the fit's
("overflows", "below minimum size": app.ui.script.fit, the export's layout). `ScriptFilter`
sorts and filters by status, page range and a text, or to the pages marked "check the order"
(their page and number cells tinted, the reason in their tooltip).
"""
from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor

from app.core.document import edits
from app.core.document.types import Block
from app.core.exports.script_table import block_status
from app.ui.common.status_colours import status_brush
from app.ui.editor.document_model import DocumentModel
from app.ui.script.fit import FIT_STATUSES

COLUMNS = ("Page", "#", "Kind", "Source", "Translation", "Status")
PAGE, NUMBER, KIND, SOURCE, TRANSLATION, STATUS = range(6)
STATUSES = ("not translated", "looks untranslated", "machine", "edited", *FIT_STATUSES)
ORDER_CHECK = "check the order"  # a filter, not a block's status: the blocks of pages marked so (Page.order_check)
STATUS_ROLE = Qt.ItemDataRole.UserRole + 1  # the status word
KEY_ROLE = Qt.ItemDataRole.UserRole + 2  # (page name, block id)
PAGE_ROLE = Qt.ItemDataRole.UserRole + 3  # the page's 1-based number


class ScriptModel(QAbstractTableModel):
    def __init__(self, doc: DocumentModel, edit, parent=None, fit=None):
        """`edit(fn, text, merge_key=None, page=NAME) -> bool`: the window's undoable edit;
        `fit`: the FitChecker whose statuses the rows show (None: none)."""
        super().__init__(parent)
        self.doc, self.edit, self.fit = doc, edit, fit
        self._rows: list[tuple[int, str, str]] = []  # (page index, page name, block id)
        self._first_row: dict[str, int] = {}  # page name -> its first row
        self._count: dict[str, int] = {}
        self._blocks: list[Block] = []
        self._status: list[str] = []  # block_status of each row, kept with the blocks
        self._fit: list[str] = []  # the lettering's fit of each row ("" = fits, or not known)
        self._check: dict[str, str] = {}  # page name -> why its order is to be checked (marked pages only)
        self._perm: list[int] = []  # shown row -> row in the volume's order (the table's sort)
        self._sort: tuple[int, Qt.SortOrder] = (-1, Qt.SortOrder.AscendingOrder)
        self.version = 0  # counts changes to the rows: a filter's cached answers are for one version
        doc.project_reset.connect(self.rebuild)
        doc.page_changed.connect(self._page_changed)
        if fit is not None:
            fit.changed.connect(self._fit_changed)
        self.rebuild()

    # --- structure ------------------------------------------------------------------------------
    def rebuild(self) -> None:
        self.version += 1
        self.beginResetModel()
        self._rows, self._blocks, self._first_row, self._count = [], [], {}, {}
        self._check = {}
        if self.doc.project is not None:
            for i, page in enumerate(self.doc.project.pages):
                if page.order_check:
                    self._check[page.name] = page.order_check
                self._first_row[page.name] = len(self._rows)
                ordered = sorted(page.blocks, key=lambda b: b.order)
                self._count[page.name] = len(ordered)
                self._rows += [(i, page.name, b.id) for b in ordered]
                self._blocks += ordered
        self._status = [block_status(b) for b in self._blocks]
        fit = self.fit.status if self.fit is not None else lambda _n, _b: ""
        self._fit = [fit(name, bid) for _i, name, bid in self._rows]
        self._perm = self._sorted(*self._sort)
        self.endResetModel()

    def _sorted(self, column: int, order) -> list[int]:
        rows = range(len(self._rows))
        if column < 0:
            return list(rows)
        key = {PAGE: lambda r: (self._rows[r][0], r), NUMBER: lambda r: (self._blocks[r].order, r),
               KIND: lambda r: (self._blocks[r].kind, r), SOURCE: lambda r: (self._blocks[r].display_text, r),
               TRANSLATION: lambda r: (self._blocks[r].translation, r),
               STATUS: lambda r: (self._fit[r], self._status[r], r)}[column]
        return sorted(rows, key=key, reverse=order == Qt.SortOrder.DescendingOrder)

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        """Sort the rows in Python (one key per row: fast at 10,000 rows); -1 = the volume's order."""
        self.version += 1
        self.layoutAboutToBeChanged.emit()
        before = self._perm
        self._sort = (column, order)
        self._perm = self._sorted(column, order)
        where = {base: shown for shown, base in enumerate(self._perm)}
        persistent = self.persistentIndexList()
        self.changePersistentIndexList(persistent, [self.index(where[before[i.row()]], i.column()) for i in persistent])
        self.layoutChanged.emit()

    def _page_changed(self, name: str) -> None:
        if name not in self._first_row or self.doc.project is None:
            return self.rebuild()
        page = self.doc.page(name)
        ordered = sorted(page.blocks, key=lambda b: b.order)
        start, old = self._first_row[name], self._count[name]
        if page.order_check:
            self._check[name] = page.order_check
        else:
            self._check.pop(name, None)
        index = self._rows[start][0] if old else self.doc.project.page_index(name)
        if len(ordered) != old:
            return self.rebuild()  # blocks added or removed: row numbers move (cheap at 10,000 rows)
        self._rows[start:start + old] = [(index, name, b.id) for b in ordered]
        self._blocks[start:start + old] = ordered
        self._status[start:start + old] = [block_status(b) for b in ordered]
        self._fit_rows(name, start, old)
        self._rows_changed(start, old)

    def _fit_rows(self, name: str, start: int, count: int) -> None:
        fit = self.fit.statuses(name) if self.fit is not None else {}
        self._fit[start:start + count] = [fit.get(self._rows[r][2], "") for r in range(start, start + count)]

    def _fit_changed(self, name: str) -> None:
        """The lettering fit of a page was found (or dropped after an edit)."""
        if name not in self._first_row:
            return
        start, count = self._first_row[name], self._count[name]
        before = self._fit[start:start + count]
        self._fit_rows(name, start, count)
        if self._fit[start:start + count] != before:
            self._rows_changed(start, count)

    def _rows_changed(self, start: int, old: int) -> None:
        self.version += 1
        if old:
            if self._sort[0] < 0:
                self.dataChanged.emit(self.index(start, 0), self.index(start + old - 1, len(COLUMNS) - 1))
            else:  # sorted: the page's rows are anywhere; keep the order until sorted again
                self.dataChanged.emit(self.index(0, 0), self.index(len(self._rows) - 1, len(COLUMNS) - 1))

    def row_of(self, page_name: str, block_id: str) -> int:
        start = self._first_row.get(page_name)
        if start is None:
            return -1
        for r in range(start, start + self._count[page_name]):
            if self._rows[r][2] == block_id:
                return self._perm.index(r) if self._sort[0] >= 0 else r
        return -1

    def key(self, row: int) -> tuple[str, str]:
        base = self._perm[row]
        return self._rows[base][1], self._rows[base][2]

    def block(self, row: int) -> Block:
        return self._blocks[self._perm[row]]

    def status(self, row: int) -> str:
        return self._status[self._perm[row]]

    def fit_status(self, row: int) -> str:
        return self._fit[self._perm[row]]

    def shown_status(self, base: int) -> str:
        """The Status cell: the translation's status, and the lettering's when it does not fit."""
        fit = self._fit[base]
        return f"{self._status[base]} · {fit}" if fit else self._status[base]

    def left(self) -> int:
        """Blocks with text that have no translation yet (or whose answer looked untranslated)."""
        return sum(1 for b in self._blocks if b.needs_translation)

    # --- Qt model -------------------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:  # noqa: B008 - Qt signature
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section]
        return None

    def flags(self, index):
        f = super().flags(index)
        if index.column() in (SOURCE, TRANSLATION):
            f |= Qt.ItemFlag.ItemIsEditable
        return f

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, col = self._perm[index.row()], index.column()
        block = self._blocks[row]
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            if col == PAGE:
                return self._rows[row][0] + 1
            if col == NUMBER:
                return block.order
            if col == KIND:
                return block.kind
            if col == SOURCE:
                return block.display_text
            if col == TRANSLATION:
                return block.translation
            return self.shown_status(row)
        if role == STATUS_ROLE:
            return self._status[row]
        if role == PAGE_ROLE:
            return self._rows[row][0] + 1
        if role == KEY_ROLE:
            return self._rows[row][1], self._rows[row][2]
        if role == Qt.ItemDataRole.BackgroundRole:
            return status_brush(self._fit[row] or self._status[row])
        if role == Qt.ItemDataRole.ToolTipRole and col in (SOURCE, TRANSLATION):
            return block.display_text if col == SOURCE else (block.translation or block.machine_translation or None)
        check = self._check.get(self._rows[row][1])
        if check and col in (PAGE, NUMBER):  # the page's reading order is to be checked
            if role == Qt.ItemDataRole.ForegroundRole:
                return QColor(179, 89, 0)
            if role == Qt.ItemDataRole.ToolTipRole:
                return f"Check the reading order of this page: {check}"
        return None

    def checked_pages(self) -> int:
        """How many pages carry the "check the order" mark."""
        return len(self._check)

    def setData(self, index, value, role=Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or index.column() not in (SOURCE, TRANSLATION):
            return False
        name, block_id = self.key(index.row())
        text = str(value)
        if index.column() == SOURCE:
            return self.edit(lambda p: edits.set_text(p, block_id, text), "edit text", page=name)
        return self.edit(lambda p: edits.set_translation(p, block_id, text), "edit translation", page=name)


class ScriptFilter(QSortFilterProxyModel):
    """Rows of one status (or any), within a page range, holding a text (in source or translation)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.status = ""  # "" = any
        self.first_page, self.last_page = 1, 0  # last 0 = to the end
        self.text = ""
        self._accepted: list[bool] | None = None  # per source row, for the model's `version`
        self._version = -1

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        """Sorting is the source model's (keys computed once per row, in Python); the proxy keeps
        its order."""
        self.sourceModel().sort(column, order)

    def set_filter(self, status: str | None = None, first_page: int | None = None, last_page: int | None = None,
                   text: str | None = None) -> None:
        begin = getattr(self, "beginFilterChange", None)  # Qt >= 6.9; invalidateFilter before
        if begin is not None:
            begin()
        self._accepted = None
        if status is not None:
            self.status = status
        if first_page is not None:
            self.first_page = first_page
        if last_page is not None:
            self.last_page = last_page
        if text is not None:
            self.text = text.casefold()
        if begin is not None:
            self.endFilterChange()
        else:
            self.invalidateFilter()

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:
        model: ScriptModel = self.sourceModel()
        if not self.status and not self.text and self.first_page <= 1 and not self.last_page:
            return True
        if self._accepted is None or self._version != model.version:
            self._accepted, self._version = self._compute(model), model.version
        return self._accepted[source_row]

    def _compute(self, model: ScriptModel) -> list[bool]:
        """Every row's answer at once (one Python pass: fast at 10,000 rows)."""
        first, last, status, text = self.first_page, self.last_page or 1 << 30, self.status, self.text
        rows, blocks, statuses, fits, checks = model._rows, model._blocks, model._status, model._fit, model._check
        out = []
        for base in model._perm:
            ok = first <= rows[base][0] + 1 <= last and (
                not status or statuses[base] == status or fits[base] == status
                or (status == ORDER_CHECK and rows[base][1] in checks))
            if ok and text:
                b = blocks[base]
                ok = text in b.display_text.casefold() or text in b.translation.casefold()
            out.append(ok)
        return out
