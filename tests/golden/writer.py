"""Real-size Hayai checkpoints with random weights in the published on-disk layout, and the
golden crops: what tests/test_golden.py reads with the app's engine and compares, token for
token, with the lists in expected.json beside this file.

The lists were produced by the published inference path (transformers' SigLIP2 processor and
tower, the model card's greedy generate loop, float32 on the CPU, each crop decoded alone,
8 new tokens) for these exact weights: seed 7, every tensor drawn in turn from one
`torch.Generator` in the order `published_shapes` lists them. So the writer's key order and
initialisation are part of the test data: change either and the lists no longer apply (the
cache key below then changes too, and the checkpoint's sha256 check in the test fails).

    write_checkpoint(folder, variant, seed) -> folder      # nova | v2 | alpha, ~600 MB
    cached_checkpoint(variant, seed) -> folder             # the same, kept in the test cache
    golden_crops(seed) -> [PIL.Image]                      # four crops, sides not multiples of 16

The published layout in short: the SigLIP2-base vision tower under
`vision_encoder.vision_model.` (a 768-wide patch embedding over 16x16x3 patches, a 16x16
position table, 12 encoder layers of width 768 with 3072-wide MLPs, the final layer norm, and
the pooling head that Hayai never uses); then the decoder: token embeddings (vocab x 512),
the projector (DSC for v2.5: layer norm over 4 x 768 merged patches, two bias-free linears,
an RMS norm; MLP for v2 / alpha: two linears with biases), 12 layers of grouped-query
attention (8 query heads, 2 key/value heads of 64, q/k RMS norms) and SwiGLU (2048), residual
scales except in alpha, the final norm, and an untied output head except in alpha.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch
from PIL import Image

PATCH = 16
VISION_WIDTH, VISION_MLP, VISION_LAYERS, POSITIONS = 768, 3072, 12, 256
D_MODEL, D_FFN, N_LAYERS, HEAD, Q_HEADS, KV_HEADS = 512, 2048, 12, 64, 8, 2
IDS_CLASSES = 226  # v2.5's auxiliary IDS head (training only; the engine ignores it)
VISION_PREFIX = "vision_encoder.vision_model."


def vocab_size(variant: str) -> int:
    return 260 if variant == "alpha" else 16004


def published_shapes(variant: str) -> dict[str, tuple[int, ...]]:
    """Every tensor of a published checkpoint, name -> shape, in the order the weights are drawn."""
    h, m = VISION_WIDTH, VISION_MLP
    p = VISION_PREFIX
    shapes: dict[str, tuple[int, ...]] = {
        p + "embeddings.patch_embedding.weight": (h, 3 * PATCH * PATCH),
        p + "embeddings.patch_embedding.bias": (h,),
        p + "embeddings.position_embedding.weight": (POSITIONS, h),
        p + "post_layernorm.weight": (h,),
        p + "post_layernorm.bias": (h,),
        p + "head.probe": (1, 1, h),
        p + "head.attention.in_proj_weight": (3 * h, h),
        p + "head.attention.in_proj_bias": (3 * h,),
        p + "head.attention.out_proj.weight": (h, h),
        p + "head.attention.out_proj.bias": (h,),
        p + "head.layernorm.weight": (h,),
        p + "head.layernorm.bias": (h,),
        p + "head.mlp.fc1.weight": (m, h),
        p + "head.mlp.fc1.bias": (m,),
        p + "head.mlp.fc2.weight": (h, m),
        p + "head.mlp.fc2.bias": (h,),
    }
    for n in range(VISION_LAYERS):
        layer = f"{p}encoder.layers.{n}."
        for norm in ("layer_norm1", "layer_norm2"):
            shapes[f"{layer}{norm}.weight"] = (h,)
            shapes[f"{layer}{norm}.bias"] = (h,)
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            shapes[f"{layer}self_attn.{proj}.weight"] = (h, h)
            shapes[f"{layer}self_attn.{proj}.bias"] = (h,)
        shapes[f"{layer}mlp.fc1.weight"] = (m, h)
        shapes[f"{layer}mlp.fc1.bias"] = (m,)
        shapes[f"{layer}mlp.fc2.weight"] = (h, m)
        shapes[f"{layer}mlp.fc2.bias"] = (h,)

    d, v = D_MODEL, vocab_size(variant)
    shapes["decoder.token_embeddings.weight"] = (v, d)
    shapes["decoder.final_norm.weight"] = (d,)
    if variant != "alpha":
        shapes["decoder.output_head.weight"] = (v, d)
    if variant == "nova":
        shapes.update({
            "decoder.projector.norm.weight": (4 * h,),
            "decoder.projector.norm.bias": (4 * h,),
            "decoder.projector.mlp.0.weight": (d, 4 * h),
            "decoder.projector.mlp.2.weight": (d, d),
            "decoder.projector.out_norm.weight": (d,),
            "decoder.ids_norm.weight": (d,),
            "decoder.ids_head.weight": (IDS_CLASSES, d),
        })
    else:
        shapes.update({
            "decoder.projector.proj.0.weight": (d, h),
            "decoder.projector.proj.0.bias": (d,),
            "decoder.projector.proj.2.weight": (d, d),
            "decoder.projector.proj.2.bias": (d,),
        })
    for n in range(N_LAYERS):
        layer = f"decoder.layers.{n}."
        shapes[layer + "attn_norm.weight"] = (d,)
        shapes[layer + "ffn_norm.weight"] = (d,)
        shapes[layer + "attn.w_q.weight"] = (Q_HEADS * HEAD, d)
        shapes[layer + "attn.w_k.weight"] = (KV_HEADS * HEAD, d)
        shapes[layer + "attn.w_v.weight"] = (KV_HEADS * HEAD, d)
        shapes[layer + "attn.w_o.weight"] = (d, Q_HEADS * HEAD)
        shapes[layer + "attn.q_norm.weight"] = (HEAD,)
        shapes[layer + "attn.k_norm.weight"] = (HEAD,)
        shapes[layer + "ffn.w_gate.weight"] = (D_FFN, d)
        shapes[layer + "ffn.w_up.weight"] = (D_FFN, d)
        shapes[layer + "ffn.w_down.weight"] = (d, D_FFN)
        if variant != "alpha":
            shapes[layer + "attn_res_scale"] = (d,)
            shapes[layer + "ffn_res_scale"] = (d,)
    return shapes


def _draw(name: str, shape: tuple[int, ...], g: torch.Generator) -> torch.Tensor:
    """One tensor's random values. Unit-scale embeddings, head and final norm (zero mean) keep a
    random model from repeating its last token, so greedy outputs vary over every decode step;
    small biases; norms and scales near 1; other matrices scaled by 1/sqrt(fan-in) (0.02 for
    the position table and the pooling probe)."""
    if name in ("decoder.token_embeddings.weight", "decoder.output_head.weight", "decoder.final_norm.weight"):
        return torch.randn(shape, generator=g)
    if name.endswith("bias"):
        return torch.randn(shape, generator=g) * 0.02
    is_norm = name.endswith("norm.weight") or "layer_norm" in name or "layernorm" in name
    if len(shape) == 1 or "res_scale" in name or is_norm:
        return 1.0 + torch.randn(shape, generator=g) * 0.1
    std = 0.02 if ("embedding" in name or "probe" in name) else 1.0 / math.sqrt(shape[-1])
    return torch.randn(shape, generator=g) * std


def _tokenizer_chars(n_regular: int) -> list[str]:
    """Printable ASCII, hiragana, katakana, then CJK ideographs: the first n_regular of them."""
    ranges = [(0x21, 0x7F), (0x3041, 0x3097), (0x30A1, 0x30FB), (0x4E00, 0x9FFF)]
    return [chr(c) for lo, hi in ranges for c in range(lo, hi)][:n_regular]


def write_checkpoint(out, variant: str = "nova", seed: int = 7) -> Path:
    """config.json, model.safetensors (float32) and, except for alpha, a character-level
    tokenizer with the published special ids (<pad> 16000, <bos> 16001, <eos> 16002, <unk> 16003)."""
    from safetensors.torch import save_file

    from app.ocr.checkpoint import write_char_tokenizer

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    g = torch.Generator().manual_seed(seed)
    state = {k: _draw(k, s, g).float().contiguous() for k, s in published_shapes(variant).items()}
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    config = {"architectures": ["HayaiModel"],
              "auto_map": {"AutoConfig": "configuration_hayai.HayaiConfig", "AutoModel": "modeling_hayai.HayaiModel"},
              "d_ffn": D_FFN, "d_model": D_MODEL, "d_vision": VISION_WIDTH,
              "dtype": "float32", "model_type": "hayai", "n_layers": N_LAYERS, "transformers_version": "5.0.0",
              "vocab_size": vocab_size(variant)}
    (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True))
    if variant != "alpha":
        size = write_char_tokenizer(out, _tokenizer_chars(vocab_size(variant) - 4))
        assert size == vocab_size(variant), size
    return out


def cache_root() -> Path:
    """$HAYAI_TEST_CACHE, else ~/.cache/hayai-desktop-tests (the folder `make llama-server` uses)."""
    env = os.environ.get("HAYAI_TEST_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "hayai-desktop-tests"


def cache_key(variant: str, seed: int) -> str:
    """Changes whenever this writer or the app's tokenizer writer changes, or the inputs do."""
    from app.ocr import checkpoint

    h = hashlib.sha256()
    for source in (Path(__file__), Path(checkpoint.__file__)):
        h.update(source.read_bytes())
    h.update(f"{variant}:{seed}".encode())
    return h.hexdigest()[:16]


def cached_checkpoint(variant: str, seed: int = 7) -> Path:
    """The checkpoint in the test cache (written once, ~600 MB each), moved into place whole;
    test processes running side by side (pytest-xdist) write it once between them."""
    from filelock import FileLock

    folder = cache_root() / "golden" / f"{variant}-seed{seed}-{cache_key(variant, seed)}"
    if (folder / "model.safetensors").is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder.parent / f".{variant}-seed{seed}.lock")):
        if (folder / "model.safetensors").is_file():  # written by another process meanwhile
            return folder
        for old in folder.parent.glob(f"{variant}-seed{seed}-*"):  # an older writer's files
            shutil.rmtree(old, ignore_errors=True)
        work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".writing-"))
        try:
            write_checkpoint(work, variant, seed)
            os.replace(work, folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return folder


def golden_crops(seed: int = 7) -> list[Image.Image]:
    """Blocky random crops (h, w) = (37, 211), (300, 80), (120, 900), (64, 64), so the NaFlex
    resize scales up and down and meets sides that are not multiples of 16."""
    rng = np.random.default_rng(seed)
    crops = []
    for h, w in [(37, 211), (300, 80), (120, 900), (64, 64)]:
        cells = rng.integers(0, 256, size=(max(1, h // 6), max(1, w // 6), 3), dtype=np.uint8)
        crops.append(Image.fromarray(cells).resize((w, h), Image.NEAREST))
    return crops
