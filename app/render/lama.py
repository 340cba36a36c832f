"""LaMa inpainting (big-LaMa fine-tuned on manga) run from an ONNX file with onnxruntime.

The model store entry `lama-manga` (kind "inpainting") is one ONNX file with dynamic height and
width. Its contract, as the apps that use it run it:

    inputs   image (1, 3, H, W) float32 RGB in [0, 1]; mask (1, 1, H, W) float32, 1 = fill
    output   (1, 3, H, W) float32 RGB in [0, 1] (an output above 2 is read as 0..255)
    H, W     multiples of 8 (the window is padded by reflection, the mask with zeros)

A file whose inputs have a fixed size (some exports are 512 x 512) gets each window resized to
that size and back. Windows larger than `tile` pixels are cut into overlapping tiles; tiles
without mask pixels are skipped. The device follows the app's policy: CUDA when onnxruntime
offers it (the onnxruntime-gpu package) and the user allows it, else the CPU.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from app.errors import ModelError, UserError

LAMA_MODEL = "lama-manga"
PAD = 8


def providers_for(device: str = "auto") -> list[str]:
    """onnxruntime execution providers for the device policy (auto: CUDA when offered)."""
    import onnxruntime as ort

    available = ort.get_available_providers()
    device = (device or "auto").lower()
    if device.startswith("cuda"):
        if "CUDAExecutionProvider" not in available:
            raise UserError("CUDA was requested for LaMa but this onnxruntime has no CUDA support; install "
                            "onnxruntime-gpu in place of onnxruntime, or use --device cpu")
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    if device == "auto" and "CUDAExecutionProvider" in available:
        return ["CUDAExecutionProvider", "CPUExecutionProvider"]
    return ["CPUExecutionProvider"]


def _fixed(dim) -> int | None:
    return dim if isinstance(dim, int) and dim > 0 else None


class LamaInpainter:
    """One onnxruntime session of a LaMa ONNX file; `inpaint` fills a window's mask."""

    name = "lama"

    def __init__(self, path: str | os.PathLike, device: str = "auto", tile: int = 1024, overlap: int = 64,
                 threads: int | None = None):
        import onnxruntime as ort

        self.path = Path(path)
        if not self.path.is_file():
            raise ModelError(f"{self.path}: no such LaMa ONNX file. Download it with: "
                             f"hayai-desktop models download {LAMA_MODEL}")
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        try:
            self.session = ort.InferenceSession(str(self.path), options, providers=providers_for(device))
        except UserError:
            raise
        except Exception as exc:  # onnxruntime raises its own types for bad files
            raise ModelError(f"{self.path}: not a usable ONNX model ({type(exc).__name__}: {exc}). Download it "
                             f"again: hayai-desktop models download {LAMA_MODEL}") from exc
        inputs = self.session.get_inputs()
        if len(inputs) != 2 or any(len(i.shape) != 4 for i in inputs) or inputs[1].shape[1] not in (1, "1"):
            shapes = ", ".join(f"{i.name}{list(i.shape)}" for i in inputs)
            raise ModelError(f"{self.path}: not a LaMa inpainting model (inputs {shapes}; expected an image "
                             "(1, 3, H, W) and a mask (1, 1, H, W))")
        self.image_input, self.mask_input = inputs[0].name, inputs[1].name
        self.fixed = (_fixed(inputs[0].shape[2]), _fixed(inputs[0].shape[3]))
        self.tile = max(64, tile)
        self.overlap = min(overlap, self.tile // 4)
        self.providers = self.session.get_providers()

    @property
    def device(self) -> str:
        return "CUDA" if self.providers and self.providers[0] == "CUDAExecutionProvider" else "CPU"

    def context(self, w: int, h: int) -> int:
        """Surrounding page to give the model: half the block's long side, 32..256 pixels."""
        return int(min(256, max(32, 0.5 * max(w, h))))

    def inpaint(self, window: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(h, w, 3) uint8 with the masked pixels filled; other pixels as given."""
        out = window.copy()
        if not mask.any():
            return out
        h, w = mask.shape
        step = self.tile - self.overlap
        ys = list(range(0, max(1, h - self.overlap), step)) if h > self.tile else [0]
        xs = list(range(0, max(1, w - self.overlap), step)) if w > self.tile else [0]
        for ty in ys:
            for tx in xs:
                ty1, tx1 = min(h, ty + self.tile), min(w, tx + self.tile)
                ty0, tx0 = max(0, ty1 - self.tile), max(0, tx1 - self.tile)
                # each tile writes the part of the window that is nearer to its centre than its edge
                core = np.zeros((ty1 - ty0, tx1 - tx0), bool)
                half = self.overlap // 2
                cy0 = 0 if ty0 == 0 else half
                cx0 = 0 if tx0 == 0 else half
                cy1 = core.shape[0] if ty1 == h else core.shape[0] - half
                cx1 = core.shape[1] if tx1 == w else core.shape[1] - half
                core[cy0:cy1, cx0:cx1] = True
                tile_mask = mask[ty0:ty1, tx0:tx1]
                if not (tile_mask & core).any():
                    continue
                result = self._run(window[ty0:ty1, tx0:tx1], tile_mask)
                write = tile_mask & core
                out[ty0:ty1, tx0:tx1][write] = result[write]
        return out

    def _run(self, image: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """One forward pass on an (h, w, 3) uint8 image; returns (h, w, 3) uint8."""
        import cv2

        h, w = mask.shape
        fh, fw = self.fixed
        if fh and fw:
            img = cv2.resize(image, (fw, fh), interpolation=cv2.INTER_AREA)
            msk = cv2.resize(mask.astype(np.uint8), (fw, fh), interpolation=cv2.INTER_NEAREST) > 0
            ph, pw = fh, fw
        else:
            ph, pw = -(-h // PAD) * PAD, -(-w // PAD) * PAD
            mode = "reflect" if h > 1 and w > 1 else "edge"
            img = np.pad(image, ((0, ph - h), (0, pw - w), (0, 0)), mode=mode)
            msk = np.pad(mask, ((0, ph - h), (0, pw - w)))
        x = img.astype(np.float32).transpose(2, 0, 1)[None] / 255.0  # (1, 3, H, W)
        m = msk.astype(np.float32)[None, None]  # (1, 1, H, W)
        try:
            y = self.session.run(None, {self.image_input: x, self.mask_input: m})[0]
        except Exception as exc:  # onnxruntime's own error types
            raise ModelError(f"{self.path}: LaMa failed on a {w}x{h} window ({type(exc).__name__}: {exc})") from exc
        y = np.asarray(y, np.float32)
        if y.ndim != 4 or y.shape[1] != 3:
            raise ModelError(f"{self.path}: LaMa returned shape {list(y.shape)}, expected (1, 3, H, W)")
        y = y[0].transpose(1, 2, 0)  # (H, W, 3)
        if float(y.max(initial=0.0)) <= 2.0:
            y = y * 255.0
        y = np.clip(y + 0.5, 0, 255).astype(np.uint8)
        if fh and fw:
            return cv2.resize(y, (w, h), interpolation=cv2.INTER_CUBIC)
        return y[:h, :w]
