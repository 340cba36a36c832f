"""What a teaching run reports (no Qt): `AdaptResult`, the figures app.ocr.adapt.adapt measured
(the held-out corrections, the confirmations and the plain-print check before and after, what was
trained on, how it ended, the second training on every correction), the adapter it kept, and
`summary`, the one paragraph the window's report and `hayai-desktop adapt` show. Nothing here
measures or decides anything.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from app.ocr.adapter import Adapter


@dataclass
class AdaptResult:
    kept: bool
    reason: str
    heldout_before: float
    heldout_after: float
    confirm_before: float | None
    confirm_after: float | None
    corrections: int
    train: int
    heldout: int
    confirmations: int
    volumes: int
    epochs: int
    new_chars: str
    seconds: float
    rehearsal: int = 0  # drawn crops trained on beside the corrections
    plain_before: float | None = None  # CER of the drawn crops kept for the plain-print check
    plain_after: float | None = None
    plain_checked: int = 0  # drawn crops of the plain-print check
    variants: int = 0  # varied copies of the training corrections trained on
    scale: float = 1.0  # the share of the trained change kept (AdaptSettings.scales)
    adapter: Adapter | None = None
    history: list[dict] = field(default_factory=list)
    whole: bool = False  # the decoder's own weights were trained too (AdaptSettings.whole)
    stopped: str = ""  # why training ended before early stopping: "asked" (`stop`), "time" (max_minutes)
    max_minutes: float = 0.0
    held_out: list = field(default_factory=list, repr=False)  # the held-out corrections (Sample), not reported
    previous_cer: float | None = None  # the adapter there before, on the held-out corrections it never trained on
    new_cer: float | None = None  # this run's adapter on the same ones (both read as reading reads)
    previous_checked: int = 0  # how many of them
    replaced: str = ""  # where the adapter file this one replaced was kept (app.core.reading.corrections)
    remembered: int = 0  # corrections and confirmations whose tower features an earlier run had left in the cache
    refit: str = ""  # trained again on every correction (AdaptSettings.refit): "kept", or why the first training
    # was kept instead; "" when it was not tried
    refit_epochs: int = 0
    unweighed: bool = False  # the adapter there had learned every page held out now: the two were not weighed
    checked_adapter: Adapter | None = field(default=None, repr=False)  # the first training's (when trained again):
    # the one the held-out corrections judged, which weigh_against_previous weighs
    joined: int = 0  # crops joined from two training corrections, trained on
    soup: int = 0  # trainings averaged into the adapter (AdaptSettings.soup), when their average was kept
    soup_tried: int = 0  # trainings run for it (the first included); 0: one training was asked for
    soup_verdict: str = ""  # "kept", or why the first training is the adapter
    soup_stopped: str = ""  # what ended the trainings before all were run
    judge: Callable | None = field(default=None, repr=False, compare=False)  # an adapter -> the plain-print
    # check's and the confirmations' CER with it (app.ocr.adapt), not reported

    def summary(self) -> str:
        """The report in one paragraph, as the window and `adapt` show it."""
        def pct(v):
            return f"{100 * v:.1f} %"

        lines = [f"held-out corrections: CER {pct(self.heldout_before)} -> {pct(self.heldout_after)}"]
        if self.confirm_before is not None:
            lines.append(f"confirmed blocks: {pct(self.confirm_before)} -> {pct(self.confirm_after)}")
        else:
            lines.append("confirmed blocks: none (mark pages checked to guard what the model already reads)")
        if self.plain_before is not None:
            lines.append(f"plain print ({self.plain_checked} drawn crop{'s' if self.plain_checked != 1 else ''} "
                         f"checked): {pct(self.plain_before)} -> {pct(self.plain_after)}")
        vols = f" from {self.volumes} volume{'s' if self.volumes != 1 else ''}" if self.volumes else ""
        copies = self.variants // self.train if self.train else 0
        drawn = (f"; {self.rehearsal} drawn in the app's faces to keep plain print{', varied as often' if copies else ''}"
                 if self.rehearsal else "")
        varied = (f", each also as {copies} varied cop{'y' if copies == 1 else 'ies'} (margins, tone)"
                  if copies else "")
        joined = (f", {self.joined} box{'es' if self.joined != 1 else ''} made of two of them" if self.joined else "")
        lines.append(f"{self.corrections} corrections{vols} ({self.train} trained on{varied}{joined}, {self.heldout} "
                     f"held out{drawn})")
        text = "; ".join(lines)
        if self.new_chars:
            text += f"; new characters: {self.new_chars}"
        if self.scale < 1.0:
            text += (f"; {100 * self.scale:.0f} % of the trained change kept (the held-out corrections read "
                     "better than with all of it)")
        if self.previous_cer is not None:
            text += (f"; the adapter you had, on the {self.previous_checked} held-out correction"
                     f"{'s' if self.previous_checked != 1 else ''} it was not trained on: {pct(self.previous_cer)} "
                     f"(this one: {pct(self.new_cer)})")
        if self.refit == "kept":
            text += (f"; then trained again from the start on all {self.corrections} corrections, the held-out ones "
                     f"too, for the {self.refit_epochs} epoch{'s' if self.refit_epochs != 1 else ''} they chose: "
                     "that is the adapter (the held-out figures are the first training's)")
        elif self.refit.startswith(("you asked to stop", "the time limit")):
            text += f"; not trained again on all {self.corrections} corrections: {self.refit}"
        elif self.refit:
            text += f"; trained again on all {self.corrections} corrections too, not kept: {self.refit}"
        if self.soup:
            text += (f"; the average of {self.soup} trainings, each with its own held-out pages and order, is the "
                     "adapter (the held-out figures are the first's)")
        elif self.soup_verdict:
            text += f"; {self.soup_tried} trainings averaged, not kept: {self.soup_verdict}"
        elif self.soup_tried > 1:
            text += f"; {self.soup_tried} trainings run to average, only the first kept an adapter"
        if self.soup_tried and self.soup_stopped:
            text += f"; the trainings to average ended after {self.soup_tried}: {self.soup_stopped}"
        if self.unweighed:
            text += ("; the adapter you had learned every page held out now, so the two could not be weighed on "
                     "them: this one replaces it")
        if self.remembered:
            text += (f"; {self.remembered} block{'s' if self.remembered != 1 else ''} already looked at in an "
                     "earlier teaching")
        verdict = "Adapter kept" if self.kept else f"Adapter discarded: {self.reason}"
        took = f"{self.epochs} epoch{'s' if self.epochs != 1 else ''}, {self.seconds:.0f} s"
        if self.stopped == "asked":
            took = f"stopped when you asked, after {took}; the best epoch so far"
        elif self.stopped == "time":
            took = f"stopped at the time limit of {self.max_minutes:g} min, after {took}; the best epoch so far"
        return f"{text}. {verdict} ({took})."

    def as_dict(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k not in ("adapter", "held_out", "checked_adapter", "judge")}
        return out
