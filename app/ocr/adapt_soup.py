"""Several trainings averaged into one adapter (no Qt): `average` takes adapters trained on the
same corrections with other seeds (other held-out pages, another order of the crops, other
varied copies and drawn crops) and gives the one adapter whose change of every weight is the mean
of theirs, as a "model soup" averages fine-tuned models of one base: the LoRA parts are stacked
along their rank (the mean of K products B A is one product of K times the rank, B divided by
K), the decoder's own weights' changes and the new characters' rows averaged (a character only
some trainings added is the mean of theirs). app.ocr.adapt decides when to train them and
whether the average is kept."""
from __future__ import annotations

import dataclasses
import re

import torch

from app.ocr.adapter import Adapter

_LORA = re.compile(r"^(?P<stem>.*)\.lora_(?P<part>[AB])\.(?P<rest>.*)$")


def average(adapters: list[Adapter]) -> Adapter:
    """The adapter whose every change is the mean of `adapters`' (made for one base model with one
    rank and alpha). One adapter is returned as it is."""
    if len(adapters) == 1:
        return adapters[0]
    first = adapters[0]
    k = len(adapters)
    if len({a.base_sha256 for a in adapters}) != 1 or len({(a.settings["rank"], a.settings["alpha"])
                                                           for a in adapters}) != 1:
        raise ValueError("only adapters of one base model, rank and alpha are averaged")
    lora: dict[str, torch.Tensor] = {}
    for name in first.lora:
        m = _LORA.match(name)
        parts = [a.lora[name].float() for a in adapters]
        if m and m["part"] == "A":  # (rank, in): the ranks stacked
            lora[name] = torch.cat(parts, dim=0)
        elif m and m["part"] == "B":  # (out, rank): stacked too, each B a K-th
            lora[name] = torch.cat(parts, dim=1) / k
        else:
            lora[name] = sum(parts) / k
    weights: dict[str, torch.Tensor] = {}
    for a in adapters:
        for name, delta in a.weights.items():
            weights[name] = weights.get(name, torch.zeros_like(delta, dtype=torch.float32)) + delta.float() / k
    chars = "".join(dict.fromkeys("".join(a.new_chars for a in adapters)))

    def rows(field: str) -> torch.Tensor | None:
        if not chars:
            return None
        out = []
        for c in chars:
            have = [getattr(a, field)[a.new_chars.index(c)].float() for a in adapters if c in a.new_chars]
            out.append(sum(have) / len(have))
        return torch.stack(out)

    settings = {**first.settings, "rank": int(first.settings["rank"]) * k, "alpha": int(first.settings["alpha"]) * k,
                "soup": k}
    pages = sorted({p for a in adapters for p in a.report.get("trained_pages", [])})
    report = {**first.report, "trained_pages": pages} if "trained_pages" in first.report else dict(first.report)
    return dataclasses.replace(first, settings=settings, new_chars=chars, lora=lora, embed_rows=rows("embed_rows"),
                               head_rows=rows("head_rows"), weights=weights, report=report)
