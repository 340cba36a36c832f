"""The decode loop, kept apart from the modules (docs/ocr-engine.md: features to decoder tokens, the decoder, generation).

Sequence in cache positions: [vision tokens 0..M-1, BOS at M, token fed at step s at M+s].
Vision tokens see every (valid) vision token and no text; text sees every valid vision token
and the text up to itself. Padding between crops of a batch is masked as keys, so a crop's
tokens do not depend on its neighbours.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.profiler import record_function

from app.errors import Cancelled
from app.ocr.model import HayaiModel, rope_frequencies
from app.ocr.preprocess import PixelBatch
from app.ocr.vision import packed_features

PACKED_MIN_PADDING = 0.10  # share of padding rows from which the packed tower is used


@dataclass
class Prefix:
    embeds: torch.Tensor  # (B, M, D) projected vision tokens
    angles: torch.Tensor  # (B, M, E/2) RoPE pair angles, 0 for padding
    valid: torch.Tensor  # (B, M) bool, False for keys nobody may attend


def _grid_angles(rows: torch.Tensor, cols: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """(n,) rows, (n,) cols -> (n, E/2) angles [y*f_0..y*f_k, x*f_0..x*f_k]."""
    return torch.cat((rows.float()[:, None] * freqs, cols.float()[:, None] * freqs), dim=-1)


def vision_features(model: HayaiModel, batch: PixelBatch) -> torch.Tensor:
    """The vision tower's last hidden state (B, N, C).

    Normally one call for the batch: transformers' padded tower, or, when at least
    PACKED_MIN_PADDING of the batch's rows are padding, the crops' real patches packed together
    (app.ocr.vision: no work on padding, the same values). The app's crops fill the budget up to
    the grid's rounding (2-5 % padding), where the packing's copies ate its gain in
    bench/ocr_efficiency.py (docs/performance.md). A model whose `vision_per_crop` is set (int8: activations
    are quantized with one scale per call) runs each crop on its own, so a crop's features do
    not depend on its neighbours; the DSC projector then needs only the real patches, so the
    padding is not computed at all (rows past a crop's patches are zero)."""
    if not getattr(model, "vision_per_crop", False):
        mask = batch.pixel_attention_mask
        if mask.numel() and float(mask.float().mean()) <= 1 - PACKED_MIN_PADDING:
            return packed_features(model.vision_encoder, batch, padding_rows=model.cfg.projector != "dsc")
        return model.vision_encoder(pixel_values=batch.pixel_values, pixel_attention_mask=batch.pixel_attention_mask,
                                    spatial_shapes=batch.spatial_shapes).last_hidden_state
    B, N, _ = batch.pixel_values.shape
    out = None
    for b, (rows, cols) in enumerate(batch.spatial_shapes.tolist()):
        n = rows * cols if model.cfg.projector == "dsc" else N
        feats = model.vision_encoder(pixel_values=batch.pixel_values[b:b + 1, :n],
                                     pixel_attention_mask=batch.pixel_attention_mask[b:b + 1, :n],
                                     spatial_shapes=batch.spatial_shapes[b:b + 1]).last_hidden_state  # (1, n, C)
        if out is None:
            out = feats.new_zeros(B, N, feats.shape[-1])
        out[b, :n] = feats[0]
    return out


@torch.no_grad()
def encode_prefix(model: HayaiModel, batch: PixelBatch) -> Prefix:
    batch = batch.to(model.device)
    with record_function("hayai.vision_tower"):
        feats = vision_features(model, batch)  # (B, N, C)
    return project_features(model, feats, batch.spatial_shapes)


def project_features(model: HayaiModel, feats: torch.Tensor, spatial_shapes: torch.Tensor) -> Prefix:
    """The vision tower's features (B, N, C) of crops with these patch grids (B, 2) -> the
    decoder's prefix. Apart from the tower so that adapting (app.ocr.adapt) can run the tower
    once per crop and the projector with gradients."""
    cfg = model.cfg
    device = feats.device
    B, N, C = feats.shape
    freqs = rope_frequencies(cfg, device)
    shapes = spatial_shapes.tolist()
    if cfg.projector == "mlp":
        # every one of the N tokens, padding included, goes into the prefix (as trained)
        idx = torch.arange(N, device=device)
        angles = torch.zeros(B, N, cfg.head_dim // 2, device=device)
        for b, (rows, cols) in enumerate(shapes):
            n = rows * cols
            angles[b, :n] = _grid_angles(idx[:n] // cols, idx[:n] % cols, freqs)
        valid = torch.ones(B, N, dtype=torch.bool, device=device)
        with record_function("hayai.projector"):
            return Prefix(model.decoder.projector(feats), angles, valid)

    # DSC: valid features as an (h, w) grid, replicate-padded to even sides, 2x2 pixel-unshuffle
    grids, lengths = [], []
    for b, (rows, cols) in enumerate(shapes):
        g = feats[b, : rows * cols].reshape(rows, cols, C).permute(2, 0, 1)[None]  # (1, C, h, w)
        g = F.pad(g, (0, cols % 2, 0, rows % 2), mode="replicate")
        g = F.pixel_unshuffle(g, 2)  # (1, 4C, h2, w2), channel c*4 + dy*2 + dx
        h2, w2 = g.shape[-2:]
        grids.append((g.flatten(2).transpose(1, 2)[0], h2, w2))  # (h2*w2, 4C) row-major
        lengths.append(h2 * w2)
    M = max(lengths)
    tokens = feats.new_zeros(B, M, 4 * C)
    angles = torch.zeros(B, M, cfg.head_dim // 2, device=device)
    valid = torch.zeros(B, M, dtype=torch.bool, device=device)
    for b, (tok, h2, w2) in enumerate(grids):
        n = h2 * w2
        tokens[b, :n] = tok
        idx = torch.arange(n, device=device)
        angles[b, :n] = _grid_angles(idx // w2, idx % w2, freqs)
        valid[b, :n] = True
    with record_function("hayai.projector"):
        return Prefix(model.decoder.projector(tokens), angles, valid)


def _text_angles(t: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """(T,) text positions -> (T, E/2): the same position on both halves."""
    a = t.float()[:, None] * freqs
    return torch.cat((a, a), dim=-1)


def _attention_mask(key_valid: torch.Tensor, M: int, start: int, T: int) -> torch.Tensor:
    """(B, 1, T, start+T) bool for queries at positions [start, start+T)."""
    S = start + T
    i = torch.arange(start, S, device=key_valid.device)[:, None]
    j = torch.arange(S, device=key_valid.device)[None, :]
    allowed = torch.where(i < M, j < M, j <= i)  # (T, S)
    return allowed[None, None] & key_valid[:, None, None, :S]


class _State:
    """Preallocated key/value cache and key validity for a batch being decoded."""

    def __init__(self, model: HayaiModel, prefix: Prefix, length: int):
        cfg = model.cfg
        B, M, _ = prefix.embeds.shape
        dtype = prefix.embeds.dtype
        self.M = M
        self.caches = [
            (prefix.embeds.new_zeros(B, cfg.n_kv_heads, length, cfg.head_dim, dtype=dtype),
             prefix.embeds.new_zeros(B, cfg.n_kv_heads, length, cfg.head_dim, dtype=dtype))
            for _ in range(cfg.n_layers)
        ]
        self.key_valid = torch.zeros(B, length, dtype=torch.bool, device=prefix.embeds.device)
        self.key_valid[:, :M] = prefix.valid
        # rotary table of the text positions 0 .. length - M (BOS at 0), computed once: (L, E/2)
        text = _text_angles(torch.arange(length - M + 1, device=prefix.embeds.device),
                            rope_frequencies(cfg, prefix.embeds.device))
        self.text_cos, self.text_sin = text.cos(), text.sin()

    def select(self, rows: torch.Tensor) -> None:
        """Keep only these batch rows (finished rows dropped, beams reordered)."""
        self.caches = [(k.index_select(0, rows), v.index_select(0, rows)) for k, v in self.caches]
        self.key_valid = self.key_valid.index_select(0, rows)


def _run(model: HayaiModel, state: _State, x: torch.Tensor, angles: torch.Tensor, start: int) -> torch.Tensor:
    """Feed x (B, T, D) at positions [start, start+T); returns logits of the last position (B, V)."""
    T = x.shape[1]
    state.key_valid[:, start:start + T] |= torch.arange(start, start + T, device=x.device) >= state.M
    mask = _attention_mask(state.key_valid, state.M, start, T)
    cos, sin = angles.cos()[:, None], angles.sin()[:, None]  # (B, 1, T, E/2)
    h = model.decoder(x, cos, sin, mask, state.caches, start)
    return model.decoder.logits(h[:, -1])


@record_function("hayai.prefill")
def _prefill(model, state: _State, prefix: Prefix, bos_id: int) -> torch.Tensor:
    B = prefix.embeds.shape[0]
    freqs = rope_frequencies(model.cfg, prefix.embeds.device)
    bos = model.decoder.token_embeddings(torch.full((B, 1), bos_id, device=prefix.embeds.device))
    x = torch.cat((prefix.embeds, bos.to(prefix.embeds.dtype)), dim=1)
    text = _text_angles(torch.zeros(1, device=x.device), freqs).expand(B, 1, -1)
    return _run(model, state, x, torch.cat((prefix.angles, text), dim=1), 0)


@record_function("hayai.decode_step")
def _step(model, state: _State, tokens: torch.Tensor, s: int) -> torch.Tensor:
    """Feed the token chosen at step s (B,) at text position s. The rotary angles come from the
    state's table and the mask is the keys' validity itself (a text token sees every valid key
    before it): no per-step tables or masks to build."""
    B = len(tokens)
    start = state.M + s
    x = model.decoder.token_embeddings(tokens[:, None])
    state.key_valid[:, start] = True
    mask = state.key_valid[:, None, None, :start + 1]  # (B, 1, 1, S)
    cos = state.text_cos[s].expand(B, 1, 1, -1)  # (B, 1, 1, E/2)
    sin = state.text_sin[s].expand(B, 1, 1, -1)
    h = model.decoder(x, cos, sin, mask, state.caches, start)
    return model.decoder.logits(h[:, -1])


class CpuShare:
    """How much of its threads' time this process got while it ran the vision tower and the
    prefill: CPU seconds / (wall seconds x threads), about 1.0 on an idle machine."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def share(self) -> float:
        wall = (time.perf_counter() - self.wall) * torch.get_num_threads()
        return (time.process_time() - self.cpu) / wall if wall > 0 else 1.0


CONTENDED_SHARE = 0.8  # below this the CPU is shared with other busy programs


@contextlib.contextmanager
def step_threads(device: torch.device, cpu_share: float):
    """The threads of the decode steps on the CPU. Their matrix products are small (a row per
    crop). On an idle CPU every thread helps a little; on a CPU shared with other busy programs
    every step waits for the thread that was descheduled, which made the steps 5-10x slower on
    this project's shared 2-core machine (bench/ocr_profile.py). So the steps keep every thread
    when the vision tower and prefill of the same batch got them (cpu_share, see CpuShare), and
    run on one thread otherwise. Which threads compute a step does not change its result."""
    threads = torch.get_num_threads()
    if device.type != "cpu" or threads == 1 or cpu_share >= CONTENDED_SHARE:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def apply_repetition_penalty(logits: torch.Tensor, history: torch.Tensor, penalty: float) -> torch.Tensor:
    """HF semantics: over the ids seen so far (BOS included) divide positive logits, multiply negative."""
    if penalty == 1.0:
        return logits
    score = logits.gather(1, history)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return logits.scatter(1, history, score)


@torch.no_grad()
def greedy(model: HayaiModel, batch: PixelBatch, bos_id: int, stop_ids: tuple[int, ...],
           max_new_tokens: int = 128, repetition_penalty: float = 1.0,
           cancel: Callable[[], bool] | None = None) -> list[list[int]]:
    """Greedy decoding with a preallocated cache. Returns the generated ids per crop, stop
    tokens removed. Finished rows leave the batch as it goes."""
    started = CpuShare()
    prefix = encode_prefix(model, batch)
    return greedy_prefix(model, prefix, bos_id, stop_ids, max_new_tokens, repetition_penalty, cancel, started)


@torch.no_grad()
def greedy_prefix(model: HayaiModel, prefix: Prefix, bos_id: int, stop_ids: tuple[int, ...],
                  max_new_tokens: int = 128, repetition_penalty: float = 1.0,
                  cancel: Callable[[], bool] | None = None, started: CpuShare | None = None) -> list[list[int]]:
    """`greedy` from a prefix already encoded (adapting decodes cached features again and again)."""
    started = started or CpuShare()
    B = prefix.embeds.shape[0]
    device = prefix.embeds.device
    results: list[list[int]] = [[] for _ in range(B)]
    if max_new_tokens <= 0:
        return results
    state = _State(model, prefix, prefix.embeds.shape[1] + max_new_tokens)
    logits = _prefill(model, state, prefix, bos_id)
    cpu_share = started.share()
    rows = torch.arange(B, device=device)  # original index of each live row
    history = torch.full((B, max_new_tokens + 1), bos_id, device=device)
    stops = torch.tensor(stop_ids, device=device)
    with step_threads(device, cpu_share):
        for s in range(1, max_new_tokens + 1):
            if cancel is not None and cancel():
                raise Cancelled("recognition cancelled")
            tokens = apply_repetition_penalty(logits, history[:, :s], repetition_penalty).argmax(-1)  # (b,)
            history[:, s] = tokens
            done = torch.isin(tokens, stops)
            for r, tok, d in zip(rows.tolist(), tokens.tolist(), done.tolist()):
                if not d:
                    results[r].append(tok)
            if s == max_new_tokens or bool(done.all()):
                break
            if bool(done.any()):
                keep = (~done).nonzero().squeeze(1)
                state.select(keep)
                rows, tokens, history = rows[keep], tokens[keep], history[keep]
            logits = _step(model, state, tokens, s)
    return results


@torch.no_grad()
def forward_uncached(model: HayaiModel, prefix: Prefix, bos_id: int, tokens: list[int]) -> torch.Tensor:
    """Logits of the last position of [prefix, BOS, tokens] computed from scratch (no cache reuse).
    For one crop (B = 1); the reference the cached path is checked and benchmarked against."""
    freqs = rope_frequencies(model.cfg, prefix.embeds.device)
    ids = torch.tensor([[bos_id, *tokens]], device=prefix.embeds.device)
    x = torch.cat((prefix.embeds, model.decoder.token_embeddings(ids)), dim=1)
    text = _text_angles(torch.arange(ids.shape[1], device=x.device), freqs)[None]
    state = _State(model, prefix, x.shape[1])
    return _run(model, state, x, torch.cat((prefix.angles, text), dim=1), 0)


@torch.no_grad()
def greedy_uncached(model: HayaiModel, batch: PixelBatch, bos_id: int, stop_ids: tuple[int, ...],
                    max_new_tokens: int = 128) -> list[list[int]]:
    """Greedy decoding that recomputes the whole sequence at every step (baseline, tests)."""
    results = []
    for b in range(batch.pixel_values.shape[0]):
        prefix = encode_prefix(model, batch.rows(b, b + 1))
        tokens: list[int] = []
        for _ in range(max_new_tokens):
            tok = int(forward_uncached(model, prefix, bos_id, tokens).argmax(-1))
            if tok in stop_ids:
                break
            tokens.append(tok)
        results.append(tokens)
    return results


@torch.no_grad()
def beam_search(model: HayaiModel, batch: PixelBatch, bos_id: int, stop_ids: tuple[int, ...],
                max_new_tokens: int = 128, num_beams: int = 4, length_penalty: float = 1.0,
                cancel: Callable[[], bool] | None = None) -> list[list[int]]:
    """Beam search, one crop at a time: 2 x beams candidates a step; finished hypotheses scored
    by log-probability / length ** length_penalty (length counts the stop token)."""
    results = []
    for b in range(batch.pixel_values.shape[0]):
        one = PixelBatch(batch.pixel_values[b:b + 1].expand(num_beams, -1, -1),
                         batch.pixel_attention_mask[b:b + 1].expand(num_beams, -1),
                         batch.spatial_shapes[b:b + 1].expand(num_beams, -1))
        results.append(_beam_one(model, one, bos_id, stop_ids, max_new_tokens, num_beams, length_penalty, cancel))
    return results


def _beam_one(model, batch, bos_id, stop_ids, max_new_tokens, k, length_penalty, cancel):
    started = CpuShare()
    prefix = encode_prefix(model, batch)
    device = prefix.embeds.device
    state = _State(model, prefix, prefix.embeds.shape[1] + max_new_tokens)
    logits = _prefill(model, state, prefix, bos_id)
    scores = torch.full((k,), float("-inf"), device=device)
    scores[0] = 0.0  # all beams start identical: expand only the first
    seqs: list[list[int]] = [[] for _ in range(k)]
    finished: list[tuple[float, list[int]]] = []
    with step_threads(device, started.share()):
        for s in range(1, max_new_tokens + 1):
            if cancel is not None and cancel():
                raise Cancelled("recognition cancelled")
            logp = F.log_softmax(logits.float(), dim=-1) + scores[:, None]  # (k, V)
            top, idx = logp.flatten().topk(2 * k)
            vocab = logp.shape[1]
            beams, next_scores, next_tokens, next_seqs = [], [], [], []
            for sc, i in zip(top.tolist(), idx.tolist()):
                beam, tok = divmod(i, vocab)
                if tok in stop_ids:
                    finished.append((sc / (s ** length_penalty), seqs[beam]))
                    continue
                beams.append(beam)
                next_scores.append(sc)
                next_tokens.append(tok)
                next_seqs.append(seqs[beam] + [tok])
                if len(beams) == k:
                    break
            best_running = max(next_scores) / (s ** length_penalty) if next_scores else float("-inf")
            if len(finished) >= k and max(f[0] for f in finished) >= best_running:
                break
            if s == max_new_tokens or not beams:
                finished.extend((sc / (s ** length_penalty), sq) for sc, sq in zip(next_scores, next_seqs))
                break
            state.select(torch.tensor(beams, device=device))
            scores = torch.tensor(next_scores, device=device)
            seqs = next_seqs
            logits = _step(model, state, torch.tensor(next_tokens, device=device), s)
    return max(finished, key=lambda f: f[0])[1] if finished else []
