"""LaMa through onnxruntime: a LaMa-shaped ONNX file with random weights, written by the test in
the published interface; padding, tiling, fixed-size exports, the model store, bad files."""
from __future__ import annotations

import numpy as np
import pytest

from app.errors import ModelError
from app.models.manifest import MODELS, ModelEntry, ModelFile
from app.models.store import file_sha256
from app.render.inpaint import clean_block, load_inpainter
from app.render.lama import LAMA_MODEL, LamaInpainter
from app.render.masks import BlockMask


def _window(h=90, w=130, seed=0):
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    mask = np.zeros((h, w), bool)
    mask[20:50, 30:70] = True
    mask[60:80, 100:125] = True
    return image, mask


def test_fills_only_the_mask_at_any_size(tiny_lama):
    lama = LamaInpainter(tiny_lama, device="cpu")
    assert lama.device == "CPU" and lama.fixed == (None, None)
    image, mask = _window(90, 130)  # not multiples of 8: padded inside
    out = lama.inpaint(image, mask)
    assert out.shape == image.shape and out.dtype == np.uint8
    assert np.array_equal(out[~mask], image[~mask])
    assert (out[mask] != image[mask]).any(axis=1).mean() > 0.9, "the network's output is written"


def test_tiles_give_the_whole_mask(tiny_lama):
    image, mask = _window(300, 260, seed=1)
    mask[:] = False
    mask[10:290:7, 5:255] = True  # rows of mask across every tile
    tiled = LamaInpainter(tiny_lama, device="cpu", tile=96, overlap=32).inpaint(image, mask)
    assert np.array_equal(tiled[~mask], image[~mask])
    assert (tiled[mask] != image[mask]).any(axis=1).mean() > 0.9, "every tile ran"
    whole = LamaInpainter(tiny_lama, device="cpu", tile=1024).inpaint(image, mask)
    # different context per tile gives different values, but the same pixels are written
    assert np.array_equal(whole[~mask], tiled[~mask])


def test_fixed_size_exports_are_resized(tmp_path):
    from app.render.testing import write_tiny_lama

    path = write_tiny_lama(tmp_path / "fixed.onnx", fixed=64)
    lama = LamaInpainter(path, device="cpu")
    assert lama.fixed == (64, 64)
    image, mask = _window(90, 130)
    out = lama.inpaint(image, mask)
    assert out.shape == image.shape and np.array_equal(out[~mask], image[~mask])


def test_block_cleaning_with_lama_blends_a_margin_inside_the_region(tiny_lama):
    image = np.random.default_rng(2).integers(0, 256, (120, 160, 3), dtype=np.uint8)
    mask = np.zeros((60, 80), bool)
    mask[20:40, 20:60] = True
    region = np.zeros((60, 80), bool)
    region[20:50, 10:70] = True  # the mask's top row is the region's edge: no margin above it
    bm = BlockMask(40, 30, mask, region)
    patch = clean_block(image, bm, LamaInpainter(tiny_lama, device="cpu"), blend=1)
    assert patch.method == "lama"
    assert patch.write[mask].all() and patch.write.sum() > mask.sum()
    assert not (patch.write & ~region).any()
    out = image.copy()
    patch.apply(out)
    changed = (out != image).any(axis=2)
    assert not changed[:30].any() and not changed[90:].any() and not changed[:, :40].any()


def test_bad_files_give_clear_errors(tmp_path, tiny_lama):
    with pytest.raises(ModelError, match="no such LaMa ONNX file"):
        LamaInpainter(tmp_path / "missing.onnx")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not an onnx file")
    with pytest.raises(ModelError, match="not a usable ONNX model"):
        LamaInpainter(junk)
    import onnx
    from onnx import TensorProto, helper

    one = helper.make_model(helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])], "one",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 8, 8])]), opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(one, tmp_path / "one-input.onnx")
    with pytest.raises(ModelError, match="not a LaMa inpainting model"):
        LamaInpainter(tmp_path / "one-input.onnx")


def test_cuda_request_without_cuda_support_is_a_clear_error(tiny_lama):
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this onnxruntime has CUDA")
    from app.errors import UserError

    with pytest.raises(UserError, match="onnxruntime-gpu"):
        LamaInpainter(tiny_lama, device="cuda")


def test_model_store_resolves_lama_and_checks_its_hash(tmp_path, monkeypatch, tiny_lama):
    monkeypatch.setenv("HAYAI_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf"))
    real = MODELS[LAMA_MODEL]
    assert real.kind == "inpainting" and real.pinned and real.single_file
    # the published file's name, our random weights: the pinned sha256 rejects them
    folder = tmp_path / "models" / LAMA_MODEL
    folder.mkdir(parents=True)
    (folder / real.files[0].name).write_bytes(tiny_lama.read_bytes())
    with pytest.raises(ModelError, match="corrupt"):
        load_inpainter("lama")
    # an entry pinned to these bytes resolves and loads through the same path
    entry = ModelEntry(name="lama-test", repo_id="test/lama", revision="0" * 40,
                       files=(ModelFile("lama-manga-dynamic.onnx", file_sha256(tiny_lama, use_cache=False)),),
                       kind="inpainting", description="test")
    monkeypatch.setitem(MODELS, entry.name, entry)
    (tmp_path / "models" / "lama-test").mkdir()
    (tmp_path / "models" / "lama-test" / "lama-manga-dynamic.onnx").write_bytes(tiny_lama.read_bytes())
    engine = load_inpainter("lama", device="cpu", model="lama-test")
    assert engine.name == "lama" and engine.path.name == "lama-manga-dynamic.onnx"
