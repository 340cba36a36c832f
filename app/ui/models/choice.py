"""The OCR model and detector the window reads with: the toolbar's two boxes, the banner that
says what is missing (or that the demo models are in use), the folder / file choosers and the
model manager. `ModelChoice(window, model_combo, detector_combo, banner)` talks to the window
through `ModelWindow` (its settings and `update_settings`); the shell gives it the two boxes and
the banner it built."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtWidgets import QFileDialog

from app.ui.models import status as model_status

if TYPE_CHECKING:
    from app.core.config.settings import AppSettings


class ModelWindow(Protocol):
    settings: AppSettings  # model, detector, last_dir

    @property
    def demo(self) -> bool:
        """True while the demo pages and models are open."""
        ...

    def update_settings(self, **changes) -> None:
        """Change and store settings; the reading worker is reconfigured."""


class ModelChoice:
    def __init__(self, window: ModelWindow, model_combo, detector_combo, banner):
        self.window, self.model_combo, self.detector_combo, self.banner = window, model_combo, detector_combo, banner
        model_combo.activated.connect(lambda _i: self.on_model_combo())
        detector_combo.activated.connect(lambda _i: self.on_detector_combo())

    def fill_combos(self) -> None:
        """The installed models and detectors, the current ones selected (after a settings change)."""
        s = self.window.settings
        for combo, choices, current, more in (
                (self.model_combo, model_status.model_choices(s.model), s.model, "Choose folder…"),
                (self.detector_combo, model_status.detector_choices(s.detector), s.detector, "Choose .pt file…")):
            combo.blockSignals(True)
            combo.clear()
            for label, spec in choices:
                combo.addItem(label, spec)
            combo.addItem(more, "")
            combo.setCurrentIndex(max(0, combo.findData(current)))
            combo.setToolTip(combo.currentText())  # the whole label where the toolbar cuts it
            combo.blockSignals(False)

    def on_model_combo(self) -> None:
        spec = self.model_combo.currentData()
        if spec:
            self.window.update_settings(model=spec)
            self.update_banner()
        else:
            self.choose_model_folder()

    def on_detector_combo(self) -> None:
        spec = self.detector_combo.currentData()
        if spec:
            self.window.update_settings(detector=spec)
            self.update_banner()
        else:
            self.choose_detector()

    def choose_model_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self.banner.window(), "Choose an OCR model folder (config.json, "
                                                  "model.safetensors…)", self.window.settings.last_dir)
        if folder:
            self.window.update_settings(model=folder)
        self.fill_combos()
        self.update_banner()

    def choose_detector(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.banner.window(), "Choose a detector (ultralytics YOLO .pt)",
                                              self.window.settings.last_dir, "YOLO model (*.pt)")
        if path:
            self.window.update_settings(detector=path)
        self.fill_combos()
        self.update_banner()

    def update_banner(self) -> None:
        """What is missing with the ways to get it, or the demo notice while a demo model reads
        (whatever the pages: on real ones they misread), or nothing. Called whenever the models
        or the open volume change, so a message whose cause is gone goes with it."""
        s = self.window.settings
        demo_in_use = model_status.is_demo(s.model) or model_status.is_demo(s.detector)
        missing = model_status.missing_models(s.model, s.detector)
        if demo_in_use and not missing:
            on_samples = self.window.demo or self._samples_open()
            where = ("These are the synthetic sample pages." if on_samples else
                     "<b>These pages are not the samples</b>: on real manga the demo models miss bubbles and "
                     "misread much of the text.")
            self.banner.show_message(
                "demo", f"<b>Demo models ({model_status.DEMO_LABEL})</b>: they were trained on <i>synthetic</i> "
                f"text only. {where} For real pages, download Hayai v2.5 Nova and a detector in the model manager.",
                [("Model manager…", self.open_manager)], closable=False)  # stays while they read
            return
        self._update_missing(missing)

    def _samples_open(self) -> bool:
        from pathlib import Path

        from app.paths import resource_path

        source = getattr(getattr(self.window, "doc", None), "source", "") or ""
        try:
            return bool(source) and Path(source).resolve() == resource_path("samples").resolve()
        except OSError:
            return False

    def _update_missing(self, missing: list[str]) -> None:
        if not missing:
            self.banner.dismiss()
            return
        size = model_status.default_model_size_text()
        self.banner.show_message(
            "warning", f"<b>{' and '.join(missing)} not installed.</b> Hayai Desktop needs an OCR model and a "
            "text detector to read pages.",
            [(f"Download Hayai v2.5 Nova ({size})", lambda: self.open_manager(download=model_status.DEFAULT_MODEL)),
             ("Choose a local folder…", self.choose_model_folder),
             ("Model manager…", self.open_manager)], closable=True)

    def open_manager(self, download: str | None = None, select: str | None = None) -> None:
        """The model manager, optionally starting the download of `download` or showing `select`."""
        from app.ui.models.manager import ModelManagerDialog

        dialog = ModelManagerDialog(self.banner.window())
        dialog.model_chosen.connect(lambda spec: (self.window.update_settings(model=spec), self.fill_combos()))
        dialog.detector_chosen.connect(lambda spec: (self.window.update_settings(detector=spec), self.fill_combos()))
        if select:
            dialog.select(select)
        if download:
            dialog.start_download(download)
        dialog.exec()
        dialog.dispose()  # closing never waits: a cancelled download ends on its own, then the dialog goes
        self.fill_combos()
        self.update_banner()
