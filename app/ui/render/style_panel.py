"""The Style dock: lettering of the selected block(s), or the project's default when none is
selected; the text-removal engine; the mask brush.

Every change is one undoable edit: a block's style is a page edit (app.core.document.edits.set_style),
the project default a ProjectValueCommand. A field a block does not override shows the project's
value; "Reset" drops the block's overrides.
"""
from __future__ import annotations

from dataclasses import asdict, fields

from PySide6.QtCore import Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QCheckBox,
    QColorDialog,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.render.style import ALIGNS, DIRECTIONS, SIZE_RANGE, StyleOverride, TextStyle

ENGINES = (("auto", "Auto (LaMa when installed)"), ("opencv", "OpenCV"), ("lama", "LaMa"))
BROWSE = "__browse__"


class ColorButton(QPushButton):
    """A button showing a colour; clicking picks another (emits `picked("#rrggbb")`)."""

    picked = Signal(str)

    def __init__(self, title: str):
        super().__init__()
        self.title = title
        self.color = "#000000"
        self.setFixedWidth(64)
        self.clicked.connect(self._choose)

    def set_color(self, color: str) -> None:
        self.color = color
        self.setStyleSheet(f"background-color: {color}; border: 1px solid #888; min-height: 18px;")
        self.setToolTip(color)

    def _choose(self) -> None:
        chosen = QColorDialog.getColor(QColor(self.color), self, self.title)
        if chosen.isValid():
            self.picked.emit(chosen.name())


class FontBox(QComboBox):
    """The font list; installed fonts are scanned the first time it opens (not at start-up)."""

    def __init__(self):
        super().__init__()
        self.scanned = False
        self.setMinimumContentsLength(14)

    def showPopup(self) -> None:
        if not self.scanned:
            self.scan()
        super().showPopup()

    def scan(self) -> None:
        from app.render.fontfind import family_names

        self.scanned = True
        current = self.currentData()
        blocked = self.blockSignals(True)
        self.clear()
        self.addItem("App default (Comic Neue / Noto CJK)", "")
        for name in family_names():
            self.addItem(name, name)
        self.addItem("Font file…", BROWSE)
        self.setCurrentIndex(max(0, self.findData(current)))
        self.blockSignals(blocked)


class StylePanel(QWidget):
    """Shows and edits a style; the owner applies `changed(field, value)` to the selection."""

    changed = Signal(str, object)  # style field, new value
    reset_requested = Signal()
    engine_chosen = Signal(str)
    brush_toggled = Signal(bool)
    brush_radius_changed = Signal(int)
    mask_reset_requested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._syncing = False
        self._make_style_fields()
        self._make_removal_and_mask_fields()
        self._lay_out()
        self._connect()

    def _make_style_fields(self) -> None:
        self.target = QLabel("Project default")
        self.target.setWordWrap(True)
        self.font_box = FontBox()
        self.font_box.addItem("App default (Comic Neue / Noto CJK)", "")
        self.font_box.addItem("Font file…", BROWSE)
        self.min_size, self.max_size = QSpinBox(), QSpinBox()
        for spin in (self.min_size, self.max_size):
            spin.setRange(*SIZE_RANGE)
            spin.setSuffix(" px")
        self.color = ColorButton("Text colour")
        self.outline_width = QSpinBox()
        self.outline_width.setRange(0, 50)
        self.outline_width.setSuffix(" px")
        self.outline_color = ColorButton("Outline colour")
        self.align = QComboBox()
        for a in ALIGNS:
            self.align.addItem(a.capitalize(), a)
        self.direction = QComboBox()
        for d, label in zip(DIRECTIONS, ("Auto (vertical for Japanese / Chinese)", "Horizontal", "Vertical")):
            self.direction.addItem(label, d)
        self.uppercase = QCheckBox("Upper case")
        self.hyphenate = QCheckBox("Hyphenate long words")
        self.reset = QPushButton("Reset to the project's style")
        self.fit = QLabel("")
        self.fit.setWordWrap(True)

    def _make_removal_and_mask_fields(self) -> None:
        self.engine = QComboBox()
        for key, label in ENGINES:
            self.engine.addItem(label, key)
        self.brush = QToolButton()
        self.brush.setText("Mask brush")
        self.brush.setCheckable(True)
        self.brush.setToolTip("Paint on the page to add text to clean; right button or Shift erases (M)")
        self.radius = QSpinBox()
        self.radius.setRange(1, 100)
        self.radius.setValue(8)
        self.radius.setSuffix(" px")
        self.mask_reset = QPushButton("Automatic mask")
        self.mask_reset.setToolTip("Drop the brush strokes of the selected block")

    def _lay_out(self) -> None:
        form = QFormLayout()
        form.addRow("Font", self.font_box)
        sizes = QHBoxLayout()
        sizes.addWidget(self.min_size)
        sizes.addWidget(QLabel("to"))
        sizes.addWidget(self.max_size)
        form.addRow("Size", sizes)
        form.addRow("Colour", self.color)
        outline = QHBoxLayout()
        outline.addWidget(self.outline_width)
        outline.addWidget(self.outline_color)
        form.addRow("Outline", outline)
        form.addRow("Align", self.align)
        form.addRow("Direction", self.direction)
        form.addRow("", self.uppercase)
        form.addRow("", self.hyphenate)
        mask = QHBoxLayout()
        mask.addWidget(self.brush)
        mask.addWidget(self.radius)
        mask.addWidget(self.mask_reset)
        lay = QVBoxLayout(self)
        lay.addWidget(self.target)
        lay.addLayout(form)
        lay.addWidget(self.reset)
        lay.addWidget(self.fit)
        lay.addWidget(QLabel("Text removal"))
        lay.addWidget(self.engine)
        lay.addWidget(QLabel("Text mask"))
        lay.addLayout(mask)
        lay.addStretch(1)

    def _connect(self) -> None:
        self.font_box.activated.connect(self._on_font)
        self.min_size.valueChanged.connect(lambda v: self._emit("min_size", v))
        self.max_size.valueChanged.connect(lambda v: self._emit("max_size", v))
        self.color.picked.connect(lambda c: self._emit("color", c))
        self.outline_width.valueChanged.connect(lambda v: self._emit("outline_width", v))
        self.outline_color.picked.connect(lambda c: self._emit("outline_color", c))
        self.align.activated.connect(lambda _i: self._emit("align", self.align.currentData()))
        self.direction.activated.connect(lambda _i: self._emit("direction", self.direction.currentData()))
        self.uppercase.toggled.connect(lambda v: self._emit("uppercase", v))
        self.hyphenate.toggled.connect(lambda v: self._emit("hyphenate", v))
        self.reset.clicked.connect(self.reset_requested)
        self.engine.activated.connect(lambda _i: self.engine_chosen.emit(self.engine.currentData()))
        self.brush.toggled.connect(self.brush_toggled)
        self.radius.valueChanged.connect(self.brush_radius_changed)
        self.mask_reset.clicked.connect(self.mask_reset_requested)

    def _on_font(self, _index: int) -> None:
        value = self.font_box.currentData()
        if value == BROWSE:
            path, _ = QFileDialog.getOpenFileName(self, "Choose a font file", "", "Fonts (*.ttf *.otf *.ttc *.otc)")
            if not path:
                return
            value = path
        self._emit("font", value)

    def _emit(self, key: str, value) -> None:
        if not self._syncing:
            self.changed.emit(key, value)

    def show_style(self, style: TextStyle, target: str, block_selected: bool, engine: str) -> None:
        """Show `style` (the resolved one) for `target` ("Project default", "Block 3", ...)."""
        self._syncing = True
        try:
            self.target.setText(f"<b>{target}</b>")
            i = self.font_box.findData(style.font)
            if i < 0:
                self.font_box.insertItem(self.font_box.count() - 1, style.font, style.font)
                i = self.font_box.findData(style.font)
            self.font_box.setCurrentIndex(i)
            self.min_size.setValue(style.min_size)
            self.max_size.setValue(style.max_size)
            self.color.set_color(style.color)
            self.outline_width.setValue(style.outline_width)
            self.outline_color.set_color(style.outline_color)
            self.align.setCurrentIndex(max(0, self.align.findData(style.align)))
            self.direction.setCurrentIndex(max(0, self.direction.findData(style.direction)))
            self.uppercase.setChecked(style.uppercase)
            self.hyphenate.setChecked(style.hyphenate)
            self.reset.setEnabled(block_selected)
            self.mask_reset.setEnabled(block_selected)
            self.engine.setCurrentIndex(max(0, self.engine.findData(engine)))
        finally:
            self._syncing = False

    def show_fit(self, text: str) -> None:
        self.fit.setText(text)


def override_with(override: StyleOverride | None, key: str, value) -> StyleOverride:
    """The block's override with one more field set."""
    data = {f.name: getattr(override, f.name) for f in fields(StyleOverride)} if override else {}
    data[key] = value
    return StyleOverride(**data)


def style_with(style: TextStyle, key: str, value) -> TextStyle:
    data = asdict(style)
    data[key] = value
    if key == "min_size" and data["max_size"] < value:
        data["max_size"] = value
    if key == "max_size" and data["min_size"] > value:
        data["min_size"] = value
    return TextStyle(**data)


