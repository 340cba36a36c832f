"""Translated pages in the main window: the RenderController owns the page views (original /
cleaned / translated, app.ui.render.view), the Style panel, the mask brush and File > Export >
Translated pages. It talks to the window through the document model and `RenderWindow` (the
editor port and the canvas / block panel it draws on); the window places what it exposes:
`style_panel` (a dock), `toolbar`, `view_entries` (View menu), `exporter.menu` (File > Export),
and calls `shutdown()` on close."""
from __future__ import annotations

from typing import Protocol

from app.core.document import edits
from app.render.style import resolve
from app.ui.editor.port import EditorWindow
from app.ui.render.export import PageExporter
from app.ui.render.mask_tool import MaskTool
from app.ui.render.style_panel import StylePanel, override_with, style_with
from app.ui.render.view import PageViews


class RenderWindow(EditorWindow, Protocol):
    """What the render room uses of the window besides the editor port."""

    view: object  # app.ui.editor.canvas.PageView: the canvas it shows rendered pages on
    panel: object  # app.ui.editor.block_panel.BlockPanel: the translation typed there is previewed
    page_shown: object  # Signal(str): the page whose image is on the canvas
    undo_stack: object  # QUndoStack: the project's style and sizes are undoable steps

    def selected_ids(self) -> list[str]:
        """The blocks selected on the canvas or in the block panel."""

    def update_settings(self, **changes) -> None:
        """Change and store settings (the cleaning engine)."""


class StyleEditor:
    """Connects the Style dock to the selection, the document and the undo stack."""

    def __init__(self, window: RenderWindow, controller: PageViews, panel: StylePanel):
        self.window, self.ctl, self.panel = window, controller, panel
        panel.changed.connect(self.change)
        panel.reset_requested.connect(self.reset)
        panel.engine_chosen.connect(self.choose_engine)
        window.view.block_selected.connect(lambda _bid: self.show_selection())
        window.panel.block_selected.connect(lambda _bid: self.show_selection())
        window.doc.page_changed.connect(lambda _name: self.show_selection())
        window.page_shown.connect(lambda _name: self.show_selection())
        controller.rendered.connect(lambda *_: self.show_selection())

    def selection(self) -> list:
        w = self.window
        if w.doc.project is None or not w.current or not w.doc.has_page(w.current):
            return []
        page = w.doc.page(w.current)
        return [b for b in (page.block(i) for i in w.selected_ids()) if b is not None]

    def show_selection(self) -> None:
        project = self.window.doc.project
        if project is None:
            return
        blocks = self.selection()
        if blocks:
            first = blocks[0]
            style = resolve(project.style, first.style)
            numbers = ", ".join(str(b.order) for b in blocks[:6]) + ("…" if len(blocks) > 6 else "")
            target = f"Block{'s' if len(blocks) > 1 else ''} {numbers}" + (" (own style)" if first.style else "")
        else:
            style, target = project.style, "Project default (no block selected)"
        self.panel.show_style(style, target, bool(blocks), self.ctl.engine_name())
        self.panel.show_fit(self.fit_text(blocks[0]) if blocks else "")

    def fit_text(self, block) -> str:
        layer = self.ctl.layer_of(block.id)
        if layer is None:
            return "" if self.ctl.mode != "translated" or not block.translation else "Rendering…"
        lay = layer.layout
        if lay.overflow:
            return f"<span style='color:#c62828'>Does not fit even at {lay.size} px: cut to the bubble.</span>"
        if not lay.fits:
            return (f"<span style='color:#c62828'>Set at {lay.size} px, below the minimum: shorten the text or "
                    "lower the minimum size.</span>")
        return f"Set at {lay.size} px in {len(lay.lines)} {'column' if lay.vertical else 'line'}(s)."

    def change(self, key: str, value) -> None:
        w = self.window
        blocks = self.selection()
        if not blocks:
            self.ctl.push_project_style(style_with(w.doc.project.style, key, value))
            return
        ids = [b.id for b in blocks]

        def edit(page):
            for bid in ids:
                page = edits.set_style(page, [bid], override_with(page.block(bid).style, key, value))
            return page

        w.edit(edit, f"change {key.replace('_', ' ')}", ("style", w.current, tuple(ids), key))

    def reset(self) -> None:
        ids = [b.id for b in self.selection()]
        if ids:
            self.window.edit(lambda p: edits.set_style(p, ids, None), "reset the text style")

    def choose_engine(self, name: str) -> None:
        self.window.update_settings(inpaint=name)
        self.ctl.renderer = None  # clean again with the new engine
        self.ctl.refresh()


class RenderController(PageViews):
    """The render room: page views + Style panel + mask brush + translated-page exports.
    `view_mode_action` (V) cycles the views; `mask_brush_action` (M) toggles the brush."""

    def __init__(self, window: RenderWindow, view_mode_action, mask_brush_action):
        super().__init__(window, view_mode_action)
        panel = self.style_panel = StylePanel()
        self.style_editor = StyleEditor(window, self, panel)
        tool = self.mask_tool = MaskTool(window, self)
        panel.brush_toggled.connect(tool.set_active)
        panel.brush_radius_changed.connect(lambda r: setattr(tool, "radius", r))
        panel.mask_reset_requested.connect(self.reset_masks)
        mask_brush_action.setCheckable(True)
        mask_brush_action.toggled.connect(panel.brush.setChecked)
        panel.brush.toggled.connect(mask_brush_action.setChecked)
        # M and V act on the page: app.ui.shell.actions adds them to the canvas only (CANVAS_KEYS), so
        # that typing them into a text field never switches the brush or the view
        self.exporter = PageExporter(window, self)

    def reset_masks(self) -> None:
        """The selected blocks back to their automatic text mask (one undo step each)."""
        for b in self.style_editor.selection():
            if b.mask_edits:
                self.window.edit(lambda p, bid=b.id: edits.clear_mask_edits(p, bid), "automatic text mask")
