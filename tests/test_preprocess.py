import numpy as np
import pytest
import torch
from PIL import Image

from app.ocr.preprocess import preprocess, target_size


@pytest.mark.parametrize("h,w,budget,expected", [
    (1024, 1024, 256, (256, 256)), (120, 900, 256, (96, 672)), (4, 4, 256, (256, 256)), (300, 80, 512, (672, 192)),
])
def test_resize_vectors_from_the_spec(h, w, budget, expected):
    assert target_size(h, w, budget) == expected


@pytest.mark.parametrize("budget", [256, 384, 512, 100, 1024])
def test_equal_to_transformers_processor(budget):
    from transformers import Siglip2ImageProcessor

    rng = np.random.default_rng(budget)
    images = [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8))
              for h, w in [(37, 211), (300, 80), (120, 900), (64, 64), (5, 700), (2000, 30)]]
    gray = images[0].convert("L")
    reference = Siglip2ImageProcessor(max_num_patches=budget)(images=images + [gray.convert("RGB")],
                                                              return_tensors="pt")
    ours = preprocess(images + [gray], budget)  # grayscale crops are read as RGB
    assert torch.equal(ours.pixel_values, reference["pixel_values"])
    assert torch.equal(ours.pixel_attention_mask, reference["pixel_attention_mask"].to(torch.int32))
    assert torch.equal(ours.spatial_shapes, reference["spatial_shapes"])


def test_patch_layout_row_major_then_pixel_row_column_channel():
    image = np.zeros((32, 32, 3), dtype=np.uint8)
    image[16:32, 0:16] = (255, 0, 0)  # bottom-left patch red
    image[0, 1] = (0, 0, 255)  # top-left patch, pixel row 0, column 1, blue
    batch = preprocess([Image.fromarray(image)], 4)  # 32x32 fits 4 patches exactly: no resize
    values = batch.pixel_values[0].reshape(4, 16, 16, 3)
    assert batch.spatial_shapes.tolist() == [[2, 2]]
    assert values[2, :, :, 0].eq(1.0).all() and values[2, :, :, 1].eq(-1.0).all()
    assert values[0, 0, 1].tolist() == [-1.0, -1.0, 1.0]
    assert batch.pixel_attention_mask.tolist() == [[1, 1, 1, 1]]
