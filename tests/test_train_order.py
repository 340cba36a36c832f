"""tools/train_order.py and tools/order_model.py: the learned pairwise order trains on generated
pages, writes a model that loads, is antisymmetric, and orders a page's blocks."""
from __future__ import annotations

import json

import numpy as np

from app.detect import Detection
from app.detect.blocks import gray_page, read_page
from tools.order_model import FEATURES, before, learned_order, load_model
from tools.synth import generate_page
from tools.train_order import main


def test_a_model_trained_on_generated_pages_orders_a_page(tmp_path, capsys):
    out = tmp_path / "order.json"
    assert main(["--pages", "3", "--seeds", "7", "--steps", "200", "--out", str(out)]) == 0
    assert "pairs right on the training pages" in capsys.readouterr().out
    raw = json.loads(out.read_text(encoding="utf-8"))
    assert raw["features"] == list(FEATURES) and raw["trained_on"]["pages"] >= 3
    model = load_model(str(out))
    x = np.random.default_rng(0).normal(size=(20, len(FEATURES)))
    assert np.allclose(before(x, model) + before(-x, model), 1.0)  # (a, b) and (b, a) agree
    biased = {**model, "b1": model["b1"] + np.random.default_rng(1).normal(size=model["b1"].shape)}
    assert np.allclose(before(x, biased) + before(-x, biased), 1.0)  # whatever the weights
    image, truth = generate_page(8, 0)
    boxes = [tuple(float(v) for v in b["text_box"]) for b in truth["blocks"]]
    reading = read_page([Detection(b, "text", 0.9) for b in boxes], image.size, "rtl", page=gray_page(image))
    got = [r.box for r in reading.regions]
    n = len(got)
    order = learned_order(got, image.size, "rtl", [0] * n, list(range(n)), list(range(n)), model)
    assert sorted(order) == list(range(n))
    # a model that leaves features out names them, and reads the rest only
    assert main(["--pages", "2", "--seeds", "7", "--steps", "20", "--without", "rules_first,rules_gap",
                 "--out", str(tmp_path / "less.json")]) == 0
    less = load_model(str(tmp_path / "less.json"))
    assert len(less["columns"]) == len(FEATURES) - 2 and before(x, less).shape == (20,)
