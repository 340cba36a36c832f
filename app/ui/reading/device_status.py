"""Device and precision in the main window: the toolbar's choices and what the worker found on
this machine, the status-bar text of what actually runs (device, precision, a GPU given up).
The label, the one-time notice when a model leaves the GPU and the preload at the first show are
the ReadingController's (app.ui.reading.controller).
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


def apply_capabilities(device_combo, precision_combo, caps: dict, device_setting: str) -> None:
    """What the worker found on this machine, in the toolbar's choices: Apple MPS when present,
    what Auto precision means on this CPU."""
    if caps.get("mps") and device_combo.findData(MPS_ITEM[0]) < 0:
        device_combo.insertItem(device_combo.findData("cpu"), MPS_ITEM[1], MPS_ITEM[0])
        if device_setting == MPS_ITEM[0]:
            device_combo.setCurrentIndex(device_combo.findData(MPS_ITEM[0]))
    auto = PRECISION_LABELS.get(caps.get("auto_precision", ""), "")
    if auto:  # what Auto means on this machine's CPU (a GPU uses FP16)
        i = precision_combo.findData("auto")
        precision_combo.setItemText(i, f"Auto ({auto})")
        precision_combo.setItemData(i, f"On this CPU Auto runs {auto}; on a CUDA GPU, FP16.",
                                    Qt.ItemDataRole.ToolTipRole)
