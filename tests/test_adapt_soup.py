"""Several trainings averaged into one adapter (app.ocr.adapt_soup.average and the `soup` setting
of app.ocr.adapt): the average changes every weight by the mean of the trainings' changes (the
LoRA parts stacked along their rank, exactly), a new character only some trainings added keeps
theirs, and a run asked for K trainings reads the held-out crops with their average, keeps it
only when plain print and the confirmations read no worse, and reports it."""
from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from app.errors import UserError
from app.ocr import load_recognizer
from app.ocr.adapt import SOUP_SEED, adapt
from app.ocr.adapt_soup import average
from app.ocr.adapter import Adapter
from tests.test_adapt import DEMO, FAST, _samples


@pytest.fixture(scope="module")
def demo():
    return load_recognizer(DEMO, device="cpu", precision="fp32")


def _changes(adapter: Adapter) -> dict[str, torch.Tensor]:
    """Every weight of the decoder with `adapter` on, the LoRA products merged in, and the new rows."""
    from peft.tuners.lora import LoraLayer

    rec = load_recognizer(DEMO, device="cpu", precision="fp32", adapter=adapter)
    out = {}
    for name, m in rec.model.decoder.named_modules():
        if isinstance(m, LoraLayer):
            out[name] = (m.base_layer.weight.detach() + m.get_delta_weight("default")).clone()
    for name, p in rec.model.decoder.named_parameters():
        if "lora_" not in name and not name.endswith(".weight") or name.endswith("extra"):
            out[name] = p.detach().clone()
    return out


@pytest.fixture(scope="module")
def two(demo):
    samples = _samples(count=24)
    a = adapt(demo, samples, replace(FAST, epochs=2, patience=2, join=0, refit="off"))
    b = adapt(demo, samples, replace(FAST, epochs=2, patience=2, join=0, refit="off", seed=SOUP_SEED))
    assert a.adapter is not None and b.adapter is not None, (a.summary(), b.summary())
    return a.adapter, b.adapter


def test_the_average_changes_every_weight_by_the_mean_of_the_trainings_changes(two):
    a, b = two
    mean = average([a, b])
    assert mean.settings["rank"] == 2 * a.settings["rank"] and mean.settings["soup"] == 2
    ca, cb, cm = _changes(a), _changes(b), _changes(mean)
    merged = [k for k in cm if not k.endswith("extra")]
    assert merged and set(cm) == set(ca)
    for k in merged:
        assert not torch.equal(ca[k], cb[k]) or "layers" not in k  # two trainings, two changes
        torch.testing.assert_close(cm[k], (ca[k] + cb[k]) / 2, rtol=1e-5, atol=1e-6)
    assert average([a]) is a


def test_a_new_character_only_one_training_added_keeps_its_rows(two):
    a, b = two
    d = a.embed_rows.shape[1] if a.embed_rows is not None else 4
    a2 = replace(a, new_chars="龘", embed_rows=torch.ones(1, d), head_rows=torch.ones(1, d))
    b2 = replace(b, new_chars="龘鱻", embed_rows=torch.full((2, d), 3.0), head_rows=torch.full((2, d), 5.0))
    mean = average([a2, b2])
    assert mean.new_chars == "龘鱻"
    assert mean.embed_rows[0].eq(2.0).all() and mean.embed_rows[1].eq(3.0).all()
    assert mean.head_rows[0].eq(3.0).all() and mean.head_rows[1].eq(5.0).all()
    with pytest.raises(ValueError):
        average([a, replace(b, base_sha256="another")])


def test_a_run_of_two_trainings_keeps_their_average_and_says_so(demo, tmp_path):
    samples = _samples(count=24)
    settings = replace(FAST, epochs=3, patience=2, join=0, refit="off")
    one = adapt(demo, samples, settings)
    soup = adapt(demo, samples, replace(settings, soup=2))
    assert one.kept and soup.kept, (one.summary(), soup.summary())
    assert soup.soup_tried == 2 and soup.soup_verdict
    if soup.soup:  # kept: the average is the adapter, and it is saved and read like any
        assert soup.adapter.settings["rank"] == 2 * settings.rank and "the average of 2 trainings" in soup.summary()
        assert all(v.shape[0] == 2 * settings.rank for k, v in soup.adapter.lora.items() if "lora_A" in k)
        assert soup.heldout_after == one.heldout_after  # the held-out figures are the first training's
        path = soup.adapter.save(tmp_path / "soup.safetensors")
        rec = load_recognizer(DEMO, device="cpu", precision="fp32", adapter=Adapter.load(path))
        assert rec.recognize([samples[0].image], max_num_patches=FAST.patches, max_new_tokens=16)[0].text is not None
    else:
        assert "2 trainings averaged, not kept" in soup.summary(), soup.summary()
    again = adapt(demo, samples, replace(settings, soup=2))
    assert again.soup == soup.soup and again.plain_after == soup.plain_after  # the same for a seed


def test_a_wrong_number_of_trainings_is_refused(demo):
    for bad in (0, 9, True, "3"):
        with pytest.raises(UserError, match="soup="):
            adapt(demo, _samples(count=8), replace(FAST, soup=bad))
