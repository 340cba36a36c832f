"""The tower's features remembered between teachings (app.ocr.feature_cache): a second teaching on
the same corrections looks at none of them again and learns exactly what the first learned; a
damaged file is computed again, a folder that cannot be written is only slower, the folder is
kept within its limit, and another model or budget never gets these numbers."""
from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest
import torch

from app.ocr import adapt_crops, load_recognizer
from app.ocr.adapt import AdaptSettings, Sample, adapt
from app.ocr.feature_cache import FeatureCache, default_cache, default_folder
from tools.synth.fonts import find_faces
from tools.synth.styled import styled_crops

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "app" / "resources" / "demo" / "hayai-demo-ocr"
FAST = AdaptSettings(patches=128, epochs=3, patience=3, max_new_tokens=16, augment=0, join=0)  # no varied copies
# or joined crops: the crops counted here are the user's


@pytest.fixture(scope="module")
def demo():
    return load_recognizer(DEMO, device="cpu", precision="fp32")


def _samples(count=24, seed=5):
    crops = styled_crops(find_faces()[0], count, seed=seed, invert=True, max_len=6)
    out = [Sample(im, t, f"p{i // 4}", False, "vol") for i, (im, t) in enumerate(crops)]
    out[-1] = Sample(out[-1].image, out[-1].text, "c0", True, "vol")  # one confirmation
    return out


def _looked(monkeypatch) -> list[int]:
    """How many crops each call of the tower looked at (the real tower runs)."""
    seen: list[int] = []
    real = adapt_crops._features

    def features(model, images, patches, **kw):
        seen.append(len(images))
        return real(model, images, patches, **kw)

    monkeypatch.setattr(adapt_crops, "_features", features)
    return seen


def test_a_second_teaching_looks_at_no_crop_again_and_learns_the_same(demo, tmp_path, monkeypatch):
    samples = _samples()
    seen = _looked(monkeypatch)
    plain = adapt(demo, samples, FAST)  # no cache: what a run computes
    assert sum(seen) == len(samples) and plain.remembered == 0
    cache = FeatureCache(tmp_path / "features", limit=10**9)
    seen.clear()
    first = adapt(demo, samples, FAST, feature_cache=cache)
    assert sum(seen) == len(samples) and cache.stored == len(samples) and first.remembered == 0
    assert len(list((tmp_path / "features").rglob("*.safetensors"))) == len(samples)
    seen.clear()
    second = adapt(demo, samples, FAST, feature_cache=cache)
    assert seen == [] and second.remembered == len(samples)
    assert f"{len(samples)} blocks already looked at in an earlier teaching" in second.summary()
    # bit for bit what computing them gives: the same run, epoch by epoch
    assert (second.history, second.heldout_after) == (first.history, first.heldout_after) \
        == (plain.history, plain.heldout_after)
    # new corrections beside them: only those are looked at
    more = samples + _samples(8, seed=9)[:8]
    more = more[:len(samples)] + [Sample(s.image, s.text, f"q{i // 4}", False, "vol2")
                                  for i, s in enumerate(more[len(samples):])]
    seen.clear()
    third = adapt(demo, more, FAST, feature_cache=cache)
    assert sum(seen) == 8 and third.remembered == len(samples)


def test_another_budget_or_model_never_gets_these_numbers(demo, tmp_path, monkeypatch):
    samples = _samples(12)
    cache = FeatureCache(tmp_path / "features", limit=10**9)
    adapt(demo, samples, FAST, train=False, feature_cache=cache)
    seen = _looked(monkeypatch)
    other = adapt(demo, samples, AdaptSettings(patches=256, epochs=1, max_new_tokens=16, augment=0, join=0), train=False,
                  feature_cache=cache)
    assert sum(seen) == len(samples) and other.remembered == 0
    # a model with other weights (a copy of the demo whose weights file differs by a byte of metadata)
    from safetensors.torch import load_file, save_file

    copy = tmp_path / "other-model"
    copy.mkdir()
    for f in DEMO.iterdir():
        if f.is_file() and f.name != "model.safetensors":
            (copy / f.name).write_bytes(f.read_bytes())
    save_file(load_file(DEMO / "model.safetensors"), copy / "model.safetensors", metadata={"copy": "1"})
    rec = load_recognizer(copy, device="cpu", precision="fp32")
    seen.clear()
    assert adapt(rec, samples, FAST, train=False, feature_cache=cache).remembered == 0 and sum(seen) == len(samples)


def test_a_damaged_file_is_computed_again_and_an_unwritable_folder_only_costs_time(demo, tmp_path, monkeypatch,
                                                                                  caplog):
    samples = _samples(12)
    folder = tmp_path / "features"
    cache = FeatureCache(folder, limit=10**9)
    first = adapt(demo, samples, FAST, feature_cache=cache)
    victim = sorted(folder.rglob("*.safetensors"))[0]
    victim.write_bytes(victim.read_bytes()[:100])  # torn
    seen = _looked(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="app.ocr.feature_cache"):
        again = adapt(demo, samples, FAST, feature_cache=cache)
    assert sum(seen) == 1 and again.remembered == len(samples) - 1
    assert "remembered features unreadable" in caplog.text and str(victim) in caplog.text
    assert again.history == first.history
    assert FeatureCache(folder, limit=10**9).get(victim.stem) is not None  # written anew
    # a folder that cannot be written (a file stands where it should be): the run goes on
    blocked = tmp_path / "blocked"
    blocked.write_text("not a folder")
    seen.clear()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="app.ocr.feature_cache"):
        done = adapt(demo, samples, FAST, feature_cache=FeatureCache(blocked, limit=10**9))
    assert sum(seen) == len(samples) and done.history == first.history
    assert "cannot remember the features" in caplog.text


def test_the_folder_is_kept_within_its_limit_oldest_first(tmp_path):
    cache = FeatureCache(tmp_path / "f", limit=10**9)
    feats = torch.randn(64, 32)
    keys = [f"{i:02d}" + "0" * 62 for i in range(10)]
    for i, key in enumerate(keys):
        cache.put(key, feats, (8, 8))
        os.utime(cache._path(key), (time.time() - 1000 + i, time.time() - 1000 + i))
    size = cache._path(keys[0]).stat().st_size
    assert cache.trim() == 0  # under the limit: nothing removed
    assert cache.get(keys[0]) is not None  # used now: the newest
    small = FeatureCache(tmp_path / "f", limit=5 * size)
    removed = small.trim()
    left = {p.stem for p in (tmp_path / "f").rglob("*.safetensors")}
    assert removed == size * (10 - len(left)) and len(left) * size <= 0.8 * 5 * size
    assert keys[0] in left and keys[1] not in left and keys[9] in left
    # bfloat16 values are stored as such; values bfloat16 cannot hold stay float32
    exact = torch.randn(16, 8).bfloat16().float()
    cache.put("aa" + "1" * 62, exact, (4, 4), torch.bfloat16)
    cache.put("ab" + "1" * 62, torch.randn(16, 8), (4, 4), torch.bfloat16)
    from safetensors import safe_open

    with safe_open(str(cache._path("aa" + "1" * 62)), framework="pt") as f:
        assert f.get_tensor("feats").dtype == torch.bfloat16
    with safe_open(str(cache._path("ab" + "1" * 62)), framework="pt") as f:
        assert f.get_tensor("feats").dtype == torch.float32
    assert torch.equal(cache.get("aa" + "1" * 62)[0], exact)


def test_the_cache_lives_in_the_users_cache_folder_and_can_be_turned_off(monkeypatch, tmp_path):
    monkeypatch.delenv("HAYAI_FEATURE_CACHE", raising=False)
    monkeypatch.delenv("HAYAI_FEATURE_CACHE_MB", raising=False)
    assert str(default_folder()).startswith(os.environ["XDG_CACHE_HOME"])  # the test's own HOME
    assert default_cache() is not None and default_cache().limit == 2048 * 1024 * 1024
    monkeypatch.setenv("HAYAI_FEATURE_CACHE", str(tmp_path / "here"))
    assert default_folder() == tmp_path / "here"
    monkeypatch.setenv("HAYAI_FEATURE_CACHE_MB", "0")
    assert default_cache() is None


def test_looking_ahead_leaves_the_teaching_nothing_to_look_at(demo, tmp_path, monkeypatch):
    """What the window does after a save: the crops a teaching will look at (the corrections, the
    confirmations, the lines drawn to rehearse and the varied copies) are looked at ahead."""
    from app.ocr.adapt_crops import look_ahead
    from app.render.specimen import specimens

    samples = _samples(16)
    plain = ["あいう", "かきく", "さしす", "たちつ", "なにぬ"]
    settings = AdaptSettings(patches=128, epochs=2, patience=2, max_new_tokens=16)  # varied copies: auto
    cache = FeatureCache(tmp_path / "features", limit=10**9)
    looked = look_ahead(demo, samples, settings, specimens=specimens, plain_texts=plain, feature_cache=cache)
    assert looked == cache.stored > len(samples)  # the drawn crops and the copies too
    assert look_ahead(demo, samples, settings, specimens=specimens, plain_texts=plain, feature_cache=cache) == 0
    seen = _looked(monkeypatch)
    taught = adapt(demo, samples, settings, specimens=specimens, plain_texts=plain, feature_cache=cache)
    assert seen == [] and taught.remembered == len(samples) and taught.rehearsal > 0
    assert taught.history == adapt(demo, samples, settings, specimens=specimens, plain_texts=plain).history
    # remembering turned off: nothing to do
    assert look_ahead(demo, samples, settings, feature_cache=FeatureCache(tmp_path / "off", limit=0)) == 0
