"""Hayai model configuration and variant detection.

The variant is decided from the checkpoint's **state-dict keys** (docs/ocr-engine.md, the family), never from
config.json alone. config.json gives the sizes: `vocab_size`, `d_model`, `d_vision`, `d_ffn`,
`n_layers`. The published head layout (8 query heads, 2 key/value heads of size 64, RoPE base
10000) and the SigLIP2-base vision tower are fixed; non-published (demo, test) models may state
other sizes with the optional keys listed in OPTIONAL_KEYS.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from app.errors import ModelError
from app.textfile import read_json_file

VARIANTS = ("nova", "v2", "alpha")

# Optional size keys a non-published config.json may carry (published ones have none of them).
OPTIONAL_KEYS = {
    "n_heads": "n_heads",
    "n_kv_heads": "n_kv_heads",
    "head_dim": "head_dim",
    "rope_base": "rope_base",
    "vision_layers": "vision_layers",
    "vision_heads": "vision_heads",
    "vision_intermediate": "vision_intermediate",
    "vision_position_grid": "vision_position_grid",
}


@dataclass(frozen=True)
class HayaiConfig:
    variant: str  # nova (v2.5, DSC projector) | v2 (MLP projector) | alpha (bytes, clamp, no scales)
    vocab_size: int = 16004
    d_model: int = 512
    d_vision: int = 768
    d_ffn: int = 2048
    n_layers: int = 12
    n_heads: int = 8
    n_kv_heads: int = 2
    head_dim: int = 64
    rope_base: float = 10000.0
    norm_eps: float = 1e-6
    tied_head: bool = False
    # SigLIP2 NaFlex vision tower (google/siglip2-base-patch16-naflex)
    vision_layers: int = 12
    vision_heads: int = 12
    vision_intermediate: int = 3072
    vision_position_grid: int = 16  # position table is grid x grid
    patch_size: int = 16

    @property
    def projector(self) -> str:
        return "dsc" if self.variant == "nova" else "mlp"

    @property
    def residual_scales(self) -> bool:
        return self.variant != "alpha"

    @property
    def swiglu_clamp(self) -> bool:
        return self.variant == "alpha"

    @property
    def byte_tokenizer(self) -> bool:
        return self.variant == "alpha"


def detect_variant(keys, source: str = "checkpoint") -> str:
    """nova / v2 / alpha from the state-dict keys: the DSC projector's weight means nova, the MLP
    projector's means v2 with residual scales and alpha without."""
    keys = set(keys)
    if "decoder.projector.mlp.0.weight" in keys:
        return "nova"
    if "decoder.projector.proj.0.weight" in keys:
        return "v2" if "decoder.layers.0.attn_res_scale" in keys else "alpha"
    raise ModelError(
        f"{source}: not a Hayai OCR checkpoint (no decoder.projector.mlp.0.weight or "
        "decoder.projector.proj.0.weight key). Choose a Hayai model folder, or download one with "
        "`hayai-desktop models download nova`."
    )


def read_config_json(path: Path) -> dict:
    data = read_json_file(path, "config.json in the model folder",
                          "Re-download the model (`hayai-desktop models download nova`).", ModelError)
    if not isinstance(data, dict):
        raise ModelError(f"{path}: config.json is not a JSON object. Re-download the model.")
    return data


def make_config(raw: dict, keys, source: str = "checkpoint") -> HayaiConfig:
    """Build the config from config.json values and the checkpoint keys."""
    variant = detect_variant(keys, source)
    known = {f.name for f in fields(HayaiConfig)}
    values = {}
    for name in ("vocab_size", "d_model", "d_vision", "d_ffn", "n_layers", *OPTIONAL_KEYS):
        if name in raw and name in known:
            try:
                values[name] = type(getattr(HayaiConfig("v2"), name))(raw[name])
            except (TypeError, ValueError):
                raise ModelError(f"{source}: config.json has an invalid {name!r}: {raw[name]!r}") from None
    if "vocab_size" not in raw and variant == "alpha":
        values["vocab_size"] = 260
    tied = "decoder.output_head.weight" not in set(keys)
    return HayaiConfig(variant=variant, tied_head=tied, **values)
