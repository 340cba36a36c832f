"""The side panel: the page's blocks in reading order (drag to renumber) and the selected
block's text, the model's original (restorable) and its translation, with the translation
memory's close matches as suggestions (click one to use it) and Approve (Ctrl+Enter in the
translation field): the machine translation accepted as it is, for the translation memory.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.core.document.types import Block, Page
from app.core.exports.script_table import block_status
from app.ui.common.status_colours import status_brush
from app.ui.editor.items import PANEL_TEXT_PX, overlay_font

ID_ROLE = Qt.ItemDataRole.UserRole
SUGGESTIONS_PX = 90  # the suggestions box's fixed height
NO_SUGGESTION = "No similar line in the translation memory"
STATUS_ROLE = Qt.ItemDataRole.UserRole + 1  # the status the row's tint shows


KIND_TAGS = {"caption": "[caption] ", "sfx": "[SFX] "}  # text outside bubbles
KIND_NAMES = {"bubble": "bubble", "caption": "caption (free text)", "text": "free text", "sfx": "sound effect",
              "other": "other", "manual": "drawn box"}


def _row_text(b: Block) -> str:
    text = b.display_text.replace("\n", " ") or "(empty)"
    flags = " ✎" if b.edited else ""
    if b.looks_untranslated or b.looks_degenerate:
        flags += " ⚠"  # the machine's answer was not a translation (not used; the next run asks again)
    return f"{b.order:>3}.  {KIND_TAGS.get(b.kind, '')}{text}{flags}"


class BlockList(QListWidget):
    """Reading-order list; dragging a row renumbers (emits the new id order)."""

    reordered = Signal(list)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.setWordWrap(True)
        self.setAlternatingRowColors(True)

    def ids(self) -> list[str]:
        return [self.item(i).data(ID_ROLE) for i in range(self.count())]

    def dropEvent(self, event) -> None:
        before = self.ids()
        super().dropEvent(event)
        after = self.ids()
        if after != before and sorted(after) == sorted(before):
            self.reordered.emit(after)


class BlockPanel(QWidget):
    """Lists blocks and edits the selected one; reports edits as signals."""

    block_selected = Signal(str)  # "" when none
    blocks_selected = Signal(list)
    text_edited = Signal(str, str)  # block id, text
    translation_edited = Signal(str, str)
    restore_requested = Signal(str)
    translation_restore_requested = Signal(str)  # back to the machine translation
    reorder_requested = Signal(list)  # ids in the new order
    approve_requested = Signal(str)  # block id: accept its machine translation as it is

    def __init__(self, parent=None):
        super().__init__(parent)
        self.page: Page | None = None
        self.current_id = ""
        self._syncing = False
        self.list = BlockList()
        self.list.setFont(overlay_font(14))
        self.title = QLabel("No block selected")
        self.title.setWordWrap(True)
        self.text_edit = QPlainTextEdit()
        self.text_edit.setFont(overlay_font(PANEL_TEXT_PX))
        self.text_edit.setPlaceholderText("Transcription")
        self.original = QLabel()
        self.original.setWordWrap(True)
        self.original.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.restore_button = QPushButton("Restore model text")
        self.translation_edit = QPlainTextEdit()
        self.translation_edit.setPlaceholderText("Translation (type one, or Translate > Translate page)")
        self.machine = QLabel()
        self.machine.setWordWrap(True)
        self.machine.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.restore_translation_button = QPushButton("Restore machine translation")
        self.approve_button = QPushButton("Approved ✓")
        self.approve_button.setMinimumWidth(self.approve_button.sizeHint().width())  # both texts, one width
        self.approve_button.setText("Approve")
        self.approve_button.setToolTip("Accept this translation as it is: it enters the translation memory "
                                       "(Ctrl+Enter in the translation field)")
        # the memory's suggestions keep one place and one height, shown or empty: a box that
        # appeared at the first pause in typing pushed the fields down under the user's cursor
        self.suggestions = QListWidget()
        self.suggestions.setWordWrap(True)
        self.suggestions.setFixedHeight(SUGGESTIONS_PX)
        self.suggestions.setToolTip("Approved translations of similar lines (translation memory): click one to use it")
        self.suggestions_label = QLabel("Suggestions from the translation memory")
        self.suggest = None  # callable(Block) -> [(source, target, score)], set by the translation room
        self.fit_status = None  # callable(page name, block id) -> "overflows" | "below minimum size" | ""

        editor = QWidget()
        lay = QVBoxLayout(editor)
        lay.setContentsMargins(0, 4, 0, 0)
        lay.addWidget(self.title)
        lay.addWidget(self.text_edit, 3)
        row = QHBoxLayout()
        row.addWidget(self.original, 1)
        row.addWidget(self.restore_button)
        lay.addLayout(row)
        lay.addWidget(QLabel("Translation"))
        lay.addWidget(self.translation_edit, 2)
        lay.addWidget(self.machine)  # on a line of its own: beside the two buttons it wrapped a word a line
        machine_row = QHBoxLayout()
        machine_row.addStretch(1)
        machine_row.addWidget(self.restore_translation_button)
        machine_row.addWidget(self.approve_button)
        lay.addLayout(machine_row)
        lay.addWidget(self.suggestions_label)
        lay.addWidget(self.suggestions)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.list)
        split.addWidget(editor)
        split.setSizes([300, 300])
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.addWidget(split)

        # typing is committed after a short pause (and on leaving the field)
        self._text_timer = QTimer(self, singleShot=True, interval=400, timeout=self._commit_text)
        self._tr_timer = QTimer(self, singleShot=True, interval=400, timeout=self._commit_translation)
        self.text_edit.textChanged.connect(self._on_text_typed)
        self.translation_edit.textChanged.connect(self._on_translation_typed)
        self.restore_button.clicked.connect(lambda: self.current_id and self.restore_requested.emit(self.current_id))
        self.restore_translation_button.clicked.connect(
            lambda: self.current_id and self.translation_restore_requested.emit(self.current_id))
        self.approve_button.clicked.connect(self._approve)
        approve_key = QShortcut(QKeySequence("Ctrl+Return"), self.translation_edit)
        approve_key.setContext(Qt.ShortcutContext.WidgetShortcut)
        approve_key.activated.connect(self._approve)
        self.suggestions.itemClicked.connect(self._use_suggestion)
        self.list.itemSelectionChanged.connect(self._on_list_selection)
        self.list.reordered.connect(self.reorder_requested)
        self._show_editor(None)

    # --- showing ---------------------------------------------------------------------------
    def set_page(self, page: Page | None) -> None:
        """Refresh rows and the editor; text being typed is not overwritten."""
        if self.page is not None and (page is None or page.name != self.page.name):
            self.flush()  # typing belongs to the page being left
        self.page = page
        self._syncing = True
        try:
            selected = {it.data(ID_ROLE) for it in self.list.selectedItems()} or {self.current_id}
            self.list.clear()
            for b in page.blocks if page else ():
                item = QListWidgetItem(_row_text(b))
                item.setData(ID_ROLE, b.id)
                item.setToolTip(f"{KIND_NAMES.get(b.kind, b.kind)}{', vertical' if b.vertical else ''}"
                                + (f", score {b.score:.2f}" if b.score is not None else ""))
                self._colour(item, b)
                self.list.addItem(item)
                if b.id in selected:
                    item.setSelected(True)
            block = page.block(self.current_id) if page and self.current_id else None
            if block is None:
                self.current_id = ""
            self._show_editor(block)
        finally:
            self._syncing = False

    def _colour(self, item: QListWidgetItem, b: Block) -> None:
        """The row tinted by the block's status, as in the Script view (the lettering's fit first)."""
        fit = self.fit_status(self.page.name, b.id) if self.fit_status is not None and self.page else ""
        status = fit or block_status(b)
        item.setBackground(status_brush(status) or QBrush())
        item.setData(STATUS_ROLE, status)

    def recolour(self) -> None:
        """The rows' tints again (the lettering's fit of the page became known)."""
        for i in range(self.list.count()):
            item = self.list.item(i)
            b = self.page.block(item.data(ID_ROLE)) if self.page else None
            if b is not None:
                self._colour(item, b)

    def select_block(self, block_id: str) -> None:
        """Select from outside (the canvas) without echoing the signal back."""
        self.flush()
        self._syncing = True
        try:
            self.current_id = block_id
            for i in range(self.list.count()):
                item = self.list.item(i)
                item.setSelected(item.data(ID_ROLE) == block_id)
                if item.data(ID_ROLE) == block_id:
                    self.list.scrollToItem(item)
            self._show_editor(self.page.block(block_id) if self.page and block_id else None)
        finally:
            self._syncing = False

    def _show_editor(self, block: Block | None) -> None:
        on = block is not None
        if not on and (self.text_edit.hasFocus() or self.translation_edit.hasFocus()):
            # keystrokes meant for the editor stay in the panel (the list ignores them), never
            # reaching the canvas's one-letter shortcuts once the editor is disabled
            self.list.setFocus(Qt.FocusReason.OtherFocusReason)
        for w in (self.text_edit, self.translation_edit, self.restore_button, self.restore_translation_button,
                  self.approve_button):
            w.setEnabled(on)
        self._show_suggestions(block)
        if not on:
            self.title.setText("No block selected" if self.page else "No page")
            self._set_plain(self.text_edit, "")
            self._set_plain(self.translation_edit, "")
            self.original.setText("")
            self.machine.setText("")
            return
        kind = f"{KIND_NAMES.get(block.kind, block.kind)}{', vertical' if block.vertical else ''}"
        self.title.setText(f"<b>Block {block.order}</b> · {kind}" + (" · edited" if block.edited else ""))
        if not self._text_timer.isActive():  # never overwrite what is being typed
            self._set_plain(self.text_edit, block.display_text)
        if not self._tr_timer.isActive():
            self._set_plain(self.translation_edit, block.translation)
        model = f" ({block.model}, {block.patches} patches)" if block.model else ""
        self.original.setText(f"Model read{model}: {block.ocr_text or '(nothing)'}")
        self.restore_button.setEnabled(block.edited)
        if block.machine_translation:
            mark = " · you edited it" if block.translation_edited else ""
            if block.looks_untranslated:
                mark = " · ⚠ looks untranslated: not used, the next run asks again"
            elif block.looks_degenerate:
                mark = " · ⚠ looks degenerate: not used, the next run asks again"
            self.machine.setText(f"Machine ({block.translator}){mark}: {block.machine_translation}")
        else:
            # one text with or without a translation typed: a longer one wrapped onto another
            # line at the first keystroke and moved the fields under it
            self.machine.setText("No machine translation yet (a translation run keeps yours)")
        self.restore_translation_button.setEnabled(bool(block.machine_translation) and block.translation_edited)
        # Approved only when the user said so (Approve, Ctrl+Enter): a translation being typed
        # read "Approved ✓" at its first pause, as if the half-typed line were checked
        approved = block.approved and bool(block.translation.strip())
        self.approve_button.setEnabled(bool(block.translation.strip()) and not approved)
        self.approve_button.setText("Approved ✓" if approved else "Approve")

    def _show_suggestions(self, block: Block | None) -> None:
        self.suggestions.clear()
        found = self.suggest(block) if block is not None and self.suggest is not None else []
        for source, target, score in found:
            item = QListWidgetItem(f"{target}   ← {source.replace(chr(10), ' ')} ({score:.0f} %)")
            item.setData(ID_ROLE, target)
            self.suggestions.addItem(item)
        if not found:
            empty = QListWidgetItem(NO_SUGGESTION)
            empty.setFlags(Qt.ItemFlag.NoItemFlags)  # not a suggestion: nothing to click
            self.suggestions.addItem(empty)
        self.suggestions.setEnabled(bool(found))

    def _use_suggestion(self, item: QListWidgetItem) -> None:
        if self.current_id and item.data(ID_ROLE):
            self._tr_timer.stop()
            self.translation_edited.emit(self.current_id, item.data(ID_ROLE))

    def _approve(self) -> None:
        if self.current_id:
            self.flush()
            self.approve_requested.emit(self.current_id)

    def _set_plain(self, edit: QPlainTextEdit, text: str) -> None:
        if edit.toPlainText() != text:
            was = self._syncing
            self._syncing = True
            edit.setPlainText(text)
            self._syncing = was

    # --- user input -------------------------------------------------------------------------
    def _on_list_selection(self) -> None:
        if self._syncing:
            return
        self.flush()
        ids = [it.data(ID_ROLE) for it in self.list.selectedItems()]
        self.current_id = ids[0] if len(ids) == 1 else (self.current_id if self.current_id in ids else
                                                       (ids[0] if ids else ""))
        self._show_editor(self.page.block(self.current_id) if self.page and self.current_id else None)
        self.block_selected.emit(self.current_id)
        self.blocks_selected.emit(ids)

    def selected_ids(self) -> list[str]:
        """Selected ids in reading order."""
        chosen = {it.data(ID_ROLE) for it in self.list.selectedItems()}
        return [i for i in self.list.ids() if i in chosen]

    def _on_text_typed(self) -> None:
        if not self._syncing and self.current_id:
            self._text_timer.start()

    def _on_translation_typed(self) -> None:
        if not self._syncing and self.current_id:
            self._tr_timer.start()

    def _commit_text(self) -> None:
        self._text_timer.stop()
        if self.current_id:
            self.text_edited.emit(self.current_id, self.text_edit.toPlainText())

    def _commit_translation(self) -> None:
        self._tr_timer.stop()
        if self.current_id:
            self.translation_edited.emit(self.current_id, self.translation_edit.toPlainText())

    def typing(self) -> bool:
        """Text typed in the editors and not yet committed to the project (undo keys: the
        editor's own history first)."""
        return self._text_timer.isActive() or self._tr_timer.isActive()

    def flush(self) -> None:
        """Commit text typed in the last moments (before a page change, save or close)."""
        if self._text_timer.isActive():
            self._commit_text()
        if self._tr_timer.isActive():
            self._commit_translation()
