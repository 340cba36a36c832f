"""Synthetic manga pages with known ground truth, for tests, demos and training the demo models.

    from tools.synth import generate_page, write_pages, write_crops, write_yolo, charset
    image, truth = generate_page(seed=0, index=3)        # "L" image 1024x1448, truth dict

See pages.py for the truth format and `python -m tools.synth --help` for the command line.
"""
from tools.synth.export import (
           crop_block,
           iter_crops,
           iter_page_layers,
           iter_pages,
           write_crops,
           write_pages,
           write_yolo,
           yolo_labels,
)
from tools.synth.pages import DEFAULT_SIZE, generate_page, generate_page_layers
from tools.synth.text import charset, random_text

__all__ = ["DEFAULT_SIZE", "charset", "crop_block", "generate_page", "generate_page_layers", "iter_crops",
           "iter_page_layers", "iter_pages",
           "random_text", "write_crops", "write_pages", "write_yolo", "yolo_labels"]
