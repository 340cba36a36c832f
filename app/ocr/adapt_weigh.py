"""Weighing two adapters of the same base model (no Qt): when the OCR is taught again, the
adapter already there and the new one read the new run's held-out corrections from pages the one
there was not trained on (`app.ocr.training_data.page_key`), and the one there stays only when it
reads them clearly better (`clearly_worse`: a paired bootstrap over
the crops, since a few dozen crops decide a difference of a point by chance).
`weigh_against_previous(recognizer, result, previous, patches)` marks an `app.ocr.adapt`
result not kept, and says why, when it loses. When the run trained again on every correction, the
held-out ones included, the new side is its first training (`AdaptResult.checked_adapter`), the one
that never saw them: the adapter trained again stands or falls with it.
"""
from __future__ import annotations

import random
from typing import TYPE_CHECKING

from app.ocr.adapter import Adapter
from app.ocr.text import normalize
from app.ocr.training_data import page_key

if TYPE_CHECKING:
    from app.ocr.adapt_result import AdaptResult


def weigh_against_previous(recognizer, result: AdaptResult, previous: Adapter, patches: int,
                           max_new_tokens: int = 64) -> bool:
    """Teaching again never replaces a better adapter: read this run's held-out corrections that
    `previous` (the adapter already there, for the same base model) was not trained on with both
    adapters, each on a copy of the model as reading reads; when the new one reads them worse,
    `result` is marked not kept and says why. -> whether they were compared (not when `previous`
    does not say what it was trained on, or it was trained on every one of them)."""
    import copy

    from app.ocr.recognizer import Recognizer
    from app.ocr.text import score

    if result.adapter is None or "trained_pages" not in previous.report:
        return False
    seen = set(previous.report["trained_pages"])
    fresh = [x for x in result.held_out if page_key(x.group) not in seen]
    if not fresh:
        result.unweighed = True  # the report says why (an adapter trained again on every correction learned them)
        return False

    def edits_with(adapter: Adapter) -> list[int]:
        rec = Recognizer(copy.deepcopy(recognizer.model), recognizer.tokenizer, recognizer._device,
                         recognizer.base_name, recognizer.folder, recognizer.precision)
        rec.use_adapter(adapter)
        out = rec.recognize([x.image for x in fresh], max_num_patches=patches, max_new_tokens=max_new_tokens)
        return [score([r.text], [x.text]).edits for r, x in zip(out, fresh)]

    chars = [max(1, len(normalize(x.text))) for x in fresh]
    old, new = edits_with(previous), edits_with(result.checked_adapter or result.adapter)
    result.previous_cer, result.new_cer = sum(old) / sum(chars), sum(new) / sum(chars)
    result.previous_checked = len(fresh)
    worse = clearly_worse(new, old, chars)
    if worse:
        result.kept, result.adapter, result.checked_adapter = False, None, None
        result.reason = (f"the adapter you had reads the {len(fresh)} held-out corrections it was not trained on "
                         f"clearly better ({100 * result.previous_cer:.1f} % against {100 * result.new_cer:.1f} %, in "
                         f"{100 * worse:.0f} % of {BOOTSTRAP} resamples of them); it stays as it was")
    return True


BOOTSTRAP = 1000  # resamples of the held-out corrections when two adapters are weighed
CLEARLY = 0.95  # the share of them in which the one you had must read better for it to stay


def clearly_worse(new: list[int], old: list[int], chars: list[int], seed: int = 0) -> float:
    """Whether the new adapter's edits read the crops clearly worse than the old one's: in at least
    CLEARLY of BOOTSTRAP resamples of the crops (drawn with replacement, the pairs kept together) the
    new CER is higher -> that share, or 0.0 when it is below CLEARLY. A few dozen crops decide a
    difference of a point by chance: on one real book the adapter of 109 corrections read 51 held-out
    ones 0.7 points better than the one of 212, which read the rest of the book 2.7 points better."""
    rng = random.Random(seed)
    n, higher = len(chars), 0
    for _ in range(BOOTSTRAP):
        picks = [rng.randrange(n) for _ in range(n)]
        higher += sum(new[i] for i in picks) > sum(old[i] for i in picks)
    share = higher / BOOTSTRAP
    return share if share >= CLEARLY else 0.0
