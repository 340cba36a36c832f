"""One batch-size policy for the GUI and the CLI: the recognizer's own choice for its device
(`Recognizer.default_batch_size`), unless the user asks for another size (`--batch-size`)."""
from __future__ import annotations

from argparse import Namespace

from app.commands.common import load_pipeline_for
from app.core.document.types import Block
from app.core.reading.pipeline import Pipeline, PipelineSettings
from app.ocr.recognizer import load_recognizer


def _decoded_batches(recognizer) -> list[int]:
    """Record the size of every batch the recognizer decodes (the real decode still runs)."""
    sizes: list[int] = []
    real = recognizer._decode

    def decode(images, *args):
        sizes.append(len(images))
        return real(images, *args)

    recognizer._decode = decode
    return sizes


def test_gui_and_cli_pipelines_batch_by_the_recognizers_policy(tiny_models, tiny_yolo_path, make_page):
    args = Namespace(detector=str(tiny_yolo_path), device="cpu", model=str(tiny_models["nova"]), patches=64,
                     max_new_tokens=2, order="rtl", batch_size=None, imgsz=None, conf=0.25)
    cli = load_pipeline_for(args)
    gui_settings = PipelineSettings(patches=64, max_new_tokens=2)  # what the GUI worker builds
    assert cli.settings.batch_size == gui_settings.batch_size

    recognizer = load_recognizer(str(tiny_models["nova"]), device="cpu")
    policy = recognizer.default_batch_size()
    sizes = _decoded_batches(recognizer)
    page = make_page(20 * (2 * policy + 3) + 40, 300, seed=3)  # room for every block at any policy
    blocks = [Block(id=f"b{i}", order=i + 1, kind="bubble", box=(10.0 + 18 * i, 20.0, 26.0 + 18 * i, 60.0))
              for i in range(2 * policy + 3)]
    Pipeline(None, recognizer, gui_settings).read_blocks(page, blocks)
    assert max(sizes) == policy and sum(sizes) == len(blocks)

    sizes.clear()
    Pipeline(None, recognizer, PipelineSettings(patches=64, max_new_tokens=2, batch_size=3)).read_blocks(page, blocks)
    assert max(sizes) == 3  # --batch-size wins
