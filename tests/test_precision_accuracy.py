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
from app.ocr.precision import GUARD_RECORD, auto_precision, guard_failures
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
    assert auto_precision(cpu) in ("fp32", *MODES)


FEATURE_SETS = [frozenset(), frozenset({"avx512_bf16"}), frozenset({"amx_bf16", "amx_int8"}),
                frozenset({"avx512_vnni", "avx512_bf16"}), frozenset({"avx_vnni"}), frozenset({"avx512_vnni"})]


def test_auto_never_picks_a_mode_the_recorded_guard_says_failed():
    record = json.loads(GUARD_RECORD.read_text(encoding="utf-8"))
    failed = guard_failures()
    assert failed == {m for m, v in record["modes"].items() if not v["passed"]}
    for device in ("cpu", "cuda", "mps"):
        for features in FEATURE_SETS:
            assert auto_precision(torch.device(device), features) not in failed
    # the rule itself, whatever the record says: a failed mode falls through to the next one
    cpu = torch.device("cpu")
    assert auto_precision(cpu, frozenset({"avx_vnni"}), failed=frozenset()) == "int8"
    assert auto_precision(cpu, frozenset({"avx_vnni"}), failed=frozenset({"int8"})) == "fp32"
    assert auto_precision(cpu, frozenset({"avx512_bf16", "avx512_vnni"}), failed=frozenset({"bf16"})) == "int8"
    assert auto_precision(torch.device("cuda"), failed=frozenset({"fp16"})) == "fp32"
    assert auto_precision(cpu, frozenset({"avx_vnni"}), failed=frozenset({"int8", "fp32"})) == "fp32"


def test_the_guard_record_agrees_with_its_figures():
    """A mode is recorded as holding only if it held on every measured seed (at least five) and
    no failure of it was reported; INT8 failed on fresh seeds, so a VNNI-only CPU gets FP32."""
    record = json.loads(GUARD_RECORD.read_text(encoding="utf-8"))
    seeds = record["seeds"]
    assert len(seeds) >= 5 and not {"8117", "7331", "2001", "9101", "9202", "9303"} & set(seeds)
    for mode, verdict in record["modes"].items():
        measured = [r for r in seeds.values() if mode in r]
        held = all(r[mode]["cer"] - r["fp32"]["cer"] <= record["max_cer_rise"] + 1e-9
                   and r["fp32"]["exact_match"] - r[mode]["exact_match"] <= record["max_exact_drop"] + 1e-9
                   for r in measured)
        reported = [r for r in record["reported"] if r["mode"] == mode]
        assert verdict["passed"] == (held and all(r["passed"] for r in reported)), mode
    assert "int8" in guard_failures()
    assert auto_precision(torch.device("cpu"), frozenset({"avx_vnni"})) == "fp32"


def test_a_missing_guard_record_leaves_auto_exact(tmp_path):
    assert guard_failures(tmp_path / "none.json") == {"bf16", "fp16", "int8"}
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    assert guard_failures(tmp_path / "bad.json") == {"bf16", "fp16", "int8"}
    assert auto_precision(torch.device("cuda"), failed=guard_failures(tmp_path / "none.json")) == "fp32"
