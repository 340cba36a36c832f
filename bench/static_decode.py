"""A decode step with static shapes, the form CUDA graphs need (bench/gpu_check.py tries it).

`app.ocr.generate` slices the key/value cache to the current length and drops finished rows, so
every step has new shapes. Here the batch is fixed, the cache is attended over its whole length
with a mask, and the new key/value pair is written at a position held in a tensor
(`index_copy_`), so one captured step can be replayed for every position. On the CPU it runs
eagerly and must give the tokens `generate.greedy` gives (checked by gpu_check.py).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from app.ocr import generate
from app.ocr.model import apply_rope, rope_frequencies


class StaticDecoder:
    """Greedy decoding of one batch, every row for exactly `steps` tokens (no stop token)."""

    def __init__(self, model, prefix: generate.Prefix, bos_id: int, steps: int):
        self.model, self.steps = model, steps
        self.state = generate._State(model, prefix, prefix.embeds.shape[1] + steps)
        self.M = prefix.embeds.shape[1]
        self.length = self.M + steps
        device = prefix.embeds.device
        self.logits = generate._prefill(model, self.state, prefix, bos_id)  # (B, V) float32
        B = prefix.embeds.shape[0]
        self.token = torch.zeros(B, dtype=torch.long, device=device)  # static inputs of a step
        self.pos = torch.zeros(1, dtype=torch.long, device=device)  # text position s
        self.freqs = rope_frequencies(model.cfg, device)
        self.positions = torch.arange(self.length, device=device)

    @torch.no_grad()
    def step(self) -> torch.Tensor:
        """Feed self.token at text position self.pos; returns the logits (B, V)."""
        m, st = self.model, self.state
        cache_pos = self.pos + self.M  # (1,)
        a = self.pos.float()[:, None] * self.freqs  # (1, E/4)
        angles = torch.cat((a, a), dim=-1)  # (1, E/2)
        cos, sin = angles.cos()[None, None], angles.sin()[None, None]  # (1, 1, 1, E/2)
        visible = st.key_valid | (self.positions >= self.M) & (self.positions <= cache_pos)  # (B, L)
        mask = visible[:, None, None, :]
        x = m.decoder.token_embeddings(self.token[:, None])
        for layer, (k_cache, v_cache) in zip(m.decoder.layers, st.caches):
            att = layer.attn
            B = x.shape[0]
            h = layer.attn_norm(x)
            q = att.q_norm(att.w_q(h).view(B, 1, att.n_heads, att.head_dim)).transpose(1, 2)
            k = att.k_norm(att.w_k(h).view(B, 1, att.n_kv, att.head_dim)).transpose(1, 2)
            v = att.w_v(h).view(B, 1, att.n_kv, att.head_dim).transpose(1, 2)
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
            k_cache.index_copy_(2, cache_pos, k.to(k_cache.dtype))
            v_cache.index_copy_(2, cache_pos, v.to(v_cache.dtype))
            y = F.scaled_dot_product_attention(q, k_cache.to(q.dtype), v_cache.to(q.dtype), attn_mask=mask,
                                               enable_gqa=att.n_heads != att.n_kv)
            y = att.w_o(y.transpose(1, 2).reshape(B, 1, -1))
            x = x + (y if layer.attn_res_scale is None else layer.attn_res_scale * y)
            y = layer.ffn(layer.ffn_norm(x))
            x = x + (y if layer.ffn_res_scale is None else layer.ffn_res_scale * y)
        return m.decoder.logits(x[:, -1])

    def run(self, step_fn=None) -> list[list[int]]:
        """Greedy loop: argmax, then the step (or `step_fn`, e.g. a CUDA graph replay)."""
        step_fn = step_fn or self.step
        out = [[] for _ in range(self.token.shape[0])]
        logits = self.logits
        for s in range(1, self.steps + 1):
            self.token.copy_(logits.argmax(-1))
            for row, tok in zip(out, self.token.tolist()):
                row.append(tok)
            if s == self.steps:
                break
            self.pos.fill_(s)
            logits = step_fn()
        return out
