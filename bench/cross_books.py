"""Leave-one-book-out for the layout rules: is a rule, or a threshold, fitted to the pages it
was tuned on? (`python bench/real_pages.py --cross`.)

Every layout change is judged on pages it was not tuned on. With two annotated books A and B:

1. **Shipped rules**: the order and panel figures of each book and of a synthetic set (fresh
   pages of tools.synth, the truth's text boxes fed in as a text detector's, like the books').
2. **Rules taken out** (`SWITCHES`): each rule switched off alone; a rule that helps one book
   and hurts the other is a rule fitted to one book.
3. **Thresholds moved** (`KNOBS`): each fitted constant of app.detect set to each of a few other
   values alone, its effect on each book and on the synthetic set.
4. **Tuned on one book, measured on the other**: from the shipped values, the rules and
   thresholds that help book A (each alone, then together while they still help it: a greedy
   pass) are chosen on A only, and the choice is measured on B and on the synthetic set, both
   ways. "held out" is B's figure under A's choice: what a user's own book would see if the
   rules had been tuned on A alone. Ties keep the shipped value.

The score of a setting on a book is (pages in exact order, sum of Kendall tau): exact order is
what a reader notices. Switches and thresholds are set by patching app.detect's modules for
the length of one measurement (`setting`); nothing is written anywhere.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

MODULES = {"order": "app.detect.order", "panels": "app.detect.panels", "gutters": "app.detect.gutters",
           "bubbles": "app.detect.bubbles", "blocks": "app.detect.blocks", "ink": "app.detect.ink"}


@dataclass(frozen=True)
class Knob:
    """A rule or threshold of app.detect: `name`, its shipped value `default`, the `values` to try
    instead, and `apply(value) -> undo`."""

    name: str
    default: object
    values: tuple
    apply: Callable[[object], Callable[[], None]]


def _module(short: str):
    return importlib.import_module(MODULES[short])


def constant(path: str, values: Sequence) -> Knob:
    """A module constant, "panels.CROWDED", tried at `values`."""
    short, attr = path.split(".")
    mod = _module(short)
    default = getattr(mod, attr)

    def apply(value):
        setattr(mod, attr, value)
        return lambda: setattr(mod, attr, default)

    return Knob(path, default, tuple(v for v in values if v != default), apply)


def switch(name: str, patch: Callable[[], Callable[[], None]]) -> Knob:
    """A rule that can be taken out: `patch()` takes it out and returns the undo."""
    return Knob(name, True, (False,), lambda on: (lambda: None) if on else patch())


def _replace(short: str, attr: str, make: Callable) -> Callable[[], None]:
    """Replace `attr` of the module by make(original); the undo."""
    mod = _module(short)
    original = getattr(mod, attr)
    setattr(mod, attr, make(original))
    return lambda: setattr(mod, attr, original)


def _no_settle(_original):
    panels = _module("panels")
    return lambda p, texts, order, height: (list(p), panels._sure(list(p), texts))


def _always_sure(original):
    from dataclasses import replace

    return lambda *a, **k: replace(original(*a, **k), sure=True)


def _page_wide_in_panels(_original):
    order = _module("order")
    return lambda boxes: order._order_within(boxes, True)


def _no_widen(original):
    return lambda groups, page: groups


def switches() -> list[Knob]:
    return [
        switch("rule: shared border lines cut panels", lambda: _replace("gutters", "_shared_borders", lambda o: lambda *a, **k: [])),
        switch("rule: a border line crossing a gutter is no shared border",
               lambda: _replace("gutters", "_crosses_gutter", lambda o: lambda *a: False)),
        switch("rule: textless panels lying in a larger one dropped",
               lambda: _replace("panels", "drop_figures", lambda o: lambda p, t: list(p))),
        switch("rule: regions split straight-cut panels", lambda: _replace("panels", "_regions", lambda o: lambda *a, **k: {})),
        switch("rule: gutters must have borders beside", lambda: _replace("gutters", "BORDER_INK", lambda o: 2.0)),
        switch("rule: slivers without text dropped", lambda: _replace("panels", "drop_slivers", lambda o: lambda p, t, s: list(p))),
        switch("rule: textless overlapping panels set aside", lambda: _replace("panels", "settle_overlaps", _no_settle)),
        switch("rule: crowded panels read page-wide", lambda: _replace("panels", "CROWDED", lambda o: 10 ** 6)),
        switch("rule: unsure finder -> page-wide rule", lambda: _replace("panels", "panel_layout", _always_sure)),
        switch("rule: column rule inside a manga panel", lambda: _replace("order", "_order_columns", _page_wide_in_panels)),
        switch("rule: grey gutters", lambda: _replace("panels", "grey_gutters", lambda o: lambda g: None)),
        switch("rule: text boxes widened to bubbles", lambda: _replace("blocks", "_widen_to_bubbles", _no_widen)),
        switch("rule: ragged corner regions no panels", lambda: _replace("panels", "PANEL_FILL", lambda o: 0.0)),
        switch("rule: wider gutter parts a grid first", lambda: _replace("panels", "WIDER", lambda o: 10.0 ** 9)),
        switch("rule: slanted tiers apart", lambda: _replace("panels", "SLANT", lambda o: 0.0)),
        switch("rule: text in no panel read where it lies", lambda: _replace("panels", "loose_texts", lambda o: lambda *a: [])),
        switch("rule: light text on a dark ground", lambda: _replace("ink", "LIGHT_GROUND", lambda o: 2.0)),
        switch("rule: text over a grey tone kept", lambda: _replace("ink", "_darkest", lambda o: lambda *a, **k: None)),
    ]


def knobs() -> list[Knob]:
    return [
        constant("order.BAND_OVERLAP", (0.3, 0.7)),
        constant("order.COLUMN_OVERLAP", (0.3, 0.7)),
        constant("panels.CROWDED", (4, 5, 8)),
        constant("panels.MAX_OVERLAP", (0.15, 0.5)),
        constant("panels.NESTED", (0.8, 0.97)),
        constant("panels.MAX_OUTSIDE", (0.1, 0.5)),
        constant("panels.PANEL_SLACK", (0.0, 0.05)),
        constant("panels.REGION_INSIDE", (0.5, 0.9)),
        constant("panels.PANEL_FILL", (0.6, 0.9)),
        constant("panels.MIN_REGION_FILL", (0.6, 0.9)),
        constant("panels.MIN_REGION_AREA", (0.006, 0.025)),
        constant("panels.MIN_PANEL_SIDE", (0.02, 0.08)),
        constant("gutters.PAPER_FRACTION", (0.75, 0.92)),
        constant("gutters.GUTTER_SPECKS", (0.0005, 0.006)),
        constant("gutters.BORDER_INK", (0.3, 0.7)),
        constant("gutters.MIN_GUTTER", (0.002, 0.008)),
        constant("gutters.MIN_PANEL", (0.02, 0.08)),
        constant("gutters.LINE_INK", (0.7, 0.9)),
        constant("gutters.LINE_CONTRAST", (0.25, 0.45)),
        constant("gutters.LINE_ALONE", (8, 24)),
        constant("gutters.LINE_GUTTER", (0.01, 0.08)),
        constant("gutters.MIN_LINE_PIECE", (0.04, 0.15)),
        constant("gutters.LINE_GAP", (0.005, 0.05)),
        constant("gutters.MAX_LINE", (0.004, 0.01)),
        constant("panels.DARK_LEVEL", (50, 100)),
        constant("bubbles.MAX_GROWTH", (2.5, 8.0)),
        constant("bubbles.MIN_SOLIDITY", (0.75, 0.92)),
    ]


@contextmanager
def setting(all_knobs: Sequence[Knob], chosen: dict[str, object]):
    """The knobs named in `chosen` set to their chosen values for the length of the block."""
    undo = []
    try:
        for k in all_knobs:
            if k.name in chosen and chosen[k.name] != k.default:
                undo.append(k.apply(chosen[k.name]))
        yield
    finally:
        for u in reversed(undo):
            u()


def score(summary: dict) -> tuple[int, float]:
    """What a setting is judged by on a book: (pages in exact order, sum of Kendall tau)."""
    return summary["order_exact_pages"], round(summary["kendall_tau"] * summary["order_pages"], 6)


def cross(measure: Callable[[str], dict], books: Sequence[str], all_knobs: Sequence[Knob],
          progress: Callable[[str], None] = lambda s: None) -> dict:
    """The four parts of the protocol (module docstring). `measure(name)` scores the set `name`
    (a book, or "synthetic") under the knobs as they are now and returns its summary; `books`:
    the two books (each tuned on, the other held out), plus any other set measured alongside."""
    sets = list(books)

    def under(chosen: dict[str, object], which: Sequence[str] = sets) -> dict[str, dict]:
        with setting(all_knobs, chosen):
            return {s: measure(s) for s in which}

    shipped = under({})
    progress("shipped rules measured")
    sweep: dict[str, dict[str, dict]] = {}  # "knob=value" -> set -> summary
    for k in all_knobs:
        for v in k.values:
            sweep[f"{k.name}={v}"] = under({k.name: v})
            progress(f"{k.name} = {v}: " + ", ".join(f"{s} {sweep[f'{k.name}={v}'][s]['order_exact_pages']}"
                                                     for s in sets))
    tuned = {}
    for a in books[:2]:
        # each knob alone: its best value on A, when it beats the shipped one there
        gains = []
        for k in all_knobs:
            best, best_score = k.default, score(shipped[a])
            for v in k.values:
                sc = score(sweep[f"{k.name}={v}"][a])
                if sc > best_score:
                    best, best_score = v, sc
            if best != k.default:
                gains.append((best_score, k.name, best))
        # then together, best first, while A keeps gaining
        chosen: dict[str, object] = {}
        current = score(shipped[a])
        for _, name, value in sorted(gains, key=lambda g: g[0], reverse=True):
            trial = {**chosen, name: value}
            sc = score(under(trial, [a])[a])
            if sc > current:
                chosen, current = trial, sc
        tuned[a] = {"chosen": chosen, "figures": under(chosen)}
        progress(f"tuned on {a}: {chosen}")
    return {"shipped": shipped, "sweep": sweep, "tuned": tuned,
            "knobs": [{"name": k.name, "default": k.default, "values": list(k.values)} for k in all_knobs]}


def _fmt(s: dict) -> str:
    return f"{100 * s['order_exact']:.1f} % ({s['order_exact_pages']}/{s['order_pages']}), tau {s['kendall_tau']:.4f}"


def report(result: dict, books: Sequence[str]) -> list[str]:
    """The protocol's tables as Markdown lines."""
    sets = list(result["shipped"])
    a, b = books[0], books[1]
    lines = ["Shipped rules (tuned on both books):", "",
             "| set | order exact | page-wide rule | panels P / R | sure | dropped | marked 'check the order' | "
             "out of order marked | marked wrong / unmarked right |", "|---|---|---|---|---|---|---|---|---|"]
    for s in sets:
        f = result["shipped"][s]
        lines.append(f"| {s} | {_fmt(f)} | {100 * f['pagewide_exact']:.1f} % / {f['pagewide_tau']:.4f} | "
                     f"{f['panel_precision']:.3f} / {f['panel_recall']:.3f} | {f['pages_panels_sure']} of {f['pages']} | "
                     f"{f['dropped']} of {f['text_boxes']} | {100 * f.get('marked_share', 0):.1f} % ({f.get('marked', 0)}) | "
                     f"{f.get('marked_wrong', 0)} of {f.get('wrong_pages', 0)} | "
                     f"{100 * f.get('marked_precision', 0):.0f} % / {100 * f.get('unmarked_right', 0):.1f} % |")
    lines += ["", "Each rule taken out, or threshold moved, alone: change in pages in exact order "
              "(and in tau x 1000) against the shipped rules:", "",
              "| change | " + " | ".join(sets) + " | fitted to one book? |", "|---|" + "---|" * (len(sets) + 1)]
    for key, figs in result["sweep"].items():
        d = {s: (figs[s]["order_exact_pages"] - result["shipped"][s]["order_exact_pages"],
                 1000 * (figs[s]["kendall_tau"] - result["shipped"][s]["kendall_tau"])) for s in sets}
        if all(dx == 0 and abs(dt) < 0.05 for dx, dt in d.values()):
            continue
        one_sided = (d[a][0] > 0 > d[b][0]) or (d[b][0] > 0 > d[a][0])
        cells = " | ".join(f"{dx:+d} ({dt:+.1f})" for dx, dt in d.values())
        lines.append(f"| {key} | {cells} | {'yes' if one_sided else ''} |")
    lines += ["", "(changes moving nothing left out)", "", "Tuned on one book, measured on the other:", "",
              "| tuned on | chosen (from the shipped values) | on it (in sample) | held-out book | synthetic |",
              "|---|---|---|---|---|"]
    for tuned_on, other in ((a, b), (b, a)):
        t = result["tuned"][tuned_on]
        chosen = ", ".join(f"{k} = {v}" for k, v in t["chosen"].items()) or "the shipped values"
        synth = _fmt(t["figures"]["synthetic"]) if "synthetic" in t["figures"] else "-"
        lines.append(f"| {tuned_on} | {chosen} | {_fmt(t['figures'][tuned_on])} | {other}: "
                     f"{_fmt(t['figures'][other])} | {synth} |")
    return lines
