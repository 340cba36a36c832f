import pytest


@pytest.fixture(scope="session")
def synth_case():
    """A synthetic page with its clean truth, text mask and stand-in translations."""
    from tools.render_metrics import make_case

    return make_case(4242, 0)


@pytest.fixture(scope="session")
def tiny_lama(tmp_path_factory):
    """A LaMa-shaped ONNX network with random weights (dynamic size)."""
    from app.render.testing import write_tiny_lama

    return write_tiny_lama(tmp_path_factory.mktemp("lama") / "tiny-lama.onnx", seed=3)
