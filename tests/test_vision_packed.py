"""The vision tower on packed crops (app.ocr.vision) against transformers' padded tower: the same
values in float32, no padding rows computed, and a crop's features independent of its batch."""
import numpy as np
import pytest
import torch
from PIL import Image

from app.ocr.preprocess import preprocess
from app.ocr.testing import random_model, tiny_config
from app.ocr.vision import packed_features

# sizes whose patch grids leave different amounts of padding at the budget (one leaves none)
SIZES = [(37, 211), (300, 80), (120, 900), (64, 64), (17, 33), (500, 510)]
BUDGET = 96


@pytest.fixture(scope="module")
def batch():
    rng = np.random.default_rng(5)
    images = [Image.fromarray(rng.integers(0, 256, (h, w, 3), dtype=np.uint8)) for h, w in SIZES]
    return preprocess(images, BUDGET)


def _padded(tower, batch):
    return tower(pixel_values=batch.pixel_values, pixel_attention_mask=batch.pixel_attention_mask,
                 spatial_shapes=batch.spatial_shapes).last_hidden_state


@pytest.mark.parametrize("variant", ["nova", "v2"])
@torch.no_grad()
def test_packed_tower_equals_the_padded_tower_value_for_value(variant, batch):
    # a few more heads and layers than the tests' tiny models: attention sums over many keys
    model = random_model(tiny_config(variant, d_vision=64, vision_heads=4, vision_layers=3,
                                     vision_intermediate=128), seed=1)
    lengths = batch.pixel_attention_mask.sum(1).tolist()
    assert len({n for n in lengths}) > 2 and min(lengths) < BUDGET == max(lengths)  # padding of several sizes
    ref = _padded(model.vision_encoder, batch)
    got = packed_features(model.vision_encoder, batch, padding_rows=variant != "nova")
    for b, n in enumerate(lengths):
        rows = BUDGET if variant != "nova" else n  # v2 puts the padding tokens into the prefix too
        assert torch.equal(got[b, :rows], ref[b, :rows]), f"crop {b} ({n} patches)"
        if variant == "nova":
            assert not got[b, n:].any()


@torch.no_grad()
def test_packed_tower_runs_only_the_real_patches(batch):
    model = random_model(tiny_config("nova"), seed=1)
    seen = []
    model.vision_encoder.encoder.layers[0].mlp.fc1.register_forward_pre_hook(
        lambda _m, args: seen.append(args[0].shape[0]))
    packed_features(model.vision_encoder, batch, padding_rows=False)
    assert seen == [int(batch.pixel_attention_mask.sum())]
    seen.clear()
    packed_features(model.vision_encoder, batch, padding_rows=True)  # one padding query per padded crop
    assert seen == [int(batch.pixel_attention_mask.sum()) + int((batch.pixel_attention_mask == 0).any(1).sum())]


@pytest.mark.parametrize("variant", ["nova", "v2"])
@torch.no_grad()
def test_a_crops_features_do_not_depend_on_its_batch(variant, batch):
    model = random_model(tiny_config(variant, d_vision=64, vision_heads=4, vision_intermediate=128), seed=2)
    pad = variant != "nova"
    together = packed_features(model.vision_encoder, batch, padding_rows=pad)
    for b in range(len(SIZES)):
        alone = packed_features(model.vision_encoder, batch.rows(b, b + 1), padding_rows=pad)
        assert torch.equal(alone[0], together[b]), f"crop {b}"
