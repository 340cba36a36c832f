"""What adapting learns from, before any training (no Qt, no torch): a correction or confirmation
as a crop and its text (`Sample`), the split of the corrections into training and held-out
parts by whole pages, varied copies of a correction as another reading might have taken it,
two corrections joined in one box (its text theirs, one after the other), and the layout of the
crops drawn for rehearsal (a box's direction and number of columns, estimated from its shape).
app.ocr.adapt trains on them."""
from __future__ import annotations

import math
import random
from dataclasses import dataclass

from PIL import Image

from app.errors import UserError
from app.ocr.text import normalize


@dataclass(frozen=True)
class Sample:
    """A crop as the reading took it and its text. group: the page it is on (the held-out split
    keeps a page whole); confirmation: the text was left as read on a page the user checked."""

    image: Image.Image
    text: str
    group: str
    confirmation: bool = False
    volume: str = ""


def columns(image: Image.Image, chars: int) -> tuple[bool, int]:
    """(vertical, columns) of a crop holding `chars` characters, from its shape: taller than wide
    is a vertical text; printed lettering sets a character about 1 em along a column and the
    columns about 1.25 em apart, so k characters a column in c columns make a box whose length is
    to its breadth as k to 1.25 c, with c k = chars."""
    w, h = image.size
    vertical = h >= w
    ratio = (h / max(1, w)) if vertical else (w / max(1, h))
    return vertical, max(1, min(chars, round(math.sqrt(chars / (1.25 * max(ratio, 1e-3))))))


def shapes(examples: list[Sample], texts: list[str], rng: random.Random) -> tuple[list[bool], list[int]]:
    """For each text, the direction and characters a column of one of the 3 examples nearest it in
    length (picked with `rng`): drawn crops laid out as the series' boxes are."""
    lengths = [max(1, len(normalize(x.text))) for x in examples]
    known = [(n, *columns(x.image, n)) for n, x in zip(lengths, examples)]
    vertical, per_line = [], []
    for text in texts:
        n = max(1, len(normalize(text)))
        near = sorted(known, key=lambda k: abs(k[0] - n))[:3]
        _, upright, cols = near[rng.randrange(len(near))]
        vertical.append(upright)
        per_line.append(math.ceil(n / cols))
    return vertical, per_line


def split_by_page(samples: list[Sample], holdout: float, seed: int) -> tuple[list[int], list[int]]:
    """(training, held-out) indices of the corrections: whole pages, in a seeded order, until the
    held-out part holds at least `holdout` of them; at least one page stays for training."""
    groups = sorted({s.group for s in samples})
    if len(groups) < 2:
        raise UserError(f"adapting needs corrections on at least two pages (there are {len(samples)} on "
                        f"{len(groups)} page{'s' if len(groups) != 1 else ''}): some pages are held out to "
                        "check that it helps. Correct blocks on more pages first.")
    random.Random(seed).shuffle(groups)
    want = math.ceil(max(0.2, holdout) * len(samples))
    held: set[str] = set()
    count = 0
    for g in groups[:-1]:
        if count >= want:
            break
        held.add(g)
        count += sum(1 for s in samples if s.group == g)
    train = [i for i, s in enumerate(samples) if s.group not in held]
    test = [i for i, s in enumerate(samples) if s.group in held]
    return train, test


def _paper(image: Image.Image) -> tuple[int, ...]:
    """The paper's colour of an RGB crop: per channel, the third darkest of its four corners (a
    corner with ink or art on it is outvoted)."""
    w, h = image.size
    corners = [image.getpixel(xy) for xy in ((0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1))]
    return tuple(sorted(c[k] for c in corners)[2] for k in range(3))


def varied(image: Image.Image, rng: random.Random) -> Image.Image:
    """The crop as another reading might have taken it: the box's margins moved by a few per
    cent of its sides (a detector's boxes vary), a little blur or sharpening, contrast and
    brightness a little off."""
    from PIL import ImageEnhance, ImageFilter, ImageOps

    im = image.convert("RGB")
    w, h = im.size
    def edge(side):
        return round(rng.uniform(-0.08, 0.08) * side)
    left, top, right, bottom = edge(w), edge(h), edge(w), edge(h)
    pad = max(0, -left, -top, -right, -bottom)
    if pad:
        im = ImageOps.expand(im, border=pad, fill=_paper(im))
    box = (pad + left, pad + top, pad + w - right, pad + h - bottom)
    if box[2] - box[0] >= 4 and box[3] - box[1] >= 4:
        im = im.crop(box)
    if rng.random() < 0.3:
        im = im.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 0.9)))
    im = ImageEnhance.Contrast(im).enhance(rng.uniform(0.7, 1.2))
    return ImageEnhance.Brightness(im).enhance(rng.uniform(0.9, 1.1))


def page_key(group: str) -> str:
    """A correction's page as an adapter records it: the volume's file or folder name and the page
    (a group is "volume path\npage"), so that a series moved to another folder is still known."""
    volume, sep, page = group.rpartition("\n")
    return f"{volume.replace(chr(92), '/').rstrip('/').rsplit('/', 1)[-1]}\n{page}" if sep else group


def _ink_span(image: Image.Image, vertical: bool) -> tuple[int, int]:
    """The first and last row (vertical) or column with ink on them, from the paper's colour at the
    crop's border; the whole length when none is found."""
    import numpy as np

    g = np.asarray(image.convert("L"), dtype=np.float32)
    paper = float(np.median(np.concatenate([g[0], g[-1], g[:, 0], g[:, -1]])))
    prof = (np.abs(g - paper) > 60).sum(axis=1 if vertical else 0)
    on = np.flatnonzero(prof)
    return (int(on[0]), int(on[-1]) + 1) if len(on) else (0, len(prof))


def joined(first: Image.Image, second: Image.Image, vertical: bool, one_line: bool,
           lines: tuple[int, int] = (1, 1)) -> Image.Image:
    """Two crops of the same direction as one box, `first` read first. one_line: the second goes on
    in the first's column (vertical) or line, the margin between them trimmed to a small gap;
    otherwise it is the next column (to the left: vertical text reads right to left, both from the
    top) or line (below). `lines`: the columns or lines each holds; the second is scaled so that
    its breadth per column or line matches the first's. The paper between them is the first's."""
    a, b = first.convert("RGB"), second.convert("RGB")
    if vertical:
        scale = (a.width / lines[0]) / max(1, b.width / lines[1])
    else:
        scale = (a.height / lines[0]) / max(1, b.height / lines[1])
    b = b.resize((max(1, round(b.width * scale)), max(1, round(b.height * scale))))
    fill = _paper(a)
    if one_line:
        a1 = _ink_span(a, vertical)[1]
        b0 = _ink_span(b, vertical)[0]
        gap = max(1, round(0.15 * (a.width if vertical else a.height)))
        if vertical:
            a, b = a.crop((0, 0, a.width, min(a.height, a1 + gap))), b.crop((0, b0, b.width, b.height))
            out = Image.new("RGB", (max(a.width, b.width), a.height + b.height), fill)
            out.paste(a, ((out.width - a.width) // 2, 0))
            out.paste(b, ((out.width - b.width) // 2, a.height))
        else:
            a, b = a.crop((0, 0, min(a.width, a1 + gap), a.height)), b.crop((b0, 0, b.width, b.height))
            out = Image.new("RGB", (a.width + b.width, max(a.height, b.height)), fill)
            out.paste(a, (0, (out.height - a.height) // 2))
            out.paste(b, (a.width, (out.height - b.height) // 2))
        return out
    if vertical:  # the second column to the left, both from the top
        out = Image.new("RGB", (a.width + b.width, max(a.height, b.height)), fill)
        out.paste(b, (0, 0))
        out.paste(a, (b.width, 0))
    else:
        out = Image.new("RGB", (max(a.width, b.width), a.height + b.height), fill)
        out.paste(a, (0, 0))
        out.paste(b, (0, a.height))
    return out


def joins(examples: list[Sample], count: int, rng: random.Random) -> list[tuple[Image.Image, str]]:
    """`count` crops made of two of `examples` of the same direction each (app.ocr.adapt's `join`):
    in one column or line when both are one and their characters together are no more than the
    longest such example's, otherwise as two columns or lines."""
    info = []
    for x in examples:
        n = len(normalize(x.text))
        if n:
            vertical, cols = columns(x.image, n)
            info.append((x, n, vertical, cols))
    longest = {v: max([n for _, n, vv, c in info if vv == v and c == 1] or [0]) for v in (True, False)}
    out: list[tuple[Image.Image, str]] = []
    tries = 0
    while len(out) < count and len(info) >= 2 and tries < 20 * count:
        tries += 1
        (a, na, va, ca), (b, nb, vb, cb) = rng.sample(info, 2)
        if va != vb:
            continue
        one = ca == 1 and cb == 1 and na + nb <= longest[va]
        out.append((joined(a.image, b.image, va, one, (ca, cb)), a.text + b.text))
    return out
