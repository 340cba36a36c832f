"""The Script dock's widget: the filter row over the table of every block."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStyledItemDelegate,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.ui.script.model import (
    KEY_ROLE,
    ORDER_CHECK,
    SOURCE,
    STATUS,
    STATUSES,
    TRANSLATION,
    ScriptFilter,
    ScriptModel,
)


class KeepsTyping(QStyledItemDelegate):
    """The table's delegate: a cell's editor that the user has typed into keeps what was typed
    when the row's data changes meanwhile (a lettering fit found in the background repaints the
    row, and a view puts the model's text back into an open editor on every change)."""

    def setEditorData(self, editor, index) -> None:
        if isinstance(editor, QLineEdit) and editor.isModified():
            return
        super().setEditorData(editor, index)


class ScriptView(QWidget):
    """Emits `block_chosen(page name, block id)` when a row becomes current."""

    block_chosen = Signal(str, str)

    def __init__(self, model: ScriptModel, parent=None):
        super().__init__(parent)
        self.model = model
        self.proxy = ScriptFilter(self)
        self.proxy.setSourceModel(model)
        self.status_box = QComboBox()
        self.status_box.addItem("All blocks", "")
        for status in STATUSES:
            self.status_box.addItem(status.capitalize(), status)
        self.status_box.addItem("Pages to check the order of", ORDER_CHECK)
        self.status_box.setAccessibleName("Show blocks of status")
        self.first_page, self.last_page = QSpinBox(), QSpinBox()
        self.first_page.setRange(1, 1_000_000)
        self.last_page.setRange(0, 1_000_000)
        self.last_page.setSpecialValueText("end")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Filter by text")
        self.search.setClearButtonEnabled(True)
        self.count_label = QLabel()
        self.fit_label = QLabel()  # how far the lettering's fit is checked (overflows, below minimum size)
        self.fit_label.hide()
        row = QHBoxLayout()
        row.setContentsMargins(4, 2, 4, 2)
        for w in (QLabel("Show"), self.status_box, QLabel("pages"), self.first_page, QLabel("to"), self.last_page,
                  self.search):
            row.addWidget(w)
        row.addWidget(self.count_label)
        row.addWidget(self.fit_label)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.setItemDelegate(KeepsTyping(self.table))
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)  # the volume's order
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                   | QAbstractItemView.EditTrigger.EditKeyPressed
                                   | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for col, width in ((0, 52), (1, 40), (2, 70)):
            header.resizeSection(col, width)
        # the texts share the dock's width and Status is as wide as its longest word, so a narrow
        # dock (1280x800, Pages and Blocks docks open) needs no sideways scrolling to see Status
        header.setSectionResizeMode(SOURCE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(TRANSLATION, QHeaderView.ResizeMode.Stretch)
        longest = max((self.fontMetrics().horizontalAdvance(s) for s in (*STATUSES, "Status")), default=80)
        header.resizeSection(STATUS, longest + 24)
        header.setStretchLastSection(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.table, 1)
        self.status_box.currentIndexChanged.connect(lambda _i: self._filter(status=self.status_box.currentData()))
        self.first_page.valueChanged.connect(lambda v: self._filter(first_page=v))
        self.last_page.valueChanged.connect(lambda v: self._filter(last_page=v))
        self.search.textChanged.connect(lambda t: self._filter(text=t))
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.chosen_here = False  # the focus was last in this view (not on the page): its rows are the selection
        QApplication.instance().focusChanged.connect(self._focus_moved)
        for signal in (model.modelReset, model.dataChanged):
            signal.connect(self._update_count)
        self._update_count()

    def _filter(self, **kw) -> None:
        self.proxy.set_filter(**kw)
        self._update_count()

    def _update_count(self, *_args) -> None:
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        self.count_label.setText(f"{shown} of {total} blocks" if shown != total else f"{total} blocks")
        fit, text = self.model.fit, ""
        if fit is not None and fit.active:
            done, pages = fit.checked_pages()
            if done < pages:
                text = f"· lettering checked on {done} of {pages} pages"
        self.fit_label.setText(text)
        self.fit_label.setVisible(bool(text))

    def update_count(self) -> None:
        self._update_count()

    def set_status_filter(self, status: str) -> None:
        self.status_box.setCurrentIndex(max(0, self.status_box.findData(status)))

    def _current_changed(self, current, _previous) -> None:
        if current.isValid():
            name, block_id = current.data(KEY_ROLE)
            self.block_chosen.emit(name, block_id)

    def add_row_actions(self, actions) -> None:
        """Actions on the selected rows, in the table's context menu (e.g. translate them)."""
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.table.addActions(list(actions))

    def _focus_moved(self, _old, new) -> None:
        if new is not None and new.window() is self.window() and not new.window().isHidden():
            self.chosen_here = self.isAncestorOf(new)  # a menu's popup is a window of its own: ignored

    def chosen_keys(self) -> list[tuple[str, str]]:
        """The selected rows when the selection was made here last (else [], the page's selection)."""
        return self.selected_keys() if self.chosen_here and self.isVisible() else []

    def selected_keys(self) -> list[tuple[str, str]]:
        """(page name, block id) of the selected rows, in the table's order."""
        rows = sorted({i.row() for i in self.table.selectionModel().selectedRows()})
        return [self.proxy.index(r, 0).data(KEY_ROLE) for r in rows]

    def show_block(self, page_name: str, block_id: str) -> None:
        """Make the block's row current (when the filter shows it) without emitting block_chosen."""
        row = self.model.row_of(page_name, block_id)
        if row < 0:
            return
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        if index.isValid():
            self.table.selectionModel().blockSignals(True)
            self.table.setCurrentIndex(index)
            self.table.selectionModel().blockSignals(False)
            self.table.scrollTo(index)
