"""The reading settings on the toolbar's second row: the patch budget (with Custom…), the device,
the precision and the reading order of new detections. `ReadingSettings(window)` builds the
boxes and keeps them and the settings in step; the window puts them on the toolbar (with the
model boxes of app.ui.models.choice between precision and order)."""
from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QComboBox, QInputDialog

from app.core.config.settings import PATCH_BUDGETS, AppSettings
from app.ui.reading.device_status import fill_device_combos


class SettingsWindow(Protocol):
    settings: AppSettings  # patches, device, precision, order

    def update_settings(self, **changes) -> None:
        """Change and store settings; the reading worker is reconfigured."""


class ReadingSettings:
    def __init__(self, window: SettingsWindow, parent=None):
        self.window, self.parent = window, parent
        self.patches = QComboBox()
        self.patches.setToolTip("Patch budget: more patches read small text better, but slower")
        for p in PATCH_BUDGETS:
            self.patches.addItem(f"{p} patches", p)
        self.patches.addItem("Custom…", -1)
        self.device = QComboBox()
        self.precision = QComboBox()
        fill_device_combos(self.device, self.precision)
        self.order = QComboBox()
        self.order.setToolTip("Reading order of new detections")
        self.order.addItem("Right to left", "rtl")
        self.order.addItem("Left to right", "ltr")
        self.patches.activated.connect(self._on_patches_chosen)
        for combo in (self.device, self.precision, self.order):
            combo.activated.connect(lambda _i: self._store())

    def sync(self) -> None:
        """Show the current settings in the boxes (after a change of settings)."""
        s = self.window.settings
        budgets = [self.patches.itemData(i) for i in range(self.patches.count())]
        if s.patches not in budgets:
            self.patches.insertItem(self.patches.count() - 1, f"{s.patches} patches", s.patches)
        self.patches.setCurrentIndex(self.patches.findData(s.patches))
        self.device.setCurrentIndex(max(0, self.device.findData(s.device)))
        self.precision.setCurrentIndex(max(0, self.precision.findData(s.precision)))
        self.order.setCurrentIndex(max(0, self.order.findData(s.order)))

    def _on_patches_chosen(self, _index: int) -> None:
        if self.patches.currentData() == -1:  # Custom…
            value, ok = QInputDialog.getInt(self.parent, "Patch budget", "Patches per crop (16 to 4096):",
                                            self.window.settings.patches, 16, 4096, 16)
            if ok:
                if self.patches.findData(value) < 0:
                    self.patches.insertItem(self.patches.count() - 1, f"{value} patches", value)
            else:
                value = self.window.settings.patches
            self.patches.setCurrentIndex(self.patches.findData(value))
        self._store()

    def _store(self) -> None:
        self.window.update_settings(patches=int(self.patches.currentData()), device=self.device.currentData(),
                               precision=self.precision.currentData(), order=self.order.currentData())
