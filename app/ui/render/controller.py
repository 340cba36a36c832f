"""Translated pages in the main window: `attach(window)` adds the page views (original /
cleaned / translated), the Style dock, the mask brush and File > Export > Translated pages, and
returns the RenderController (its `shutdown()` stops the render thread on close)."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget

from app.core import edits
from app.render.style import resolve
from app.ui.render.export import PageExporter
from app.ui.render.mask_tool import MaskTool
from app.ui.render.style_panel import StylePanel, override_with, style_with
from app.ui.render.view import RenderController


class StyleEditor:
    """Connects the Style dock to the selection, the document and the undo stack."""

    def __init__(self, window, controller: RenderController, panel: StylePanel):
        self.w, self.ctl, self.panel = window, controller, panel
        panel.changed.connect(self.change)
        panel.reset_requested.connect(self.reset)
        panel.engine_chosen.connect(self.choose_engine)
        window.view.block_selected.connect(lambda _bid: self.show_selection())
        window.panel.block_selected.connect(lambda _bid: self.show_selection())
        window.doc.page_changed.connect(lambda _name: self.show_selection())
        window.page_shown.connect(lambda _name: self.show_selection())
        controller.rendered.connect(lambda *_: self.show_selection())

    def selection(self) -> list:
        w = self.w
        if w.doc.project is None or not w.current or not w.doc.has_page(w.current):
            return []
        page = w.doc.page(w.current)
        return [b for b in (page.block(i) for i in w.selected_ids()) if b is not None]

    def show_selection(self) -> None:
        project = self.w.doc.project
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
        w = self.w
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
            self.w.edit(lambda p: edits.set_style(p, ids, None), "reset the text style")

    def choose_engine(self, name: str) -> None:
        self.w.update_settings(inpaint=name)
        self.ctl.renderer = None  # clean again with the new engine
        self.ctl.refresh()


def attach(window) -> RenderController:
    controller = RenderController(window)
    panel = StylePanel()
    dock = QDockWidget("Style", window)
    dock.setObjectName("dock_style")
    dock.setWidget(panel)
    dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
    blocks_dock = window.findChild(QDockWidget, "dock_blocks")
    if blocks_dock is not None:
        window.tabifyDockWidget(blocks_dock, dock)
        blocks_dock.raise_()
    window.style_panel = panel
    window.style_editor = StyleEditor(window, controller, panel)
    tool = window.mask_tool = MaskTool(window, controller)
    panel.brush_toggled.connect(tool.set_active)
    panel.brush_radius_changed.connect(lambda r: setattr(tool, "radius", r))
    panel.mask_reset_requested.connect(
        lambda: [window.edit(lambda p, bid=b.id: edits.clear_mask_edits(p, bid), "automatic text mask")
                 for b in window.style_editor.selection() if b.mask_edits])
    window.act.mask_brush.setCheckable(True)
    window.act.mask_brush.toggled.connect(panel.brush.setChecked)
    panel.brush.toggled.connect(window.act.mask_brush.setChecked)
    # M and V act on the page: app.ui.shell.actions adds them to the canvas only (CANVAS_KEYS), so that
    # typing them into a text field never switches the brush or the view
    window.page_exporter = PageExporter(window, controller)
    return controller
