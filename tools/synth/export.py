"""Write synthetic data to disk: pages + truth, OCR crops + JSONL manifest, YOLO datasets.

All writers are deterministic: page i of run `seed` is always the same image, whatever the
number of worker processes, so the same arguments give byte-identical files.
"""
from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from PIL import Image

from tools.synth.pages import DEFAULT_SIZE, generate_page, generate_page_layers, page_rng

YOLO_NAMES = ("bubble", "text")


def _png_bytes(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def _page_job(args: tuple) -> tuple[bytes, dict]:
    seed, index, size, noise, layout = args
    image, truth = generate_page(seed, index, size=size, noise=noise, layout=layout)
    return _png_bytes(image), truth


def iter_pages(seed: int, indices, size=DEFAULT_SIZE, noise: bool = True,
               workers: int = 1, layout: str | None = None) -> Iterator[tuple[int, Image.Image, dict]]:
    """(index, page image, truth) for each index, in order; `workers` > 1 draws in processes;
    `layout`: a kind of tools.synth.layouts, "mixed", or None for the classic pages."""
    indices = list(indices)
    if workers <= 1:
        for i in indices:
            image, truth = generate_page(seed, i, size=size, noise=noise, layout=layout)
            yield i, image, truth
        return
    with ProcessPoolExecutor(workers) as pool:
        jobs = [(seed, i, tuple(size), noise, layout) for i in indices]
        for i, (png, truth) in zip(indices, pool.map(_page_job, jobs, chunksize=4), strict=True):
            yield i, Image.open(io.BytesIO(png)), truth


def _write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _layers_job(args: tuple) -> tuple[bytes, bytes, bytes, dict]:
    seed, index, size, noise, layout = args
    page, clean, mask, truth = generate_page_layers(seed, index, size=size, noise=noise, layout=layout)
    return _png_bytes(page), _png_bytes(clean), _png_bytes(mask), truth


def iter_page_layers(seed: int, indices, size=DEFAULT_SIZE, noise: bool = True, workers: int = 1,
                     layout: str | None = None) -> Iterator[tuple[int, Image.Image, Image.Image, Image.Image, dict]]:
    """(index, page, clean page, text mask, truth) for each index (see `generate_page_layers`)."""
    indices = list(indices)
    if workers <= 1:
        for i in indices:
            yield (i, *generate_page_layers(seed, i, size=size, noise=noise, layout=layout))
        return
    with ProcessPoolExecutor(workers) as pool:
        jobs = [(seed, i, tuple(size), noise, layout) for i in indices]
        for i, (page, clean, mask, truth) in zip(indices, pool.map(_layers_job, jobs, chunksize=4), strict=True):
            yield i, Image.open(io.BytesIO(page)), Image.open(io.BytesIO(clean)), Image.open(io.BytesIO(mask)), truth


def write_pages(out: Path, pages: int, seed: int, size=DEFAULT_SIZE, noise: bool = True,
                workers: int = 1, start: int = 0, prefix: str = "page_",
                layers: Path | None = None, layout: str | None = None) -> list[Path]:
    """Write `out/{prefix}NNNN.png` and the matching `.json` truth for pages start..start+pages-1.

    With `layers`, also write into that folder `{prefix}NNNN.clean.png` (the page without its
    text) and `{prefix}NNNN.mask.png` (the text mask); the pages and truth files are the same
    bytes either way. Keep `layers` apart from `out` when `out` is opened as a volume (every
    image in a folder is a page)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if layers is not None:
        Path(layers).mkdir(parents=True, exist_ok=True)
    indices = range(start, start + pages)
    if layers is None:
        items = ((i, image, None, None, truth) for i, image, truth in iter_pages(seed, indices, size, noise, workers, layout))
    else:
        items = iter_page_layers(seed, indices, size, noise, workers, layout)
    written = []
    for i, image, clean, mask, truth in items:
        name = f"{prefix}{i:04d}"
        image.save(out / f"{name}.png", compress_level=6)
        _write_json(out / f"{name}.json", {"image": f"{name}.png", **truth})
        if layers is not None:
            clean.save(Path(layers) / f"{name}.clean.png", compress_level=6)
            mask.save(Path(layers) / f"{name}.mask.png", compress_level=6)
        written.append(out / f"{name}.png")
    return written


def crop_block(image: Image.Image, box, pad: float = 0.04, jitter: float = 0.0, rng=None) -> Image.Image:
    """Crop `box` (x0, y0, x1, y1) from `image`, padded by 2 px + `pad` x the short side per side.

    With `jitter` > 0 each side moves by up to `jitter` x the side length (random, from `rng`):
    crops then look like a detector's slightly-off boxes. Clipped to the image.
    """
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    p = 2 + pad * min(w, h)
    d = [0.0, 0.0, 0.0, 0.0]
    if jitter > 0 and rng is not None:
        d = list(rng.uniform(-jitter, jitter, size=4) * [w, h, w, h])
    c = (max(0, round(x0 - p + d[0])), max(0, round(y0 - p + d[1])),
         min(image.width, round(x1 + p + d[2])), min(image.height, round(y1 + p + d[3])))
    return image.crop(c)


def iter_crops(seed: int, count: int, size=DEFAULT_SIZE, pad: float = 0.04, jitter: float = 0.03,
               workers: int = 1) -> Iterator[tuple[Image.Image, dict]]:
    """`count` (crop, record) pairs from pages 0, 1, ... of run `seed`; record has text/kind/vertical."""
    made = 0
    start = 0
    batch = max(8, 4 * workers)
    while made < count:
        for i, image, truth in iter_pages(seed, range(start, start + batch), size, True, workers):
            rng = page_rng(seed, i, stream=1)
            for b in truth["blocks"]:
                if made >= count:
                    return
                crop = crop_block(image, b["box"], pad=pad, jitter=jitter, rng=rng)
                yield crop, {"text": b["text"], "kind": b["kind"], "vertical": b["vertical"],
                             "page": i, "block": b["id"]}
                made += 1
        start += batch


def write_crops(out: Path, count: int, seed: int, size=DEFAULT_SIZE, pad: float = 0.04,
                jitter: float = 0.03, workers: int = 1, progress: Callable | None = None) -> Path:
    """Write `out/crops/NNNNNN.png` and `out/manifest.jsonl` ({"image": "crops/...", "text": ...}).

    Returns the manifest path. The manifest is the format `hayai-desktop eval` reads.
    """
    out = Path(out)
    (out / "crops").mkdir(parents=True, exist_ok=True)
    manifest = out / "manifest.jsonl"
    tmp = manifest.with_suffix(".jsonl.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for n, (crop, rec) in enumerate(iter_crops(seed, count, size, pad, jitter, workers), start=1):
            rel = f"crops/{n:06d}.png"
            crop.save(out / rel, compress_level=6)
            f.write(json.dumps({"image": rel, **rec}, ensure_ascii=False) + "\n")
            if progress:
                progress(n, count)
    os.replace(tmp, manifest)
    return manifest


def yolo_labels(truth: dict) -> str:
    """YOLO label lines for a truth dict: 'class cx cy w h' normalized, class 0 bubble / 1 text."""
    W, H = truth["width"], truth["height"]
    lines = []
    for b in truth["blocks"]:
        x0, y0, x1, y1 = b["box"]
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, W), min(y1, H)
        cls = YOLO_NAMES.index(b["kind"])
        lines.append(f"{cls} {(x0 + x1) / 2 / W:.6f} {(y0 + y1) / 2 / H:.6f} {(x1 - x0) / W:.6f} {(y1 - y0) / H:.6f}")
    return "\n".join(lines) + ("\n" if lines else "")


def write_yolo(out: Path, pages: int, seed: int, size=DEFAULT_SIZE, val_fraction: float = 0.1,
               max_side: int | None = None, workers: int = 1) -> Path:
    """Write a YOLO dataset: out/images/{train,val}/*.png, out/labels/{train,val}/*.txt, out/data.yaml.

    The last `val_fraction` of the pages go to val. `max_side` downsizes the saved images (labels
    are normalized, so they stay valid). Returns the data.yaml path.
    """
    out = Path(out).resolve()
    n_val = max(1, round(pages * val_fraction)) if pages > 1 else 0
    for split in ("train", "val"):
        (out / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "labels" / split).mkdir(parents=True, exist_ok=True)
    for i, image, truth in iter_pages(seed, range(pages), size, True, workers):
        split = "val" if i >= pages - n_val else "train"
        if max_side and max(image.size) > max_side:
            k = max_side / max(image.size)
            image = image.resize((round(image.width * k), round(image.height * k)), Image.Resampling.LANCZOS)
        image.save(out / "images" / split / f"{i:05d}.png", compress_level=6)
        (out / "labels" / split / f"{i:05d}.txt").write_text(yolo_labels(truth), encoding="utf-8")
    data = out / "data.yaml"
    names = "\n".join(f"  {k}: {n}" for k, n in enumerate(YOLO_NAMES))
    data.write_text(f"path: {out}\ntrain: images/train\nval: images/val\nnames:\n{names}\n", encoding="utf-8")
    return data
