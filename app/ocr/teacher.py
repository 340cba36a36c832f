"""Teacher-forced training forward of a Hayai model (what tools/train_recognizer.py trains the
demo model with and app.ocr.adapt adapts a model with).

The forward runs the same modules, RoPE angles and attention mask as the decode loop in
app/ocr/generate.py, over the whole sequence at once:

    cache positions  [vision 0..M-1 | BOS at M | t_1 at M+1 | ... | t_n at M+n]
    targets                          t_1         t_2            EOS

so the logits at text position s equal those greedy decoding computes at step s
(tests/test_demo_recognizer.py checks that the argmax matches greedy's tokens).
"""
from __future__ import annotations

import torch

from app.ocr import generate
from app.ocr.model import HayaiModel, rope_frequencies

IGNORE = -100  # target id that the loss skips (padding after EOS)


def text_batch(token_lists: list[list[int]], bos_id: int, eos_id: int, pad_id: int,
               device=None) -> tuple[torch.Tensor, torch.Tensor]:
    """Token ids per crop -> (inputs (B, L), targets (B, L)), L = longest + 1.

    inputs = [BOS, t_1..t_n, PAD...]; targets = [t_1..t_n, EOS, IGNORE...].
    """
    L = max(len(t) for t in token_lists) + 1
    inputs = torch.full((len(token_lists), L), pad_id, dtype=torch.long)
    targets = torch.full((len(token_lists), L), IGNORE, dtype=torch.long)
    for b, toks in enumerate(token_lists):
        n = len(toks)
        inputs[b, 0] = bos_id
        inputs[b, 1:n + 1] = torch.tensor(toks, dtype=torch.long)
        targets[b, :n] = torch.tensor(toks, dtype=torch.long)
        targets[b, n] = eos_id
    return inputs.to(device), targets.to(device)


def forward_logits(model: HayaiModel, prefix: generate.Prefix, inputs: torch.Tensor) -> torch.Tensor:
    """Logits (B, L, V) float32 of every text position for inputs (B, L) = [BOS, t_1, ...].

    One pass over [prefix, text] with cache positions 0..M+L-1 and the decode loop's mask:
    vision tokens see the valid vision tokens, text sees valid vision tokens and text up to itself.
    """
    cfg = model.cfg
    B, M, _ = prefix.embeds.shape
    L = inputs.shape[1]
    device = prefix.embeds.device
    freqs = rope_frequencies(cfg, device)
    x = torch.cat((prefix.embeds, model.decoder.token_embeddings(inputs).to(prefix.embeds.dtype)), dim=1)
    text = generate._text_angles(torch.arange(L, device=device), freqs)[None].expand(B, -1, -1)
    angles = torch.cat((prefix.angles, text), dim=1)  # (B, M+L, E/2)
    key_valid = torch.cat((prefix.valid, torch.ones(B, L, dtype=torch.bool, device=device)), dim=1)
    mask = generate._attention_mask(key_valid, M, 0, M + L)  # (B, 1, M+L, M+L)
    cos, sin = angles.cos()[:, None], angles.sin()[:, None]  # (B, 1, M+L, E/2)
    S = M + L
    caches = [(x.new_zeros(B, cfg.n_kv_heads, S, cfg.head_dim), x.new_zeros(B, cfg.n_kv_heads, S, cfg.head_dim))
              for _ in range(cfg.n_layers)]
    h = model.decoder(x, cos, sin, mask, caches, 0)  # (B, M+L, D)
    return model.decoder.logits(h[:, M:])  # (B, L, V)


