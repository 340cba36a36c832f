"""Write Hayai checkpoints in the published on-disk layout (config.json, model.safetensors with
`vision_encoder.vision_model.` names, tokenizer.json + tokenizer_config.json). Used for the demo
models the project trains and for the tiny random models of the tests: both then go through the
same loader as the published checkpoints."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import torch

from app.ocr.config import OPTIONAL_KEYS, HayaiConfig

SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")
PUBLISHED_SIZES = HayaiConfig("v2")


def config_json(cfg: HayaiConfig) -> dict:
    """The published config.json keys, plus optional size keys where they differ from published."""
    raw = {"architectures": ["HayaiModel"], "model_type": "hayai", "dtype": "float32",
           "d_ffn": cfg.d_ffn, "d_model": cfg.d_model, "d_vision": cfg.d_vision, "n_layers": cfg.n_layers,
           "vocab_size": cfg.vocab_size}
    values = asdict(cfg)
    for key in OPTIONAL_KEYS:
        if values[key] != getattr(PUBLISHED_SIZES, key):
            raw[key] = values[key]
    return raw


def write_char_tokenizer(folder: Path, chars: list[str]) -> int:
    """A character-level tokenizer.json: the characters, then <pad> <bos> <eos> <unk> (the
    published order of specials). Returns the vocabulary size."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab: dict[str, int] = {}
    for ch in chars:
        vocab.setdefault(ch, len(vocab))
    for tok in SPECIALS:
        vocab[tok] = len(vocab)
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    tokenizer.decoder = decoders.Fuse()
    tokenizer.add_special_tokens(list(SPECIALS))
    tokenizer.save(str(Path(folder) / "tokenizer.json"))
    (Path(folder) / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>",
         "tokenizer_class": "TokenizersBackend"}, indent=2))
    return len(vocab)


def save_checkpoint(model, folder, vision_prefix: str = "vision_encoder.vision_model.",
                    extras: dict[str, torch.Tensor] | None = None) -> Path:
    """model (HayaiModel) -> folder/model.safetensors + config.json (tokenizer written separately)."""
    from safetensors.torch import save_file

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    state = {}
    for key, tensor in model.state_dict().items():
        if key.startswith("vision_encoder."):
            key = vision_prefix + key[len("vision_encoder."):]
        state[key] = tensor.detach().float().cpu().contiguous()
    state.update(extras or {})
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(config_json(model.cfg), indent=2, sort_keys=True))
    return folder
