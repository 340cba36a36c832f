"""What adapting the OCR to a user's corrections gains, and what it costs (app.ocr.adapt).

    python bench/adapt.py synthetic [--font FILE] [--counts 50,100,200] [--set lr=3e-4 ...] [--rehearse N]
    python bench/adapt.py real [--data ../shared/openmantra-dev]
    python bench/adapt.py again [--data ../shared/openmantra-dev] [--set seed=1 ...]
    python bench/adapt.py cost [--crops 200] [--epochs E] [--twice | --ahead] [--set rehearse=0 ...]

- synthetic: the demo recognizer on crops drawn with a face it never saw in training (a font
  file not among the demo's training faces; default Droid Sans Fallback, a Debian font): N
  corrections (four a page) adapt it; the CER on 300 fresh crops of that face before and
  after, and on 300 crops of the training faces (forgetting).
- real: the annotated books of an OpenMantra-format folder (read here only, nothing of them is
  kept): the text boxes of a book's first half of pages are the corrections, its second half
  is measured; then one book's corrections, the other book measured.
- again: taught in two steps as a user teaches after more pages (a book's first quarter of
  pages, then its first half), the second adapter weighed against the first as the app does
  (app.ocr.adapt_weigh.weigh_against_previous): the second half's CER with each, and which is kept.
- cost: a real-size Nova checkpoint (random weights, tests/golden/writer.py) adapted on N crops
  of 1-8 characters, with the app's rehearsal (drawn crops of other texts), for --epochs epochs
  on this machine's CPU threads: the tower's features (once per crop), seconds per training
  step (8 crops), per epoch (its steps and the held-out reading), in all, peak memory. --twice:
  the same run again, as a second teaching on the same corrections, the tower's features taken
  from the feature cache (app.ocr.feature_cache) the first run filled. --ahead: the crops looked
  at first as the window does after a save (app.ocr.adapt_crops.look_ahead), then the teaching.

Figures go to docs/accuracy.md.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEMO = ROOT / "app" / "resources" / "demo" / "hayai-demo-ocr"
DEFAULT_FONT = Path("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf")
DEFAULT_DATA = ROOT.parent / "shared" / "openmantra-dev"


def _cer(rec, images, texts, patches):
    from app.ocr.text import score

    out = rec.recognize(images, max_num_patches=patches, max_new_tokens=64)
    return score([r.text for r in out], texts).cer


def synthetic(args) -> dict:
    import numpy as np

    from app.ocr import load_recognizer
    from app.ocr.adapt import AdaptSettings, Sample, adapt
    from app.render.specimen import specimens
    from tools.synth.fonts import find_faces
    from tools.synth.styled import face_from_file, styled_crops
    from tools.synth.text import random_text

    face = face_from_file(args.font)
    rec = load_recognizer(DEMO, device="cpu", precision="fp32")
    patches = 256
    test = styled_crops(face, 300, seed=9001, max_len=8)
    faces = find_faces()
    seen = [c for i, f in enumerate(faces) for c in styled_crops(f, 75, seed=9100 + i, max_len=8)]
    before_new = _cer(rec, [c[0] for c in test], [c[1] for c in test], patches)
    before_seen = _cer(rec, [c[0] for c in seen], [c[1] for c in seen], patches)
    rows = []
    for n in args.counts:
        crops = styled_crops(face, n, seed=8000 + n, max_len=8)
        samples = [Sample(im, t, f"p{i // 4}", volume="synthetic") for i, (im, t) in enumerate(crops)]
        if args.rehearse:  # crops of the training faces mixed in as corrections (rehearsal)
            extra = [c for i, f in enumerate(faces) for c in styled_crops(f, args.rehearse // len(faces),
                                                                          seed=7000 + i, max_len=8)]
            samples += [Sample(im, t, f"r{i // 4}", volume="synthetic") for i, (im, t) in enumerate(extra)]
        started = time.perf_counter()
        # the other blocks of those pages, read and left alone: what the app draws as plain print
        rng = np.random.default_rng(6000 + n)
        others = [random_text(rng, 1, 8) for _ in range(3 * n)]
        result = adapt(rec, samples, AdaptSettings(patches=patches, epochs=args.epochs, **{"seed": 0, **args.set}),
                       specimens=specimens, plain_texts=others)
        row = {"corrections": n, "settings": args.set, "rehearse": args.rehearse, "drawn": result.rehearsal,
               "plain_print": [result.plain_before, result.plain_after],
               "kept": result.kept, "reason": result.reason,
               "heldout": [round(result.heldout_before, 4), round(result.heldout_after, 4)],
               "epochs": result.epochs, "scale": result.scale, "refit": result.refit,
               "seconds": round(time.perf_counter() - started, 1),
               "new_face_cer": [round(before_new, 4), round(before_new, 4)],
               "training_faces_cer": [round(before_seen, 4), round(before_seen, 4)]}
        if result.adapter is not None:
            adapted = load_recognizer(DEMO, device="cpu", precision="fp32", adapter=result.adapter)
            row["new_face_cer"][1] = round(_cer(adapted, [c[0] for c in test], [c[1] for c in test], patches), 4)
            row["training_faces_cer"][1] = round(_cer(adapted, [c[0] for c in seen], [c[1] for c in seen], patches), 4)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return {"font": str(args.font), "rows": rows}


def _book_samples(data: Path, book: dict, pages) -> list:
    from PIL import Image

    from app.detect.blocks import crop
    from app.ocr.adapt import Sample

    out = []
    for page in pages:
        with Image.open(data / page["image_paths"]["ja"]) as im:
            image = im.convert("RGB")
        for t in page["text"]:
            box = (t["x"], t["y"], t["x"] + t["w"], t["y"] + t["h"])
            out.append(Sample(crop(image, box), t["text_ja"], f"{book['book_title']}:{page['page_index']}",
                              volume=book["book_title"]))
    return out


def real(args) -> dict:
    from app.ocr import load_recognizer
    from app.ocr.adapt import AdaptSettings, adapt
    from app.ocr.text import score
    from app.render.specimen import specimens

    annotation = json.loads((args.data / "annotation.json").read_text(encoding="utf-8"))
    rec = load_recognizer(DEMO, device="cpu", precision="fp32")
    patches = 384
    halves = {}
    for book in annotation:
        pages = book["pages"]
        mid = len(pages) // 2
        halves[book["book_title"]] = (_book_samples(args.data, book, pages[:mid]),
                                      _book_samples(args.data, book, pages[mid:]))
    settings = AdaptSettings(patches=patches, epochs=args.epochs, lr=args.lr, **{"seed": 0, **args.set})
    rows = []
    names = list(halves)
    runs = [(b, b) for b in names] + [(a, b) for a in names for b in names if a != b]
    for train_book, test_book in runs:
        train = halves[train_book][0] if train_book == test_book else halves[train_book][0] + halves[train_book][1]
        test = halves[test_book][1]
        images, texts = [s.image for s in test], [s.text for s in test]
        # read once: the CER before, and what the app draws as plain print (the other blocks as
        # read, the measured half, by the model before any adapting; their true text is never used)
        read = [r.text for r in rec.recognize(images, max_num_patches=patches, max_new_tokens=64)]
        before = score(read, texts).cer
        started = time.perf_counter()
        result = adapt(rec, train, settings, specimens=specimens, plain_texts=read)
        after = before
        if result.adapter is not None:
            after = _cer(load_recognizer(DEMO, device="cpu", precision="fp32", adapter=result.adapter),
                         images, texts, patches)
        row = {"corrections_from": train_book + (" (first half)" if train_book == test_book else " (all)"),
               "measured_on": test_book + " (second half)", "corrections": result.corrections,
               "test_crops": len(test), "cer": [round(before, 4), round(after, 4)], "kept": result.kept,
               "reason": result.reason, "new_chars": len(result.new_chars), "epochs": result.epochs,
               "scale": result.scale, "refit": result.refit, "drawn": result.rehearsal,
               "seconds": round(time.perf_counter() - started, 1)}
        print(json.dumps(row, ensure_ascii=False), flush=True)
        rows.append(row)
    return {"rows": rows}


def again(args) -> dict:
    """Taught in two steps, as a user teaches after more pages: a book's first quarter of pages,
    then its first half (the first quarter included); the second step's adapter is weighed against
    the first's (app.ocr.adapt_weigh.weigh_against_previous) as the app does. CER of the second half
    with each and with the one the app keeps."""
    from app.ocr import load_recognizer
    from app.ocr.adapt import AdaptSettings, adapt
    from app.ocr.adapt_weigh import weigh_against_previous
    from app.ocr.text import score
    from app.render.specimen import specimens

    annotation = json.loads((args.data / "annotation.json").read_text(encoding="utf-8"))
    rec = load_recognizer(DEMO, device="cpu", precision="fp32")
    patches = 384
    settings = AdaptSettings(patches=patches, epochs=args.epochs, **{"seed": 0, **args.set})
    rows = []
    for book in annotation:
        pages = book["pages"]
        quarter, half = _book_samples(args.data, book, pages[:len(pages) // 4]), \
            _book_samples(args.data, book, pages[:len(pages) // 2])
        test = _book_samples(args.data, book, pages[len(pages) // 2:])
        images, texts = [x.image for x in test], [x.text for x in test]
        read = [r.text for r in rec.recognize(images, max_num_patches=patches, max_new_tokens=64)]
        row = {"book": book["book_title"], "before": round(score(read, texts).cer, 4)}
        first = adapt(rec, quarter, settings, specimens=specimens, plain_texts=read)
        second = adapt(rec, half, settings, specimens=specimens, plain_texts=read)
        for key, result in (("first", first), ("second", second)):
            row[key] = {"corrections": result.corrections, "kept": result.kept, "heldout": result.heldout,
                        "cer": round(_cer(load_recognizer(DEMO, device="cpu", precision="fp32",
                                                          adapter=result.adapter), images, texts, patches), 4)
                        if result.adapter is not None else None}
        if first.adapter is not None and second.adapter is not None:
            compared = weigh_against_previous(rec, second, first.adapter, patches, settings.max_new_tokens)
            row["weighed"] = {"compared": compared, "on": second.previous_checked,
                              "first_cer": second.previous_cer, "second_cer": second.new_cer,
                              "kept": "second" if second.kept else "first"}
        print(json.dumps(row, ensure_ascii=False), flush=True)
        rows.append(row)
    return {"rows": rows}


def cost(args) -> dict:
    import numpy as np
    import torch

    from app.ocr import adapt as adapting
    from app.ocr import load_recognizer
    from app.ocr.adapt_crops import look_ahead
    from app.ocr.feature_cache import FeatureCache
    from app.ocr.precision import mixed_precision
    from app.render.specimen import specimens
    from tests.golden import writer
    from tools.synth.fonts import find_faces
    from tools.synth.styled import styled_crops
    from tools.synth.text import random_text

    folder = writer.cached_checkpoint("nova", seed=0)
    rec = load_recognizer(folder, device="cpu", precision="fp32")
    crops = styled_crops(find_faces()[0], args.crops, seed=77, max_len=8)
    samples = [adapting.Sample(im, t, f"p{i // 4}") for i, (im, t) in enumerate(crops)]
    rng = np.random.default_rng(78)
    others = [random_text(rng, 1, 8) for _ in range(3 * args.crops)]  # blocks read and left alone
    settings = adapting.AdaptSettings(patches=384, epochs=args.epochs, patience=args.epochs,
                                      max_new_tokens=args.max_new_tokens, mixed=args.mixed, **args.set)

    def run(cache) -> dict:
        times = {"features": 0.0, "steps": []}
        original = adapting._loss

        def timed(*a, **k):
            times["steps"].append(time.perf_counter())
            return original(*a, **k)

        started = time.perf_counter()
        adapting._loss = timed
        try:
            result = adapting.adapt(rec, samples, settings, specimens=specimens if settings.rehearse > 0 else None,
                                    plain_texts=others, feature_cache=cache,
                                    progress=lambda stage, done, total: times.__setitem__(
                                        "features", time.perf_counter() - started) if stage == "features" else None)
        finally:
            adapting._loss = original
        steps = times["steps"]
        per_step = (steps[-1] - steps[0]) / max(1, len(steps) - 1) if len(steps) > 1 else float("nan")
        total = time.perf_counter() - started
        return {"drawn": result.rehearsal + result.plain_checked, "features_s": round(times["features"], 1),
                "remembered": result.remembered,
                "epochs": result.epochs, "steps": len(steps), "s_per_step": round(per_step, 3),
                "steps_s": round(per_step * len(steps), 1),
                "per_epoch_s": round((total - times["features"]) / max(1, result.epochs), 1),
                "total_s": round(total, 1), "history": result.history}

    out = {"crops": args.crops, "settings": args.set,
           "mixed": str(mixed_precision(args.mixed, rec.model.device, max(rec.model.cfg.d_model, rec.model.cfg.d_vision))),
           "threads": torch.get_num_threads()}
    if args.ahead:  # the window's look ahead after a save, then the teaching
        with tempfile.TemporaryDirectory() as folder:
            cache = FeatureCache(folder, limit=10**10)
            begun = time.perf_counter()
            looked = look_ahead(rec, samples, settings, specimens=specimens if settings.rehearse > 0 else None,
                                         plain_texts=others, feature_cache=cache)
            out.update(ahead={"crops": looked, "seconds": round(time.perf_counter() - begun, 1)})
            taught = run(cache)
        taught.pop("history")
        out.update(teaching=taught)
    elif args.twice:  # a second teaching on the same corrections: their features remembered by the first
        with tempfile.TemporaryDirectory() as folder:
            cache = FeatureCache(folder, limit=10**10)
            first, second = run(cache), run(cache)
        same = first.pop("history") == second.pop("history")
        out.update(first=first, second=second, same_history=same)
    else:
        out.update(run(None))
        out.pop("history")
    out["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return out


def _setting(text: str) -> tuple[str, object]:
    """NAME=VALUE for AdaptSettings: the value as JSON (3e-4, 4, false), else as text."""
    name, _, value = text.partition("=")
    try:
        return name.strip(), json.loads(value)
    except ValueError:
        return name.strip(), value


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    s = sub.add_parser("synthetic")
    s.add_argument("--font", type=Path, default=DEFAULT_FONT)
    s.add_argument("--counts", default="50,100,200")
    s.add_argument("--epochs", type=int, default=30)
    s.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="an AdaptSettings field for the run (lr=3e-4, rank=4, projector=false), repeatable")
    s.add_argument("--rehearse", type=int, default=0, metavar="N",
                   help="N crops of the training faces added to the corrections (rehearsal; not what the app does)")
    r = sub.add_parser("real")
    r.add_argument("--data", type=Path, default=DEFAULT_DATA)
    r.add_argument("--epochs", type=int, default=30)
    r.add_argument("--lr", type=float, default=1e-3)
    r.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="an AdaptSettings field for the run (rehearse=0: no drawn crops), repeatable")
    c = sub.add_parser("cost")
    a = sub.add_parser("again", help="taught in two steps: a quarter of a book, then half; the second weighed")
    a.add_argument("--data", type=Path, default=DEFAULT_DATA)
    a.add_argument("--epochs", type=int, default=30)
    a.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="an AdaptSettings field, e.g. seed=1")
    c.add_argument("--crops", type=int, default=200)
    c.add_argument("--max-new-tokens", type=int, default=16)
    c.add_argument("--mixed", default="auto", help="AdaptSettings.mixed: auto, bf16 or off (float32)")
    c.add_argument("--epochs", type=int, default=1, help="epochs run whatever the held-out CER does")
    c.add_argument("--ahead", action="store_true",
                   help="look ahead first (what the window does after a save), then teach")
    c.add_argument("--twice", action="store_true",
                   help="run it again with the tower's features the first run remembered (a second teaching)")
    c.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                   help="an AdaptSettings field for the run (rehearse=0, batch_size=16), repeatable")
    args = p.parse_args()
    if args.what == "synthetic":
        if not args.font.is_file():
            print(f"{args.font}: no such font file; install Debian's fonts-droid-fallback or pass --font with "
                  "a CJK font the demo recognizer was not trained on", file=sys.stderr)
            return 2
        args.counts = [int(v) for v in args.counts.split(",")]
        args.set = dict(_setting(v) for v in args.set)
        out = synthetic(args)
    elif args.what == "real":
        if not (args.data / "annotation.json").is_file():
            print(f"{args.data}: no annotation.json here; pass --data with an OpenMantra-format folder", file=sys.stderr)
            return 2
        args.set = dict(_setting(v) for v in args.set)
        out = real(args)
    elif args.what == "again":
        if not (args.data / "annotation.json").is_file():
            print(f"{args.data}: no annotation.json here; pass --data with an OpenMantra-format folder", file=sys.stderr)
            return 2
        args.set = dict(_setting(v) for v in args.set)
        out = again(args)
    else:
        args.set = dict(_setting(v) for v in args.set)
        out = cost(args)
    print(json.dumps(out, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
