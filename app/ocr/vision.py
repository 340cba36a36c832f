"""The SigLIP2 vision tower run on packed crops: no work on padding (docs/ocr-engine.md: a crop's pixels, features to decoder tokens).

`Siglip2VisionModel.forward` runs every crop padded to the patch budget, with the padding masked
as attention keys. Here the same modules (the same weights, the same operators) run on the
crops' real patches packed into one sequence: the embeddings, norms, linear layers and MLP on
the packed rows (one matrix product per layer for the whole batch, no padding rows), and the
attention crop by crop over the crop's own patches, so no crop ever sees another's (a crop's
features do not depend on its batch).

What the projector needs decides what is computed:
- DSC (v2.5): only the real patches; padding rows of the result are zero.
- MLP (v2, alpha): every one of the N tokens, padding included, goes into the prefix. All padding
  tokens of a crop have the same input (zero pixels, the first resized position) and attend the
  same real keys, so their outputs are equal: one padding query is computed per crop and copied
  to its padding rows.

In float32 the results equal the padded tower's value for value (tests/test_vision_packed.py;
the golden test checks the tokens).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from app.ocr.preprocess import PixelBatch


def packed_features(tower, batch: PixelBatch, padding_rows: bool) -> torch.Tensor:
    """The tower's last hidden state (B, N, C) for `batch`, computed without padding work.
    padding_rows: fill the padding rows too (MLP projectors), else leave them zero."""
    emb = tower.embeddings
    B, N, _ = batch.pixel_values.shape
    lengths = batch.pixel_attention_mask.sum(1).tolist()
    # per crop: its real patches, plus one padding query when the padding rows are wanted
    queries = [n + 1 if padding_rows and n < N else n for n in lengths]
    starts = [0]
    for q in queries:
        starts.append(starts[-1] + q)
    spans = list(zip(starts, queries))
    dtype = emb.patch_embedding.weight.dtype
    pixels = torch.cat([batch.pixel_values[b, :q] for b, q in enumerate(queries)])  # (T, P)
    grid = emb.position_embedding_size
    table = emb.position_embedding.weight.reshape(grid, grid, -1)
    positions = emb.resize_positional_embeddings(table, batch.spatial_shapes, max_length=N)
    x = emb.patch_embedding(pixels.to(dtype))
    x = x + torch.cat([positions[b, :q] for b, q in enumerate(queries)])  # (T, C)
    device = x.device
    # keys: a crop's real patches only (the padded tower's mask), as (B, 1, 1, N)
    keys = (torch.arange(N, device=device)[None] < torch.tensor(lengths, device=device)[:, None])[:, None, None]
    padded = x.new_zeros(B, N, 3 * x.shape[-1])  # q | k | v in the padded layout; padding rows stay zero
    for layer in tower.encoder.layers:
        x = _layer(layer, x, spans, keys, padded)
    x = tower.post_layernorm(x)
    out = x.new_zeros(B, N, x.shape[-1])
    for b, ((s, q), n) in enumerate(zip(spans, lengths)):
        out[b, :q] = x[s:s + q]
        if q > n:  # every padding row equals the crop's one padding query
            out[b, q:] = x[s + n]
    return out


def _qkv(attn, h: torch.Tensor) -> torch.Tensor:
    """q | k | v (T, 3C) in one matrix product where the projections are plain Linear layers
    (column for column the same sums as three products; the joined weight is kept while the
    weights it was made from are the model's); the int8 mode's quantized layers run one by one."""
    projs = (attn.q_proj, attn.k_proj, attn.v_proj)
    if not all(type(p) is torch.nn.Linear and p.bias is not None for p in projs):
        return torch.cat([p(h) for p in projs], dim=-1)
    key = tuple((p.weight.data_ptr(), p.bias.data_ptr(), p.weight.dtype, p.weight.device) for p in projs)
    cached = getattr(attn, "_hayai_qkv", None)
    if cached is None or cached[0] != key:
        cached = (key, torch.cat([p.weight for p in projs]), torch.cat([p.bias for p in projs]))
        attn._hayai_qkv = cached
    return F.linear(h, cached[1], cached[2])


def _layer(layer, x: torch.Tensor, spans: list[tuple[int, int]], keys: torch.Tensor,
           padded: torch.Tensor) -> torch.Tensor:
    """One Siglip2EncoderLayer on the packed rows x (T, C); crop b owns rows spans[b] = (start,
    count). The attention runs on the padded layout (padding rows zero, masked as keys), where
    the kernel sums exactly as in the padded tower; everything else runs on the T real rows."""
    attn = layer.self_attn
    B, N, _ = padded.shape
    heads, head_dim = attn.num_heads, attn.head_dim
    qkv = _qkv(attn, layer.layer_norm1(x))
    for b, (s, q) in enumerate(spans):
        padded[b, :q] = qkv[s:s + q]
    q, k, v = padded.view(B, N, 3, heads, head_dim).permute(2, 0, 3, 1, 4)  # each (B, H, N, E)
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=keys, scale=attn.scale).transpose(1, 2)  # (B, N, H, E)
    y = torch.cat([y[b, :q] for b, (_, q) in enumerate(spans)]).flatten(1)  # (T, C)
    x = x + attn.out_proj(y)
    return x + layer.mlp(layer.layer_norm2(x))
