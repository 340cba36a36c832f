"""The accuracy guard of the precision modes (app.ocr.precision), measured on a trained model.

The demo recognizer (app/resources/demo/hayai-demo-ocr, trained on synthetic crops) reads 300 fresh
synthetic crops (a seed never used to train or tune it) in fp32 and in every other mode. Against
fp32 on the same crops, a mode may raise the CER (model-card normalization) by at most 0.3
points and lower the exact-match rate by at most 1 point. `auto` may only pick modes that pass.
fp16 is the GPU's mode; here it runs under the CPU's float16 autocast, the same number format.

Each mode also reads a crop the same alone and in any batch (the published path lets batch
neighbours change a crop's text; this engine must not, in any precision).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from PIL import Image

from app.ocr import load_recognizer
from app.ocr.precision import auto_precision
from app.ocr.text import score

DEMO = Path(__file__).resolve().parents[1] / "app" / "resources" / "demo" / "hayai-demo-ocr"
GUARD_SEED = 8117  # not a training (1001-1010), validation (2001) or test (7331, 4242, 5150, 5151) seed
GUARD_COUNT = 300
PATCHES = 256
MAX_CER_RISE = 0.003  # 0.3 points
MAX_EXACT_DROP = 0.01  # 1 point
MODES = ("bf16", "int8", "fp16")


@pytest.fixture(scope="module")
def guard_crops(tmp_path_factory) -> tuple[list[Image.Image], list[str]]:
    from tools.synth import write_crops

    manifest = write_crops(tmp_path_factory.mktemp("guard-crops"), GUARD_COUNT, GUARD_SEED)
    rows = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [Image.open(manifest.parent / r["image"]).convert("RGB") for r in rows], [r["text"] for r in rows]


@pytest.fixture(scope="module")
def readings(guard_crops) -> dict:
    """Each mode's recognitions of the guard crops (read once, shared by the tests)."""
    images, _ = guard_crops
    out = {}
    for mode in ("fp32", *MODES):
        rec = load_recognizer(DEMO, device="cpu", precision=mode)
        assert rec.precision == mode
        out[mode] = (rec, rec.recognize(images, max_num_patches=PATCHES, max_new_tokens=40))
    return out


@pytest.mark.parametrize("mode", MODES)
def test_mode_keeps_the_accuracy_of_fp32(mode, readings, guard_crops):
    _, texts = guard_crops
    ref = score([r.text for r in readings["fp32"][1]], texts)
    got = score([r.text for r in readings[mode][1]], texts)
    assert ref.count == got.count == GUARD_COUNT
    assert got.cer <= ref.cer + MAX_CER_RISE, f"{mode}: CER {got.cer:.4f} vs fp32 {ref.cer:.4f}"
    assert got.exact_match >= ref.exact_match - MAX_EXACT_DROP, \
        f"{mode}: exact match {got.exact_match:.4f} vs fp32 {ref.exact_match:.4f}"
    assert ref.cer < 0.3  # the reference is a model that reads, not noise


@pytest.mark.parametrize("mode", ("fp32", "bf16", "int8"))  # fp16 is the GPU's: its CPU emulation is slow
def test_mode_reads_a_crop_the_same_alone_and_in_any_batch(mode, readings, guard_crops):
    images, _ = guard_crops
    rec, batched = readings[mode]
    sample = list(range(0, GUARD_COUNT, 25))  # 12 crops of all shapes
    alone = [rec.recognize([images[i]], PATCHES, 40)[0].tokens for i in sample]
    assert alone == [batched[i].tokens for i in sample]
    mixed = rec.recognize([images[i] for i in sample], PATCHES, 40, batch_size=5)
    assert [r.tokens for r in mixed] == alone


def test_auto_picks_a_guarded_mode_for_each_device():
    cpu = torch.device("cpu")
    assert auto_precision(torch.device("cuda")) == "fp16"
    assert auto_precision(torch.device("mps")) == "fp32"
    assert auto_precision(cpu, frozenset()) == "fp32"
    assert auto_precision(cpu, frozenset({"avx512_bf16"})) == "bf16"
    assert auto_precision(cpu, frozenset({"amx_bf16", "amx_int8"})) == "bf16"
    assert auto_precision(cpu, frozenset({"avx512_vnni", "avx512_bf16"})) == "bf16"
    assert auto_precision(cpu, frozenset({"avx_vnni"})) == "int8"
    assert auto_precision(cpu) in ("fp32", *MODES)
