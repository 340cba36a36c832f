"""Adapting the recognizer to a series: what the user corrected teaches the model (no Qt).

    result = adapt(recognizer, samples, AdaptSettings(epochs=20), progress=..., cancel=...)
    if result.adapter: result.adapter.save(path)       # a safetensors file the user owns
    recognizer.use_adapter(Adapter.load(path))         # app.ocr.recognizer

What is trained: low-rank adapters (LoRA, from the `peft` library) on the decoder's linear layers
and the projector's; for a small model (`whole`, "auto": narrower than 512, the demo recognizer)
the decoder's and projector's own weights too, at a tenth of the adapters' rate, which read the
real books of docs/accuracy.md better on three rows of four; the adapter then carries their
change. The vision tower stays frozen and runs **once per crop**: its features are
cached and every training step costs only the projector and the decoder. A character of a
correction the tokenizer cannot write (a rare kanji of a name) becomes a new token: a new row of
the token embeddings and of the output head, trained with the adapters and carried in the file.

The guard: the corrections are split by page into a training part and a held-out part (at
least `holdout` of them, whole pages); training stops early when the held-out CER has not
improved for `patience` epochs and keeps the best epoch. The adapter is kept only when the
held-out CER falls and the CER of the confirmations (blocks on checked pages left as read) does
not rise by more than `max_confirmation_rise`; otherwise `AdaptResult.adapter` is None and
`reason` says why. For a seed, the result is the same run after run (on one machine).

Rehearsal: so that the model keeps reading plain print while it learns a series' lettering,
`specimens` (given by the caller: app.core.reading passes app.render.specimen.specimens) draws
texts as clean crops in the app's faces: `plain_texts` (the caller's: the texts of the blocks
that are neither corrections nor confirmations; none given, no rehearsal), `rehearse` of them
per training correction, each text once at most (drawing the corrections' own texts instead,
or a few texts many times, was measured worse: the model learns those strings). Three quarters
are trained on with the corrections; the other quarter is the plain-print check: when the epoch
to keep is chosen, the rise of its CER beyond `max_confirmation_rise` is added to the held-out
CER. A held-out correction's text is never drawn.

Scaled back (`scales`): once the best epoch is chosen, the adapters' change is also tried at
a half and three quarters of itself (LoRA's B matrices scaled: a step back along the line from
the base model to the trained one, as in robust fine-tuning by weight interpolation, WiSE-FT);
the scale kept is the one whose held-out CER, with the plain-print penalty, is lowest (all of
the change unless another reads strictly better). On the synthetic bench at 200 corrections it
kept half the change for both seeds: the new face read better and the training faces no
longer worse; on the real books it read every row as well or better on average over two seeds
(docs/accuracy.md). It costs two more readings of the held-out corrections and the check.

Feature dropout (`feature_dropout`, 0.1): the tower's features are cached, so without it every
epoch shows a crop to the decoder exactly as the last one did; each value of them is zeroed with
this chance at every training step (the rest scaled up, never when reading the held-out
corrections). On the two real books of docs/accuracy.md it read every row but one better on
the mean of three seeds (35.0 -> 34.0 % on a book's own second half) and the synthetic new face
about as well; 0.2 and 0.3 were not better.

Varied copies (`augment`, "auto": two for a model narrower than 512, none for a real-size one):
each training correction is also trained on as N copies taken as another reading might have
taken it (app.ocr.training_data.varied: the box's margins moved by up to 8 % of its sides, a
little blur, contrast and brightness a little off), and so is each drawn crop trained on, so that
plain print keeps its share. On the two real books of docs/accuracy.md two copies read every row
better on the mean of three seeds (a book's own second half 34.0 -> 33.1 % and 41.3 -> 38.5 %) and
the synthetic training faces no worse; each copy costs as much as a correction (its features and
its steps), so a real-size model, where a step takes a second on a CPU, gets none unless asked.

Joined crops (`join`, "auto": one per training correction for a model narrower than 512, none for a
real-size one): two training corrections of one direction in one box, their texts one after the
other (app.ocr.training_data.joins), never a held-out one. On the two real books of docs/accuracy.md
one a correction read every row as well or better on the mean of three seeds (a book's own second
half 37.9 -> 35.7 % and 32.2 -> 30.1 %) and the synthetic new face too (10.63 -> 10.27 %).

Averaged trainings (`soup`, 1 unless asked): the whole run is done K times, the k-th with the
seed + SOUP_SEED k (its own held-out pages, order, copies and drawn crops), and the adapters the
guard kept are averaged into one (app.ocr.adapt_soup.average, a "model soup"); the average is the
adapter when the plain-print check and the confirmations, read with it, are no worse than with
the first training (within `max_confirmation_rise` of before), otherwise the first is. The
held-out figures reported are the first training's. On the synthetic new face at 200
corrections three read better than one (docs/accuracy.md); the real books were not measured
with it yet, so it is not the default. It costs K times the time.

Stopping early and keeping what was learned: `stop` (the window's "Stop teaching and keep what
it learned") and `max_minutes` (a limit for the whole run, features included: training stops
when the time taken plus what must follow, the next step, the last epoch's reading, the
scaled-back readings and the confirmations', as long as they took so far, reaches it) end the
training at a step; the steps of that epoch are read like an epoch and the best epoch so far
goes through the scale-back and the guard as always. The report says so.

Trained again on every correction (`refit`, "auto": for a model narrower than 512, the demo
recognizer; a real-size one, where it would take as long again, does not unless asked): once the
held-out corrections have chosen the epochs and the scale and the guard has kept the adapter, the
model is trained once more from the base, the same number of epochs, on all the corrections (the
held-out ones and their varied copies too: a quarter more of the series' lettering) and the same
drawn crops, and scaled back as chosen. The held-out corrections can no longer judge that
adapter, so it is kept only when the plain-print check and the confirmations, which it was not
trained on either, read no worse than with the first one (within `max_confirmation_rise` of
before); otherwise the first is kept, and the report says which. The held-out figures of the
report are the first training's. On the two real books of docs/accuracy.md it read every row
better on the mean of three seeds (by 0.6-1.2 points), and the synthetic new face too.

What a run looks at (the crops, the drawn ones and the copies, their features through the
feature cache) is made in app.ocr.adapt_crops, which also looks ahead of a run.

Teaching again (`app.ocr.adapt_weigh.weigh_against_previous`, called by app.core.reading.corrections.run_adapt when an
adapter for the same base model is already where the new one goes): the adapter records the pages
it was trained on (`trained_pages`, `page_key`); the new run's held-out corrections on other pages
are read with the adapter there and with the new one, each on a copy of the model as reading
reads, and the new one is not kept when it reads them clearly worse (`clearly_worse`: in 95 % of
resamples of those crops; a few dozen crops decide a point by chance), so a series' adapter is not
replaced by a worse one for being taught again.

Without an adapter nothing here touches the model: reading stays the published path. The
adapter file, the new characters' rows and putting an adapter on a model are app.ocr.adapter. The
training steps on the cached features (a step's loss, a reading's CER, the scale-back) are
app.ocr.adapt_steps. What a run reports (`AdaptResult` and its one-paragraph summary) is
app.ocr.adapt_result.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace

import torch

from app.errors import Cancelled, UserError
from app.ocr.adapt_crops import REFITS, WHOLE_BELOW_WIDTH, Progress, Specimens, crops_of, looked_at
from app.ocr.adapt_result import AdaptResult
from app.ocr.adapt_soup import average

# the steps' names looked up here, not in adapt_steps: bench/adapt.py times a step by replacing _loss
from app.ocr.adapt_steps import Cached as _Cached
from app.ocr.adapt_steps import cer as _cer
from app.ocr.adapt_steps import loss as _loss
from app.ocr.adapt_steps import own as _own
from app.ocr.adapt_steps import scale_adapters as _scale_adapters
from app.ocr.adapt_steps import trainable as _trainable
from app.ocr.adapter import Adapter, attach, load_into, model_sha256, unknown_chars
from app.ocr.feature_cache import FeatureCache
from app.ocr.precision import mixed_precision
from app.ocr.training_data import Sample, page_key

MAX_AUGMENT = 8
SOUP_SEED = 1000  # the seed of the k-th training averaged: the run's seed + k times this


@dataclass(frozen=True)
class AdaptSettings:
    patches: int = 384  # the reading's patch budget (the crops are seen as the reading sees them)
    epochs: int = 30
    lr: float = 1e-3
    rank: int = 8
    alpha: int = 16
    batch_size: int = 8
    holdout: float = 0.25  # share of the corrections held out (whole pages), at least 0.2
    patience: int = 4  # epochs without a better held-out CER before stopping
    seed: int = 0
    max_new_tokens: int = 64
    max_confirmation_rise: float = 0.003  # 0.3 points of CER
    projector: bool = True  # adapt the projector too
    mixed: str = "auto"  # bf16 autocast for the tower's features and the training: auto (a real-size
    # model on a device that computes bf16 natively: CPUs with AVX-512 BF16 or AMX, CUDA), "bf16", "off"
    rehearse: float = 1.0  # drawn crops of other texts (plain_texts) per training correction (0: none)
    augment: int | str = "auto"  # varied copies of each training correction (margins, contrast, blur): a
    # number, or "auto" (AUGMENT_SMALL for models narrower than 512, where two read the real books better; a
    # real-size model none: each copy costs as much as a correction, its features and its steps)
    scales: tuple[float, ...] = (0.5, 0.75)  # the adapters' change scaled back after training, each tried
    whole: str = "auto"  # the decoder's own weights trained too, at whole_lr: "auto" (models narrower than
    # 512: the demo recognizer, where it read the real books better; a real-size model keeps to LoRA), "on", "off"
    whole_lr: float = 1e-4
    decay: float = 0.0  # the learning rates halved every this many epochs, step by step (0: constant)
    feature_dropout: float = 0.1  # each value of the cached tower features zeroed with this chance at
    # every training step (the rest scaled up), so that no epoch sees a crop exactly as the last did
    max_minutes: float = 0.0  # the whole run (features included) kept within this many minutes: training stops
    # early enough for the last readings to fit and the best epoch so far is kept; 0: no limit
    refit: str = "auto"  # trained again on every correction, the held-out ones too, for the epochs they chose:
    # "auto" (models narrower than 512, where it read the real books better; a real-size model, where it costs as
    # long again, does not), "on", "off"
    join: float | str = "auto"  # crops made of two training corrections in one box (app.ocr.training_data.joins),
    # per training correction: a number, or "auto" (JOIN_SMALL for models narrower than 512, a real-size model none)
    soup: int = 1  # trainings averaged into the adapter (the module doc's "Averaged trainings"): each with its
    # own seed (the run's + SOUP_SEED k), so its own held-out pages, order, copies and drawn crops; 1: one training
    shaped: bool = False  # drawn crops laid out as a training correction of about their length is
    # (its direction, its number of columns; on the real books over three seeds it read every row
    # worse, docs/accuracy.md); False: tall as often as the corrections are, about PER_LINE a column


def adapt(recognizer, samples: list[Sample], settings: AdaptSettings | None = None, name: str = "",
          progress: Progress | None = None, cancel: Callable[[], bool] | None = None,
          train: bool = True, specimens: Specimens | None = None,
          plain_texts: list[str] | None = None, stop: Callable[[], bool] | None = None,
          feature_cache: FeatureCache | None = None) -> AdaptResult:
    """Adapt `recognizer` to the samples (see `_adapt_one`, which this runs once, or `soup` times:
    the module doc's "Averaged trainings")."""
    s = settings or AdaptSettings()
    if isinstance(s.soup, bool) or not isinstance(s.soup, int) or not 1 <= s.soup <= MAX_AUGMENT:
        raise UserError(f"unknown setting soup={s.soup!r}: use a number of trainings to average from 1 to "
                        f"{MAX_AUGMENT}")
    started = time.perf_counter()
    run = dict(name=name, progress=progress, cancel=cancel, train=train, specimens=specimens,
               plain_texts=plain_texts, stop=stop, feature_cache=feature_cache)
    first = _adapt_one(recognizer, samples, s, **run)
    judge, first.judge = first.judge, None  # it holds the crops' features: not kept with the result
    if s.soup == 1 or not first.kept or first.stopped or not train or first.adapter is None:
        return first
    members = [first.adapter]
    why, tried = "", 1
    for j in range(1, s.soup):
        if stop is not None and stop():
            why = "you asked to stop"
            break
        if s.max_minutes and time.perf_counter() - started + first.seconds >= 60 * s.max_minutes:
            why = f"the time limit of {s.max_minutes:g} min"
            break
        other = _adapt_one(recognizer, samples, replace(s, seed=s.seed + SOUP_SEED * j), **run)
        tried += 1
        if other.stopped:
            why = "you asked to stop" if other.stopped == "asked" else f"the time limit of {s.max_minutes:g} min"
            break
        if other.kept and other.adapter is not None:
            members.append(other.adapter)
    first.soup_tried = tried
    if len(members) > 1 and judge is not None:
        soup = average(members)
        plain, confirm = judge(soup)
        verdict = refit_verdict(first.plain_before, first.plain_after, plain, first.confirm_before, confirm,
                                s.max_confirmation_rise)
        first.soup_verdict = verdict
        if verdict == "kept":
            first.soup, first.plain_after, first.confirm_after = len(members), plain, confirm
            first.history.append({"soup": len(members), "plain_cer": plain, "confirm_cer": confirm})
            first.adapter = soup
    first.soup_stopped = why
    first.seconds = time.perf_counter() - started
    if first.soup:
        report = {k: v for k, v in first.as_dict().items() if k != "history"}
        first.adapter = replace(first.adapter, report={**report, "trained_pages": first.adapter.report.get(
            "trained_pages", [])})
    return first


def _adapt_one(recognizer, samples: list[Sample], settings: AdaptSettings | None = None, name: str = "",
               progress: Progress | None = None, cancel: Callable[[], bool] | None = None,
               train: bool = True, specimens: Specimens | None = None,
               plain_texts: list[str] | None = None, stop: Callable[[], bool] | None = None,
               feature_cache: FeatureCache | None = None) -> AdaptResult:
    """Adapt `recognizer` (app.ocr.recognizer.Recognizer, fp32 or bf16, no adapter on) to the
    samples. The recognizer itself is not changed: a copy of its decoder is trained. `train`
    False skips the training steps (what the tests compare with). `specimens`, `plain_texts`:
    see the module doc (no specimens: no rehearsal). `stop`: asked at every training step; when it
    says True the training ends there (the steps of that epoch done so far are read like an
    epoch) and the run finishes with the best epoch so far, the guard as always (`cancel`, by
    contrast, throws everything away). `feature_cache` (app.ocr.feature_cache): the tower's
    features of the crops are taken from it where an earlier run left them, and the ones computed
    now are left there."""
    import copy

    s = settings or AdaptSettings()
    started = time.perf_counter()
    if s.whole not in ("auto", "on", "off"):  # before any crop is looked at
        raise UserError(f"unknown setting whole={s.whole!r}: use auto, on or off")
    if s.augment != "auto" and not (isinstance(s.augment, int) and 0 <= s.augment <= MAX_AUGMENT):
        raise UserError(f"unknown setting augment={s.augment!r}: use auto or a number of copies from 0 to "
                        f"{MAX_AUGMENT}")
    if s.join != "auto" and not (isinstance(s.join, (int, float)) and not isinstance(s.join, bool)
                                 and 0 <= s.join <= MAX_AUGMENT):
        raise UserError(f"unknown setting join={s.join!r}: use auto or a number of joined crops per correction "
                        f"from 0 to {MAX_AUGMENT}")
    if not 0 <= s.feature_dropout < 1:
        raise UserError(f"feature dropout must be at least 0 and below 1, got {s.feature_dropout}")
    if s.refit not in REFITS:
        raise UserError(f"unknown setting refit={s.refit!r}: use {', '.join(REFITS)}")
    if not s.decay >= 0:
        raise UserError(f"the learning rates' half-life must be 0 (none) or more epochs, got {s.decay}")
    if not s.max_minutes >= 0:
        raise UserError(f"the time limit must be 0 (none) or more minutes, got {s.max_minutes}")
    if getattr(recognizer, "adapter", None) is not None:
        raise UserError("the OCR model already has an adapter on; adapt the model without it")

    def check():
        if cancel is not None and cancel():
            raise Cancelled("adapting cancelled")

    def report(stage, done, total):
        if progress is not None:
            progress(stage, done, total)

    looked = crops_of(recognizer.model.cfg, samples, s, specimens, plain_texts)
    corrections, confirmations, train_idx, held_idx = (looked.corrections, looked.confirmations, looked.train_idx,
                                                       looked.held_idx)
    drawn, variants, images, width, copies = looked.drawn, looked.variants, looked.images, looked.width, looked.copies
    torch.manual_seed(s.seed)
    model = copy.deepcopy(recognizer.model)  # the tower's weights are shared in memory only while copying
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    base_tok = recognizer.tokenizer
    amp = mixed_precision(s.mixed, model.device, width) if next(model.parameters()).dtype == torch.float32 else None
    whole = s.whole == "on" or (s.whole == "auto" and width < WHOLE_BELOW_WIDTH)
    new_chars = unknown_chars(base_tok, [corrections[i].text for i in train_idx])
    settings_dict = {**asdict(s), "base_vocab": model.cfg.vocab_size}

    feats, remembered = looked_at(model, recognizer, images, s.patches, amp, feature_cache, check, report,
                                  len(corrections) + len(confirmations))

    held_variant_feats = feats[len(feats) - len(looked.held_variants):]
    feats = feats[:len(feats) - len(looked.held_variants)]
    variant_feats = feats[len(feats) - len(variants):]
    drawn_feats = feats[len(corrections) + len(confirmations):len(feats) - len(variants)]
    feats = feats[:len(corrections) + len(confirmations)]
    before_cache = [_Cached(f, shape, [], x.text) for (f, shape), x in zip(feats, corrections + confirmations)]
    held_before = [before_cache[i] for i in held_idx]
    conf_cache = before_cache[len(corrections):]
    begun = time.perf_counter()
    heldout_before = _cer(model, base_tok, held_before, s.max_new_tokens, check, amp=amp)
    plain_check = [_Cached(f, shape, [], text) for k, ((f, shape), (_, text)) in enumerate(zip(drawn_feats, drawn))
                   if k % 4 == 3]
    plain_before = _cer(model, base_tok, plain_check, s.max_new_tokens, check, amp=amp) if plain_check else None
    read_s = time.perf_counter() - begun  # the held-out and plain-print readings (and the confirmations')
    begun = time.perf_counter()
    confirm_before = _cer(model, base_tok, conf_cache, s.max_new_tokens, check, amp=amp) if conf_cache else None
    confirm_s = time.perf_counter() - begun
    stopped = ""
    step_s = 0.0  # the last training step's time

    def halted() -> bool:
        """Asked to stop, or the time limit reached once the next step (as long as the last) and
        what follows it (its epoch's reading, the scaled-back readings, the confirmations') are
        counted."""
        nonlocal stopped
        if not stopped:
            if stop is not None and stop():
                stopped = "asked"
            elif s.max_minutes and (time.perf_counter() - started + step_s + (1 + len(s.scales)) * read_s
                                    + confirm_s >= 60 * s.max_minutes):
                stopped = "time"
        return bool(stopped)

    def trained_model(model, chars, per_epoch: int):
        """The adapters put on `model` -> its tokenizer, what is trained, the base weights of the decoder's
        own that are, the optimizer (with its rates halved every `s.decay` epochs of `per_epoch` steps)."""
        tok = attach(model, base_tok, settings_dict, chars)
        params = _trainable(model, whole)
        base = {n: p.detach().clone() for n, p in params if _own(n)}
        groups = [{"params": [p for n, p in params if n not in base], "lr": s.lr}]
        if base:
            groups.append({"params": [p for n, p in params if n in base], "lr": s.whole_lr})
        opt = torch.optim.AdamW(groups, lr=s.lr, weight_decay=0.0)
        if s.decay:
            half = s.decay * max(1, per_epoch)
            opt = (opt, torch.optim.lr_scheduler.LambdaLR(opt, lambda n: 0.5 ** (n / half)))
        return tok, params, base, opt

    def step(model, tok, params, opt, batch):
        opt, decay = opt if isinstance(opt, tuple) else (opt, None)
        loss = _loss(model, tok, batch, amp, s.feature_dropout)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for _, p in params], 1.0)
        opt.step()
        if decay is not None:
            decay.step()
        return float(loss.detach())

    def drawn_and_copies(tok):
        """The drawn crops trained on (three in four; the fourth is the plain-print check) and the varied
        copies of the training corrections and of those."""
        out = [_Cached(f, shape, tok.encode(text), text) for k, ((f, shape), (_, text))
               in enumerate(zip(drawn_feats, drawn)) if k % 4 != 3]
        return out + [_Cached(f, shape, tok.encode(text), text) for (f, shape), (_, text) in zip(variant_feats, variants)]

    per_epoch = math.ceil((len(train_idx) + sum(k % 4 != 3 for k in range(len(drawn))) + len(variants))
                          / s.batch_size)  # the training items' steps an epoch (below)
    tok, params, base, opt = trained_model(model, new_chars, per_epoch)
    items = [_Cached(f, shape, tok.encode(x.text), x.text) for (f, shape), x in zip(feats, corrections)]
    train_items = [items[i] for i in train_idx] + drawn_and_copies(tok)
    held_items = [items[i] for i in held_idx]
    gen = torch.Generator().manual_seed(s.seed)
    best = (heldout_before, {n: p.detach().clone() for n, p in params}, 0, plain_before)
    history: list[dict] = []
    stale, lowest, best_score = 0, heldout_before, heldout_before
    epochs_run = 0
    steps_per_epoch = per_epoch
    for epoch in range(1, s.epochs + 1 if train else 1):
        model.train()
        order = torch.randperm(len(train_items), generator=gen).tolist()
        total, done = 0.0, 0
        for k in range(steps_per_epoch):
            check()
            if halted():
                break
            step_begun = time.perf_counter()
            total += step(model, tok, params, opt, [train_items[i] for i in order[k * s.batch_size:(k + 1) * s.batch_size]])
            step_s = time.perf_counter() - step_begun
            done += 1
            report("training", (epoch - 1) * steps_per_epoch + k + 1, s.epochs * steps_per_epoch)
        model.eval()
        if not done:  # stopped before this epoch's first step: nothing new to read
            break
        begun = time.perf_counter()
        cer = _cer(model, tok, held_items, s.max_new_tokens, check, amp=amp)
        plain = _cer(model, tok, plain_check, s.max_new_tokens, check, amp=amp) if plain_check else None
        read_s = time.perf_counter() - begun
        rate = (opt[0] if isinstance(opt, tuple) else opt).param_groups[0]["lr"]  # the adapters' rate now
        history.append({"epoch": epoch, "loss": round(total / done, 4), "heldout_cer": cer, "plain_cer": plain,
                        "lr": rate, **({"steps": done} if done < steps_per_epoch else {})})
        epochs_run = epoch
        rise = 0.0 if plain is None else max(0.0, plain - plain_before - s.max_confirmation_rise)
        if cer + rise < best_score:
            best, best_score = (cer, {n: p.detach().clone() for n, p in params}, epoch, plain), cer + rise
        if cer < lowest:  # patience: epochs since the held-out corrections were last read better
            lowest, stale = cer, 0
        else:
            stale += 1
            if stale >= s.patience:
                break
        if stopped:
            break
    _scale_adapters(params, best[1], 1.0, base)  # the best epoch's weights back
    model.eval()
    scale = 1.0
    if s.scales and best[2] > 0:  # the trained change scaled back toward the base model, when it reads better
        score_kept = best_score
        for factor in s.scales:
            _scale_adapters(params, best[1], factor, base)
            cer = _cer(model, tok, held_items, s.max_new_tokens, check, amp=amp)
            plain = _cer(model, tok, plain_check, s.max_new_tokens, check, amp=amp) if plain_check else None
            rise = 0.0 if plain is None else max(0.0, plain - plain_before - s.max_confirmation_rise)
            history.append({"scale": factor, "heldout_cer": cer, "plain_cer": plain})
            if cer + rise < score_kept:
                score_kept, scale, best = cer + rise, factor, (cer, best[1], best[2], plain)
        _scale_adapters(params, best[1], scale, base)
    heldout_after = best[0]
    confirm_after = None
    if conf_cache:
        conf_items = [_Cached(c.feats, c.shape, [], c.text) for c in conf_cache]
        confirm_after = _cer(model, tok, conf_items, s.max_new_tokens, check, amp=amp)
    kept, reason = True, ""
    # better only with plain print read worse: the penalty kept every epoch out
    at_lowest = next((h["plain_cer"] for h in history if h.get("heldout_cer") == lowest), None)
    if heldout_after >= heldout_before and lowest < heldout_before and plain_before is not None \
            and at_lowest is not None:
        kept, reason = False, (f"the held-out corrections were read better (CER {100 * heldout_before:.1f} % -> "
                               f"{100 * lowest:.1f} % at best) only with plain print read worse (drawn crops: "
                               f"{100 * plain_before:.1f} % -> {100 * at_lowest:.1f} %, more than "
                               f"{100 * s.max_confirmation_rise:.1f} points up)")
    elif stopped and not epochs_run:
        kept, reason = False, ("stopped before the first training step: nothing was learned"
                               + (f" (the time limit of {s.max_minutes:g} min was taken by looking at the crops; "
                                  "allow more time)" if stopped == "time" else ""))
    elif heldout_after >= heldout_before:
        kept, reason = False, (f"the held-out corrections were not read better (CER {100 * heldout_before:.1f} % "
                               f"-> {100 * heldout_after:.1f} %)")
    elif confirm_after is not None and confirm_after > confirm_before + s.max_confirmation_rise:
        kept, reason = False, (f"the confirmed blocks were read worse (CER {100 * confirm_before:.1f} % -> "
                               f"{100 * confirm_after:.1f} %, more than {100 * s.max_confirmation_rise:.1f} "
                               "points up)")
    trained_on = train_idx
    refit, first = "", None
    if kept and looked.refit and train and best[2] > 0:
        refit = "you asked to stop before it" if stopped == "asked" else (
            f"the time limit of {s.max_minutes:g} min left no time for it" if stopped == "time" else "")
        # every correction, the drawn crops and copies the first training had, the held-out ones' copies
        steps = math.ceil((len(corrections) + len(train_items) - len(train_idx) + len(looked.held_variants))
                          / s.batch_size)
        if not refit and s.max_minutes and (time.perf_counter() - started + best[2] * steps * step_s + read_s
                                            + confirm_s >= 60 * s.max_minutes):
            refit = f"the time limit of {s.max_minutes:g} min left no time for it"
        if not refit:
            chars = unknown_chars(base_tok, [x.text for x in corrections])
            again = copy.deepcopy(recognizer.model)
            again.eval()
            for p in again.parameters():
                p.requires_grad_(False)
            tok2, params2, base2, opt2 = trained_model(again, chars, steps)
            all_items = [_Cached(f, shape, tok2.encode(x.text), x.text) for (f, shape), x in zip(feats, corrections)]
            all_items += drawn_and_copies(tok2)
            all_items += [_Cached(f, shape, tok2.encode(text), text)
                          for (f, shape), (_, text) in zip(held_variant_feats, looked.held_variants)]
            gen2 = torch.Generator().manual_seed(s.seed)
            for epoch in range(best[2]):
                again.train()
                order = torch.randperm(len(all_items), generator=gen2).tolist()
                for k in range(steps):
                    check()
                    if stop is not None and stop():
                        refit = "stopped when you asked"
                        break
                    step(again, tok2, params2, opt2, [all_items[i] for i in order[k * s.batch_size:(k + 1) * s.batch_size]])
                    report("again", epoch * steps + k + 1, best[2] * steps)
                if refit:
                    break
        if not refit:
            again.eval()
            trained2 = {n: p.detach().clone() for n, p in params2}
            _scale_adapters(params2, trained2, scale, base2)
            plain2 = _cer(again, tok2, plain_check, s.max_new_tokens, check, amp=amp) if plain_check else None
            confirm2 = _cer(again, tok2, [_Cached(c.feats, c.shape, [], c.text) for c in conf_cache],
                            s.max_new_tokens, check, amp=amp) if conf_cache else None
            history.append({"again": best[2], "plain_cer": plain2, "confirm_cer": confirm2})
            refit = refit_verdict(plain_before, best[3], plain2, confirm_before, confirm2, s.max_confirmation_rise)
            if refit == "kept":
                first = (model, params, base, new_chars, train_idx)
                model, tok, params, base, new_chars = again, tok2, params2, base2, chars
                trained_on, confirm_after = list(range(len(corrections))), confirm2
                best = (best[0], trained2, best[2], plain2)
    volumes = len({x.volume for x in corrections if x.volume})
    result = AdaptResult(kept, reason, heldout_before, heldout_after, confirm_before, confirm_after,
                         len(corrections), len(train_idx), len(held_idx), len(confirmations), volumes, epochs_run,
                         new_chars, time.perf_counter() - started, len(drawn) - len(plain_check), plain_before,
                         best[3], len(plain_check), copies * len(train_idx), scale, None, history, whole, stopped,
                         s.max_minutes, [corrections[i] for i in held_idx], remembered=remembered, joined=looked.joined,
                         refit=refit, refit_epochs=best[2] if refit else 0)
    if kept:
        sha = model_sha256(recognizer.folder) if recognizer.folder else ""
        report_dict = {k: v for k, v in result.as_dict().items() if k != "history"}

        def adapter_of(model, params, base, chars, trained_idx) -> Adapter:
            from peft import get_peft_model_state_dict

            lora = {k: v.detach().float().cpu().clone() for k, v in get_peft_model_state_dict(model.decoder).items()}
            dec = model.decoder
            embed = dec.token_embeddings.extra.detach().float().cpu() if chars else None
            head = dec.output_head.extra.detach().float().cpu() if chars else None
            own = dict(params)
            weights = {n[len("decoder."):]: (own[n].detach().float() - b.float()).cpu() for n, b in base.items()}
            trained_pages = sorted({page_key(corrections[i].group) for i in trained_idx})  # weigh_against_previous's
            return Adapter(sha, recognizer.base_name, settings_dict, chars, lora, embed, head,
                           {**report_dict, "trained_pages": trained_pages}, name,
                           weights={k: v for k, v in weights.items() if v.any()})

        result.adapter = adapter_of(model, params, base, new_chars, trained_on)
        if first is not None:
            result.checked_adapter = adapter_of(*first)

        def judge(adapter: Adapter) -> tuple[float | None, float | None]:
            """The plain-print check's and the confirmations' CER read with `adapter` on the base model."""
            judged = copy.deepcopy(recognizer.model)
            judged.eval()
            tok_j = load_into(judged, base_tok, adapter)
            plain_j = _cer(judged, tok_j, plain_check, s.max_new_tokens, check, amp=amp) if plain_check else None
            conf_j = _cer(judged, tok_j, [_Cached(c.feats, c.shape, [], c.text) for c in conf_cache],
                          s.max_new_tokens, check, amp=amp) if conf_cache else None
            return plain_j, conf_j

        result.judge = judge
    return result


def refit_verdict(plain_before: float | None, plain_first: float | None, plain_again: float | None,
                  confirm_before: float | None, confirm_again: float | None, rise: float) -> str:
    """Whether the adapter trained again on every correction replaces the first one, which the held-out
    corrections judged: "kept" when the plain-print check reads no worse than with the first one (or within
    `rise` of before adapting) and the confirmations within `rise` of before; otherwise why not."""
    if plain_again is not None and plain_before is not None and plain_first is not None \
            and plain_again > max(plain_first, plain_before + rise):
        return (f"plain print was read worse (drawn crops: {100 * plain_first:.1f} % with the first training, "
                f"{100 * plain_again:.1f} % with it); the first is the adapter")
    if confirm_again is not None and confirm_before is not None and confirm_again > confirm_before + rise:
        return (f"the confirmed blocks were read worse (CER {100 * confirm_before:.1f} % -> {100 * confirm_again:.1f} "
                f"%, more than {100 * rise:.1f} points up); the first training is the adapter")
    return "kept"

