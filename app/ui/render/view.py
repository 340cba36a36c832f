"""Page views of the main window: original, cleaned, translated; re-lettering as the user types.

The pixels come from app.render.page.PageRenderer through app.core.exports.translated_pages.render_blocks, the
same code the exports run, so the translated view is the exported page:
- cleaned: every block cleaned, nothing lettered (`--text none`);
- translated: the blocks with a translation cleaned and lettered (`--text translation`).
The first render of a page (decoding, masks, cleaning) runs on a thread-pool thread; after that
the renderer's caches make an edit cheap (one bubble is typeset again, the page composited) and
it runs on the GUI thread, at once. While a translation is typed in the block panel, the view
shows it before the edit is committed.
"""
from __future__ import annotations

import threading
import time
from dataclasses import replace

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtGui import QAction, QActionGroup, QImage
from PySide6.QtWidgets import QMenu, QToolBar

from app.render.style import TextStyle
from app.ui.common.threads import track_pool
from app.ui.editor.undo import ProjectValueCommand

# numpy, OpenCV and the renderer load on the first render, not when the window opens

MODES = ("original", "cleaned", "translated")
MODE_LABELS = {"original": "Original", "cleaned": "Cleaned", "translated": "Translated"}


def rgb_to_qimage(rgb) -> QImage:
    """A deep-copied QImage (RGB888) of an (H, W, 3) uint8 array."""
    import numpy as np

    h, w = rgb.shape[:2]
    data = np.ascontiguousarray(rgb)
    return QImage(data.data, w, h, 3 * w, QImage.Format.Format_RGB888).copy()


def options_for(mode: str, settings=None):
    """The render options of a view; the translation's target language (the Translation
    settings) picks hyphenation and, for ja / zh, vertical setting."""
    from dataclasses import replace

    from app.core.exports.translated_pages import translated_options

    options = translated_options(getattr(settings, "translation_target", ""))
    return replace(options, text="none") if mode == "cleaned" else options


OUTSIDE_TITLES = {"caption": "Captions (free text)", "sfx": "Sound effects"}
OUTSIDE_LABELS = {"translate": "Translate in place", "keep": "Leave as they are",
                  "beside": "Add a small translation beside them"}

SIZE_LABELS = {"each": "Each bubble at its largest size", "one": "One size a page",
               "few": "A few sizes a page (at most three)"}


class _JobSignals(QObject):
    done = Signal(int, object, object)  # request id, PageRenderer, RenderedPage
    warmed = Signal(int)  # every block's clean patch is cached: the job is over
    failed = Signal(int, str)


class _RenderJob(QRunnable):
    """Decode a page, build its renderer (loading the engine when needed) and render it."""

    def __init__(self, signals: _JobSignals, req: int, source: str, name: str, blocks, engine_name: str,
                 engine_cache: dict, renderer=None, settings=None):
        super().__init__()
        self.settings = settings
        self.signals, self.req, self.source, self.name = signals, req, source, name
        self.blocks, self.engine_name, self.engine_cache, self.renderer = blocks, engine_name, engine_cache, renderer

    def run(self) -> None:
        from app.core.sources.source import open_source
        from app.render.inpaint import load_inpainter
        from app.render.page import PageRenderer

        try:
            renderer = self.renderer
            if renderer is None:
                engine = self.engine_cache.get(self.engine_name)
                if engine is None:
                    engine = self.engine_cache[self.engine_name] = load_inpainter(self.engine_name)
                with open_source(self.source) as source:
                    image = source.load(self.name)
                options = options_for("translated", self.settings)
                renderer = PageRenderer(image, engine, options.lang, options.target_lang)
            result = renderer.render(self.blocks)
            self.signals.done.emit(self.req, renderer, result)
            for b in self.blocks:  # warm: a translation typed into any block then shows at once
                renderer.patch(replace(b, clean=True))
            self.signals.warmed.emit(self.req)
        except Exception as exc:  # noqa: BLE001 - thread boundary: report to the window
            self.signals.failed.emit(self.req, f"{self.name}: {exc}")


class PageViews(QObject):
    """The page views: owns the view mode, the current page's renderer, and the background
    render jobs (app.ui.render.controller.RenderController adds the style dock, the mask brush
    and the exports).

    Emits `rendered(page name, mode, seconds)` each time the canvas shows a new render (seconds:
    the time taken on the GUI thread, 0 for a background render)."""

    rendered = Signal(str, str, float)
    idle = Signal()  # the background job is over (the renderer may be used on the GUI thread)

    def __init__(self, window, view_mode_action):
        super().__init__(window)
        self.window = window
        self.mode = "original"
        self.renderer = None  # PageRenderer of `self.page_name`
        self.page_name = ""
        self.result = None  # the RenderedPage on the canvas
        self._engines: dict = {}
        self._req = 0
        self._busy = False
        self._again = False
        self._preview: tuple[str, str] | None = None  # (block id, text) typed but not committed
        self.pool = track_pool(QThreadPool(self))
        self.pool.setObjectName("page-render")
        self.pool.setMaxThreadCount(1)
        self.signals = _JobSignals(self)
        self.signals.done.connect(self._on_done)
        self.signals.warmed.connect(self._on_warmed)
        self.signals.failed.connect(self._on_failed)
        self._build_actions(view_mode_action)
        window.page_shown.connect(lambda _name: self.refresh())
        window.doc.page_changed.connect(self._on_page_changed)
        window.doc.project_reset.connect(self._on_project_reset)
        window.panel.translation_edit.textChanged.connect(self._on_translation_typed)

    # --- actions --------------------------------------------------------------------------
    def _build_actions(self, view_mode_action) -> None:
        """The mode actions (Alt+1/2/3, V cycles), the lettering sizes, their toolbar. The window
        places them: `view_entries` into View (None: a separator), `toolbar` on its first row."""
        self.group = QActionGroup(self)
        self.mode_actions = {}
        for i, mode in enumerate(MODES, start=1):
            act = QAction(f"{MODE_LABELS[mode]} page", self)
            act.setCheckable(True)
            act.setChecked(mode == self.mode)
            act.setShortcut(f"Alt+{i}")
            act.setToolTip(f"Show the {MODE_LABELS[mode].lower()} page (Alt+{i}; V cycles)")
            act.triggered.connect(lambda _=False, m=mode: self.set_mode(m))
            self.group.addAction(act)
            self.mode_actions[mode] = act
        view_mode_action.triggered.connect(self.cycle_mode)
        self._build_size_actions()
        self._build_outside_actions()
        self.view_entries = [None, *self.mode_actions.values(), view_mode_action, self.sizes_menu, self.select_small,
                             self.outside_menu]
        self.toolbar = QToolBar("Page view")
        self.toolbar.setObjectName("render_toolbar")
        self.toolbar.addActions(list(self.mode_actions.values()))

    def _build_size_actions(self) -> None:
        """View > Lettering sizes: the page's and the project's size harmonisation; and the
        action that selects the blocks set below their minimum size."""
        sizes = QMenu("Lettering &sizes")
        self.page_size_actions, self.project_size_actions = {}, {}
        for title, choices, actions, handler in (
                ("This page", [("", "As the project")] + list(SIZE_LABELS.items()), self.page_size_actions,
                 self.push_page_sizes),
                ("The project", list(SIZE_LABELS.items()), self.project_size_actions, self.push_project_sizes)):
            sizes.addSection(title)
            group = QActionGroup(sizes)
            for key, label in choices:
                act = sizes.addAction(label)
                act.setCheckable(True)
                act.triggered.connect(lambda _=False, k=key, h=handler: h(k))
                group.addAction(act)
                actions[key] = act
        self.sizes_menu = sizes
        sizes.aboutToShow.connect(self.show_sizes)
        self.window.page_shown.connect(lambda _name: self.show_sizes())
        self.select_small = QAction("Select the blocks set below their minimum size", self)
        self.select_small.triggered.connect(self.select_below_min)
        self.show_sizes()

    def _build_outside_actions(self) -> None:
        """View > Text outside bubbles: the project's policy for captions and for sound effects."""
        from app.core.document.types import OUTSIDE_KINDS, OUTSIDE_POLICIES

        outside = QMenu("Text &outside bubbles")
        outside.setToolTipsVisible(True)
        self.outside_actions: dict[tuple[str, str], object] = {}
        for kind in OUTSIDE_KINDS:
            outside.addSection(OUTSIDE_TITLES[kind])
            group = QActionGroup(outside)
            for policy in OUTSIDE_POLICIES:
                act = outside.addAction(OUTSIDE_LABELS[policy])
                act.setCheckable(True)
                act.triggered.connect(lambda _=False, k=kind, p=policy: self.push_project_outside(k, p))
                group.addAction(act)
                self.outside_actions[(kind, policy)] = act
        self.outside_menu = outside
        outside.aboutToShow.connect(self.show_outside)
        self.window.doc.project_reset.connect(self.show_outside)
        self.window.doc.project_changed.connect(lambda what: self.show_outside() if what == "outside" else None)
        self.show_outside()

    def show_outside(self) -> None:
        """Check the project's policies for text outside bubbles."""
        project = self.window.doc.project
        if project is None:
            return
        for (kind, policy), act in self.outside_actions.items():
            act.setChecked(project.outside.get(kind, "translate") == policy)

    def push_project_outside(self, kind: str, policy: str) -> None:
        project = self.window.doc.project
        if project is not None and project.outside.get(kind) != policy:
            self.window.undo_stack.push(ProjectValueCommand(
                self.window.doc, self.set_project_outside, dict(project.outside), {**project.outside, kind: policy},
                "change how text outside bubbles is lettered"))

    def set_project_outside(self, outside: dict) -> None:
        """The project's policy for text outside bubbles changed (its undo command calls this)."""
        if self.window.doc.project is None:
            return
        self.window.doc.set_outside(outside)  # the menu follows (project_changed)
        self.style_changed()

    def show_sizes(self) -> None:
        """Check the page's and the project's size choices."""
        w = self.window
        project = w.doc.project
        page = w.doc.page(w.current) if project is not None and w.current and w.doc.has_page(w.current) else None
        if project is not None:
            self.project_size_actions.get(project.sizes, self.project_size_actions["each"]).setChecked(True)
            self.page_size_actions[(page.sizes or "") if page is not None else ""].setChecked(True)

    def push_page_sizes(self, sizes: str) -> None:
        """The current page's own size harmonisation ("" = as the project), as an undoable edit."""
        w = self.window
        if w.doc.project is None or not w.current or not w.doc.has_page(w.current):
            return
        if (w.doc.page(w.current).sizes or "") != sizes:
            w.edit(lambda p: replace(p, sizes=sizes or None), "change the page's lettering sizes")

    def push_project_sizes(self, sizes: str) -> None:
        project = self.window.doc.project
        if project is not None and sizes != project.sizes:
            self.window.undo_stack.push(ProjectValueCommand(self.window.doc, self.set_project_sizes, project.sizes, sizes,
                                                            "change the project's lettering sizes"))

    def set_project_sizes(self, sizes: str) -> None:
        """The project's size harmonisation changed (each / one / few; its undo command calls this)."""
        if self.window.doc.project is None:
            return
        self.window.doc.set_sizes(sizes)
        self.show_sizes()
        self.style_changed()

    def below_min(self) -> list:
        """The blocks of the page on the canvas set below their minimum size (translated view)."""
        if self.result is None or self.mode != "translated":
            return []
        return self.result.below_min()

    def select_below_min(self) -> None:
        """Select the current page's blocks set below their minimum size (canvas and list)."""
        ids = [b.id for b in self.below_min()]
        if not ids:
            self.window.show_status("No block on this page is set below its minimum size.")
            return
        self.window.view.select_block(ids[0])
        for bid in ids[1:]:
            item = self.window.view.block_item(bid)
            if item:
                item.setSelected(True)
        self.window.panel.select_block(ids[0])

    def _status(self, engine: str) -> str:
        text = f"{MODE_LABELS[self.mode]} page ({engine})."
        small = self.below_min()
        if small:
            numbers = ", ".join(str(b.order) for b in small)
            text += (f" Block{'s' if len(small) > 1 else ''} {numbers} set below the minimum size "
                     "(View > Select the blocks set below their minimum size).")
        return text

    def cycle_mode(self) -> None:
        self.set_mode(MODES[(MODES.index(self.mode) + 1) % len(MODES)])

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(mode)
        self.mode_actions[mode].setChecked(True)
        if mode == self.mode:
            return
        self.mode = mode
        view = self.window.view
        if mode == "original":
            view.set_overlay(self.window.settings.overlay)
        elif view.overlay == "text":
            view.set_overlay("boxes")  # the transcription overlay would hide the page's own text
        self.refresh()

    # --- rendering --------------------------------------------------------------------------
    def engine_name(self) -> str:
        return getattr(self.window.settings, "inpaint", "auto")

    def blocks(self, page=None):
        from app.core.exports.translated_pages import render_blocks

        page = page or self.window.doc.page(self.window.current)
        project = self.window.doc.project
        if self._preview is not None and self.mode == "translated":
            bid, text = self._preview  # the translation being typed, lettered as the export would
            page = replace(page, blocks=tuple(replace(b, translation=text) if b.id == bid else b
                                              for b in page.blocks))
        return render_blocks(page, project.style, options_for(self.mode, self.window.settings), project.sizes,
                             project.outside)

    def refresh(self) -> None:
        """Show the current page in the current mode (at once when cached, else in the background)."""
        w = self.window
        if self.mode == "original" or not w.current or w.doc.project is None or not w.doc.has_page(w.current):
            self.result = None
            w.view.show_rendered(None)
            return
        page = w.doc.page(w.current)
        if page.error:
            w.view.show_rendered(None)
            return
        if self.page_name != w.current:
            self.renderer, self.page_name = None, w.current
        blocks = self.blocks(page)
        if self._busy:
            self._again = True
            return
        if self.renderer is not None and all(self.renderer.has_patch(b) for b in blocks if b.clean):
            t = time.perf_counter()
            result = self.renderer.render(blocks)
            self._show(result, time.perf_counter() - t)
            w.show_status(self._status(self.renderer.engine.name))
            return
        self._busy = True
        self._req += 1
        w.show_status(f"Rendering the {self.mode} page…")
        self.pool.start(_RenderJob(self.signals, self._req, w.doc.source, w.current, blocks, self.engine_name(),
                                   self._engines, self.renderer, w.settings))

    def _on_done(self, req: int, renderer, result) -> None:
        if req == self._req and self.page_name == self.window.current:
            self._show(result, 0.0)
            self.window.show_status(self._status(renderer.engine.name))
            self._pending_renderer = renderer

    def _on_warmed(self, req: int) -> None:
        self._busy = False
        renderer = getattr(self, "_pending_renderer", None)
        self._pending_renderer = None
        if req == self._req and renderer is not None and renderer is not self.renderer \
                and self.page_name == self.window.current:
            self.renderer = renderer
        self.idle.emit()
        if self._again:
            self._again = False
            self.refresh()

    def _on_failed(self, req: int, message: str) -> None:
        self._busy = False
        self.window.show_notice("error", f"Rendering failed: {message}")
        self.set_mode("original")

    def _show(self, result, seconds: float) -> None:
        if self.mode == "original":
            return
        self.result = result
        image = result.cleaned if self.mode == "cleaned" else result.final
        self.window.view.show_rendered(rgb_to_qimage(image))
        self.rendered.emit(self.page_name, self.mode, seconds)

    def _on_page_changed(self, name: str) -> None:
        if name == self.window.current and self.mode != "original":
            self._preview = None
            self.refresh()

    def _on_project_reset(self) -> None:
        self.renderer, self.page_name, self.result, self._preview = None, "", None, None
        self.window.view.show_rendered(None)

    def _on_translation_typed(self) -> None:
        panel = self.window.panel
        if self.mode != "translated" or not panel.current_id or panel._syncing:
            return
        self._preview = (panel.current_id, panel.translation_edit.toPlainText())
        self.refresh()

    # --- styles ------------------------------------------------------------------------------
    def set_project_style(self, style: TextStyle) -> None:
        """The project's default lettering style changed (its undo command calls this)."""
        if self.window.doc.project is None:
            return
        self.window.doc.set_style(style)
        self.style_changed()

    def style_changed(self) -> None:
        if self.mode != "original":
            self.refresh()
        editor = getattr(self, "style_editor", None)  # app.ui.render.controller's, once composed
        if editor is not None:
            editor.show_selection()

    def push_project_style(self, style: TextStyle) -> None:
        project = self.window.doc.project
        if project is not None and style != project.style:
            self.window.undo_stack.push(ProjectValueCommand(self.window.doc, self.set_project_style, project.style, style,
                                                            "change the project's text style"))

    def layer_of(self, block_id: str):
        """The current render's text layer of a block (None when not lettered or not rendered)."""
        if self.result is None:
            return None
        return next((layer for b, layer in self.result.layers if b.id == block_id), None)

    def shutdown(self, timeout_ms: int = 30000) -> bool:
        """At exit: drop queued renders and wait for the running one at most `timeout_ms`."""
        self.pool.clear()
        return self.pool.waitForDone(timeout_ms)


def wait_rendered(controller: PageViews, timeout: float = 30.0) -> None:
    """Block (processing events) until no render job runs: for tests and benchmarks."""
    from PySide6.QtWidgets import QApplication

    end = time.monotonic() + timeout
    while (controller._busy or controller.pool.activeThreadCount()) and time.monotonic() < end:
        QApplication.processEvents()
        threading.Event().wait(0.01)
    QApplication.processEvents()
