"""Hayai OCR modules: SigLIP2 NaFlex vision tower (transformers), projectors, decoder.

Shapes: B crops, N patch budget, M vision tokens in the decoder prefix, T sequence length,
D = d_model, C = d_vision, H query heads, K key/value heads, E head size. See docs/ocr-engine.md (projector, decoder).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from app.ocr.config import HayaiConfig


def build_vision_tower(cfg: HayaiConfig) -> nn.Module:
    """SigLIP2 vision model from a local config (never fetched). State-dict names: embeddings.*,
    encoder.*, post_layernorm.* (transformers 5 has no vision_model. level)."""
    from transformers import Siglip2VisionConfig, Siglip2VisionModel

    vcfg = Siglip2VisionConfig(
        hidden_size=cfg.d_vision, intermediate_size=cfg.vision_intermediate,
        num_hidden_layers=cfg.vision_layers, num_attention_heads=cfg.vision_heads,
        patch_size=cfg.patch_size, num_patches=cfg.vision_position_grid ** 2, vision_use_head=False,
    )
    vcfg._attn_implementation = "sdpa"
    return Siglip2VisionModel(vcfg)


class RMSNorm(nn.Module):
    """RMSNorm computed in float32 (also under fp16 autocast: squared activations overflow fp16)."""

    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return (y * self.weight.float()).to(x.dtype)


class MLPProjector(nn.Module):
    """v2 / alpha: Linear -> GELU(erf) -> Linear over every vision token, padding included."""

    def __init__(self, cfg: HayaiConfig):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(cfg.d_vision, cfg.d_model), nn.GELU(),
                                  nn.Linear(cfg.d_model, cfg.d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, M, C) -> (B, M, D)
        return self.proj(x)


class DSCProjector(nn.Module):
    """v2.5 Nova: 2x2 pixel-unshuffled features -> LayerNorm -> Linear -> GELU -> Linear -> RMSNorm."""

    def __init__(self, cfg: HayaiConfig):
        super().__init__()
        self.norm = nn.LayerNorm(4 * cfg.d_vision, eps=1e-5)
        self.mlp = nn.Sequential(nn.Linear(4 * cfg.d_vision, cfg.d_model, bias=False), nn.GELU(),
                                 nn.Linear(cfg.d_model, cfg.d_model, bias=False))
        self.out_norm = RMSNorm(cfg.d_model, cfg.norm_eps)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, M, 4C) -> (B, M, D)
        return self.out_norm(self.mlp(self.norm(x)))


def rope_frequencies(cfg: HayaiConfig, device=None) -> torch.Tensor:
    """(E/4,) frequencies f_j = base^(-2j/(E/2)): half the pairs carry rows, half columns."""
    n_pairs = cfg.head_dim // 2
    exps = torch.arange(0, n_pairs, 2, dtype=torch.float32, device=device) / n_pairs
    return 1.0 / (cfg.rope_base ** exps)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate consecutive pairs (0-1, 2-3, ...). x (B, h, T, E); cos, sin (B, 1, T, E/2)."""
    a, b = x[..., 0::2].float(), x[..., 1::2].float()
    out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1)
    return out.flatten(-2).to(x.dtype)


class Attention(nn.Module):
    def __init__(self, cfg: HayaiConfig):
        super().__init__()
        self.n_heads, self.n_kv, self.head_dim = cfg.n_heads, cfg.n_kv_heads, cfg.head_dim
        self.w_q = nn.Linear(cfg.d_model, cfg.n_heads * cfg.head_dim, bias=False)
        self.w_k = nn.Linear(cfg.d_model, cfg.n_kv_heads * cfg.head_dim, bias=False)
        self.w_v = nn.Linear(cfg.d_model, cfg.n_kv_heads * cfg.head_dim, bias=False)
        self.w_o = nn.Linear(cfg.n_heads * cfg.head_dim, cfg.d_model, bias=False)
        self.q_norm = RMSNorm(cfg.head_dim, cfg.norm_eps)
        self.k_norm = RMSNorm(cfg.head_dim, cfg.norm_eps)

    def forward(self, x, cos, sin, mask, cache, start: int):
        """x (B, T, D) at cache positions [start, start+T); mask (B, 1, T, start+T) bool, True = attend.
        cache: (k, v) each (B, K, S, E), written in place."""
        B, T, _ = x.shape
        q = self.q_norm(self.w_q(x).view(B, T, self.n_heads, self.head_dim)).transpose(1, 2)  # (B, H, T, E)
        k = self.k_norm(self.w_k(x).view(B, T, self.n_kv, self.head_dim)).transpose(1, 2)  # (B, K, T, E)
        v = self.w_v(x).view(B, T, self.n_kv, self.head_dim).transpose(1, 2)  # (B, K, T, E)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        k_cache, v_cache = cache
        k_cache[:, :, start:start + T] = k
        v_cache[:, :, start:start + T] = v
        keys, values = k_cache[:, :, :start + T], v_cache[:, :, :start + T]
        # grouped-query attention: query head i reads key/value head i // (H / K), without copies
        y = F.scaled_dot_product_attention(q, keys.to(q.dtype), values.to(q.dtype), attn_mask=mask,
                                           enable_gqa=self.n_heads != self.n_kv)
        return self.w_o(y.transpose(1, 2).reshape(B, T, -1))


class SwiGLU(nn.Module):
    def __init__(self, cfg: HayaiConfig):
        super().__init__()
        self.clamp = cfg.swiglu_clamp
        self.w_gate = nn.Linear(cfg.d_model, cfg.d_ffn, bias=False)
        self.w_up = nn.Linear(cfg.d_model, cfg.d_ffn, bias=False)
        self.w_down = nn.Linear(cfg.d_ffn, cfg.d_model, bias=False)

    def forward(self, x):
        gate, up = self.w_gate(x), self.w_up(x)
        if self.clamp:  # v2-alpha
            gate, up = gate.clamp(max=10.0), up.clamp(-10.0, 10.0)
        return self.w_down(F.silu(gate) * up)


class DecoderLayer(nn.Module):
    def __init__(self, cfg: HayaiConfig):
        super().__init__()
        self.attn_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.attn = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.ffn = SwiGLU(cfg)
        if cfg.residual_scales:
            self.attn_res_scale = nn.Parameter(torch.ones(cfg.d_model))
            self.ffn_res_scale = nn.Parameter(torch.ones(cfg.d_model))
        else:
            self.attn_res_scale = self.ffn_res_scale = None

    def forward(self, x, cos, sin, mask, cache, start):
        h = self.attn(self.attn_norm(x), cos, sin, mask, cache, start)
        x = x + (h if self.attn_res_scale is None else self.attn_res_scale * h)
        h = self.ffn(self.ffn_norm(x))
        return x + (h if self.ffn_res_scale is None else self.ffn_res_scale * h)


class Decoder(nn.Module):
    def __init__(self, cfg: HayaiConfig):
        super().__init__()
        self.cfg = cfg
        self.token_embeddings = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.projector = DSCProjector(cfg) if cfg.projector == "dsc" else MLPProjector(cfg)
        self.layers = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_layers))
        self.final_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.output_head = None if cfg.tied_head else nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    def logits(self, x: torch.Tensor) -> torch.Tensor:  # (B, D) -> (B, V) float32
        x = self.final_norm(x)
        if self.output_head is None:  # tied to the embeddings (alpha)
            return F.linear(x, self.token_embeddings.weight.to(x.dtype)).float()
        return self.output_head(x).float()  # a module call, so int8 can swap the layer

    def forward(self, x, cos, sin, mask, caches, start):
        for layer, cache in zip(self.layers, caches):
            x = layer(x, cos, sin, mask, cache, start)
        return x


class HayaiModel(nn.Module):
    """vision_encoder + decoder, parameter names as in the published checkpoints (after the
    vision prefix is mapped, see loading.py)."""

    def __init__(self, cfg: HayaiConfig):
        super().__init__()
        self.cfg = cfg
        self.vision_encoder = build_vision_tower(cfg)
        self.decoder = Decoder(cfg)

    @property
    def device(self) -> torch.device:
        return self.decoder.token_embeddings.weight.device
