"""Golden outputs of the published inference path (tests/golden): real-size random checkpoints
of every variant, read by the app's engine in float32, give exactly the published tokens, each
crop alone and all crops in one batch. The checkpoints are written once into the test cache
(tests/golden/writer.py) and checked by their sha256 before use; where ../shared/golden is laid
out beside the checkout, its lists are checked to be the same data."""
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import shared_dir
from tests.golden import writer

HERE = Path(__file__).parent / "golden"
pytestmark = pytest.mark.slow


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


@pytest.fixture(scope="module")
def golden():
    expected = json.loads((HERE / "expected.json").read_text())
    return expected, [Image.open(HERE / "crops" / name).convert("RGB") for name in expected["crops"]]


@pytest.mark.parametrize("variant", ["nova", "v2", "alpha"])
def test_golden_tokens(variant, golden):
    from app.ocr import load_recognizer

    expected, crops = golden
    folder = writer.cached_checkpoint(variant, seed=expected["seed"])
    want_sha = json.loads((HERE / "checkpoints.json").read_text())["model.safetensors"][variant]
    assert _sha256(folder / "model.safetensors") == want_sha, f"{folder}: not the weights the lists were made for"
    rec = load_recognizer(folder, device="cpu", precision="fp32")
    assert rec.variant == variant
    n = expected["max_new_tokens"]
    for budget, want in expected["expected"][variant].items():
        batched = rec.recognize(crops, max_num_patches=int(budget), max_new_tokens=n, batch_size=len(crops))
        assert [r.tokens for r in batched] == want, f"{variant} @ {budget} patches, batched"
        alone = [rec.recognize([c], max_num_patches=int(budget), max_new_tokens=n)[0].tokens for c in crops]
        assert alone == want, f"{variant} @ {budget} patches, one crop at a time"


def test_the_crops_are_the_stored_ones(golden):
    """The PNGs kept beside the lists are the crops the writer draws from the seed (how they were
    made; a numpy that draws other numbers is seen here, not as a token mismatch)."""
    expected, stored = golden
    drawn = writer.golden_crops(seed=expected["seed"])
    assert len(drawn) == len(stored) == 4
    for name, a, b in zip(expected["crops"], stored, drawn):
        assert a.size == b.size and np.array_equal(np.asarray(a), np.asarray(b)), name


@pytest.mark.skipif(not (shared_dir() / "golden" / "expected.json").is_file(),
                    reason="../shared/golden is not laid out beside the checkout (the second check)")
def test_the_lists_are_the_shared_golden_lists():
    ours = json.loads((HERE / "expected.json").read_text())
    theirs = json.loads((shared_dir() / "golden" / "expected.json").read_text())
    assert ours == theirs
