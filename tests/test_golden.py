"""Golden outputs of the published inference path (../shared/golden), reproduced exactly for
real-size random checkpoints of every variant, each crop alone and all crops in one batch."""
import importlib.util
import json

import pytest

from tests.conftest import shared_dir

GOLDEN = shared_dir() / "golden"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (GOLDEN / "expected.json").is_file(), reason="../shared/golden is not laid out here"),
]


def _make_checkpoint_module():
    spec = importlib.util.spec_from_file_location("golden_make_checkpoint", GOLDEN / "make_checkpoint.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def golden():
    expected = json.loads((GOLDEN / "expected.json").read_text())
    crops = _make_checkpoint_module().golden_crops(seed=expected["seed"])
    return expected, crops


@pytest.mark.parametrize("variant", ["nova", "v2", "alpha"])
def test_golden_tokens(variant, golden, tmp_path):
    from app.ocr import load_recognizer

    expected, crops = golden
    folder = _make_checkpoint_module().write_checkpoint(tmp_path / variant, variant=variant, seed=expected["seed"])
    rec = load_recognizer(folder, device="cpu", precision="fp32")
    assert rec.variant == variant
    n = expected["max_new_tokens"]
    for budget, want in expected["expected"][variant].items():
        batched = rec.recognize(crops, max_num_patches=int(budget), max_new_tokens=n, batch_size=len(crops))
        assert [r.tokens for r in batched] == want, f"{variant} @ {budget} patches, batched"
        alone = [rec.recognize([c], max_num_patches=int(budget), max_new_tokens=n)[0].tokens for c in crops]
        assert alone == want, f"{variant} @ {budget} patches, one crop at a time"

