"""Device and precision in the main window: the toolbar choices, the status-bar label of what
actually runs (device, precision, a GPU given up), the one-time notice when a model leaves the
GPU, and the preloading of the models as soon as the window is up.

A mixin of MainWindow (which owns `act`, `device_label`, `host`, `show_notice`).
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

DEVICE_ITEMS = (("auto", "Auto"), ("cuda", "CUDA"), ("cpu", "CPU"))  # + ("mps", ...) when present
MPS_ITEM = ("mps", "Apple MPS")
PRECISION_ITEMS = (("auto", "Auto"), ("fp32", "FP32 (exact)"), ("bf16", "BF16"), ("fp16", "FP16 (GPU)"),
                   ("int8", "INT8 (CPU)"))
PRECISION_LABELS = {"fp32": "FP32", "bf16": "BF16", "fp16": "FP16", "int8": "INT8"}
PRECISION_TIP = ("Number format of the OCR model. FP32 reads exactly as the published model; BF16 and "
                 "INT8 read 2-3x faster on a recent CPU, FP16 on a GPU, with at most a few characters "
                 "per thousand read differently. Auto picks the fastest for the device.")


def fill_device_combos(device_combo, precision_combo) -> None:
    """The toolbar's Device and Precision choices (MPS is added once the worker finds it)."""
    for key, label in DEVICE_ITEMS:
        device_combo.addItem(label, key)
    device_combo.setToolTip("Where the models run")
    for key, label in PRECISION_ITEMS:
        precision_combo.addItem(label, key)
    precision_combo.setToolTip(PRECISION_TIP)
    for combo in (device_combo, precision_combo):  # MPS and "Auto (BF16)" arrive later: grow with them
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)


def status_text(info: dict) -> tuple[str, str]:
    """(label, tooltip) for the status bar from the worker's models_ready info."""
    dev = info.get("device", "cpu")
    gpu = f" ({info['gpu']})" if info.get("gpu") else ""
    names = " + ".join(x for x in (info.get("model"), info.get("detector")) if x)
    precision = PRECISION_LABELS.get(info.get("precision", ""), info.get("precision", ""))
    fallback = info.get("fallback", "")
    label = f"{names} on {dev.upper()}{gpu}"
    if fallback:
        label += " (GPU failed)"
    if precision:
        label += f" · {precision}"
    tip = f"Models: {names}\nDevice actually used: {dev}{gpu}"
    det_dev = info.get("detector_device", "")
    if det_dev and det_dev != dev:
        tip += f" (detector on {det_dev})"
    if precision:
        tip += f"\nOCR precision: {precision}"
    if fallback:
        tip += f"\nMoved to the CPU because {fallback}"
    return label, tip


class DeviceStatusMixin:
    """Status bar, notices and preloading for device and precision."""

    _preload_started = False

    def connect_device_signals(self) -> None:
        w = self.host.worker
        w.models_ready.connect(self._on_models_ready)
        w.device_fell_back.connect(self._on_device_fell_back)
        w.capabilities.connect(self._on_capabilities)
        w.preloaded.connect(self._on_preloaded)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().showEvent(event)
        if not self._preload_started:  # imports and model loads start in the worker at once
            self._preload_started = True
            self.host.preload()

    def _on_models_ready(self, info: dict) -> None:
        label, tip = status_text(info)
        self.device_label.setText(label)
        self.device_label.setToolTip(tip)

    def _on_device_fell_back(self, message: str) -> None:
        if not self._closing:
            self.show_notice("warning", message)

    def _on_capabilities(self, caps: dict) -> None:
        combo = self.act.device
        if caps.get("mps") and combo.findData(MPS_ITEM[0]) < 0:
            combo.insertItem(combo.findData("cpu"), MPS_ITEM[1], MPS_ITEM[0])
            if self.settings.device == MPS_ITEM[0]:
                combo.setCurrentIndex(combo.findData(MPS_ITEM[0]))
        auto = PRECISION_LABELS.get(caps.get("auto_precision", ""), "")
        if auto:  # what Auto means on this machine's CPU (a GPU uses FP16)
            i = self.act.precision.findData("auto")
            self.act.precision.setItemText(i, f"Auto ({auto})")
            self.act.precision.setItemData(i, f"On this CPU Auto runs {auto}; on a CUDA GPU, FP16.",
                                           Qt.ItemDataRole.ToolTipRole)

    def _on_preloaded(self, reason: str) -> None:
        """The start-up preload ended; on failure the label says so (a request will retry and
        report the error where the user asked for something)."""
        if reason and not self._closing and self.device_label.text() == "Loading models…":
            self.device_label.setText("Models not loaded")
            self.device_label.setToolTip(reason)
