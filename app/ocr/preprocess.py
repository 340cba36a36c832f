"""SigLIP2 NaFlex image preprocessing (docs/ocr-engine.md, a crop's pixels), built locally.

Equal, value for value, to `transformers.Siglip2ImageProcessor` constructed with the published
`google/siglip2-base-patch16-naflex` settings (rescale 1/255, mean = std = 0.5, bilinear with
antialiasing, patch 16) at any patch budget: tests/test_preprocess.py checks it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from PIL import Image

PATCH_SIZE = 16
_MEAN = 127.5  # 0.5 / (1/255): rescale and normalize fused, as transformers does
_STD = 127.5


def target_size(height: int, width: int, max_num_patches: int, patch_size: int = PATCH_SIZE,
                eps: float = 1e-5) -> tuple[int, int]:
    """(h, w), multiples of patch_size, of the largest scale whose patch grid fits the budget.

    Binary search on the scale in (eps/10, 100); small crops are scaled up.
    """
    def scaled(scale: float, size: int) -> int:
        return int(max(patch_size, math.ceil(size * scale / patch_size) * patch_size))

    lo, hi = eps / 10, 100.0
    while hi - lo >= eps:
        mid = (lo + hi) / 2
        if (scaled(mid, height) / patch_size) * (scaled(mid, width) / patch_size) <= max_num_patches:
            lo = mid
        else:
            hi = mid
    return scaled(lo, height), scaled(lo, width)


@dataclass(frozen=True)
class PixelBatch:
    """Model input for B crops at a budget of N patches (P = 3 * patch_size**2 values per patch)."""

    pixel_values: torch.Tensor  # (B, N, P) float32, zero rows for padding
    pixel_attention_mask: torch.Tensor  # (B, N) int32, 1 for real patches
    spatial_shapes: torch.Tensor  # (B, 2) int64, patch grid (rows, cols)

    def rows(self, start: int, stop: int) -> PixelBatch:
        """Crops [start, stop) of the batch."""
        return PixelBatch(self.pixel_values[start:stop], self.pixel_attention_mask[start:stop],
                          self.spatial_shapes[start:stop])

    def to(self, device) -> PixelBatch:
        return PixelBatch(self.pixel_values.to(device), self.pixel_attention_mask.to(device),
                          self.spatial_shapes.to(device))


def image_to_patches(image: Image.Image, max_num_patches: int, patch_size: int = PATCH_SIZE):
    """One crop -> ((n, P) float32 patches, (rows, cols)). Patches are row-major over the grid;
    inside a patch: pixel row, pixel column, channel."""
    from torchvision.transforms.v2 import functional as tvf

    if image.mode != "RGB":
        image = image.convert("RGB")
    pixels = torch.from_numpy(np.asarray(image, dtype=np.uint8).copy()).permute(2, 0, 1)  # (3, H, W)
    h, w = target_size(pixels.shape[1], pixels.shape[2], max_num_patches, patch_size)
    resized = tvf.resize(pixels, [h, w], interpolation=tvf.InterpolationMode.BILINEAR, antialias=True)
    x = resized.to(torch.float32).sub_(_MEAN).div_(_STD)  # (3, h, w)
    rows, cols = h // patch_size, w // patch_size
    x = x.reshape(3, rows, patch_size, cols, patch_size).permute(1, 3, 2, 4, 0)
    return x.reshape(rows * cols, -1), (rows, cols)


def preprocess(images: list[Image.Image], max_num_patches: int, patch_size: int = PATCH_SIZE) -> PixelBatch:
    """Crops -> a padded PixelBatch at the given patch budget."""
    if max_num_patches < 1:
        raise ValueError(f"patch budget must be positive, got {max_num_patches}")
    n_values = 3 * patch_size * patch_size
    values = torch.zeros(len(images), max_num_patches, n_values, dtype=torch.float32)
    mask = torch.zeros(len(images), max_num_patches, dtype=torch.int32)
    shapes = torch.zeros(len(images), 2, dtype=torch.long)
    for i, image in enumerate(images):
        patches, (rows, cols) = image_to_patches(image, max_num_patches, patch_size)
        values[i, : len(patches)] = patches
        mask[i, : len(patches)] = 1
        shapes[i, 0], shapes[i, 1] = rows, cols
    return PixelBatch(values, mask, shapes)
