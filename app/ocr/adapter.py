"""The adapter as a part of the model (no Qt): the file a user owns (LoRA weights, new
characters' rows, for a small model the change of its decoder's own weights, the base model's
identity and the settings, as safetensors), the new characters' token ids and rows, and putting
an adapter on a model or switching it off. Reading with an adapter needs only this module;
app.ocr.adapt trains one."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from app.errors import ModelError, UserError

FORMAT = "hayai-ocr-adapter"
VERSION = 2  # 2: may carry `weights` (the decoder's own weights' change); a file without them is written as 1
DECODER_TARGETS = ("w_q", "w_k", "w_v", "w_o", "w_gate", "w_up", "w_down")
PROJECTOR_TARGETS = r"projector\.(mlp|proj)\.[02]"


# --------------------------------------------------------------------------- new characters

class AdaptedTokenizer:
    """The model's tokenizer plus the adapter's new characters, one id each after the model's
    vocabulary. Runs of known characters are encoded and decoded by the base tokenizer."""

    def __init__(self, base, new_chars: str, first_id: int):
        self.base = base
        self.bos_id, self.eos_id, self.pad_id = base.bos_id, base.eos_id, base.pad_id
        self.unk_id = getattr(base, "unk_id", None)
        self.new = {c: first_id + i for i, c in enumerate(new_chars)}
        self.chars = {i: c for c, i in self.new.items()}
        self.vocab_size = first_id + len(new_chars)

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        run = ""
        for ch in text:
            if ch in self.new:
                if run:
                    ids += self.base.encode(run)
                    run = ""
                ids.append(self.new[ch])
            else:
                run += ch
        return ids + (self.base.encode(run) if run else [])

    def decode(self, ids) -> str:
        out, run = [], []
        for i in ids:
            if i in self.chars:
                if run:
                    out.append(self.base.decode(run))
                    run = []
                out.append(self.chars[i])
            else:
                run.append(i)
        if run:
            out.append(self.base.decode(run))
        return "".join(out)


def unknown_chars(tokenizer, texts) -> str:
    """The characters of `texts` the tokenizer cannot write (unknown id, or not given back), in
    order of first appearance."""
    seen: dict[str, None] = {}
    unk = getattr(tokenizer, "unk_id", None)
    for text in texts:
        for ch in text:
            if ch in seen or ch.isspace():
                continue
            ids = tokenizer.encode(ch)
            if not ids or (unk is not None and unk in ids) or tokenizer.decode(ids) != ch:
                seen[ch] = None
    return "".join(seen)


class ExtendedEmbedding(nn.Module):
    """The token embeddings with the adapter's new rows after them."""

    def __init__(self, base: nn.Embedding, rows: torch.Tensor):
        super().__init__()
        self.base = base
        self.extra = nn.Parameter(rows.to(base.weight.dtype).to(base.weight.device))
        self.enabled = True

    @property
    def weight(self) -> torch.Tensor:  # the model's device and dtype are read from it
        return self.base.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return F.embedding(ids, torch.cat((self.base.weight, self.extra.to(self.base.weight.dtype))))


class ExtendedHead(nn.Module):
    """The output head with one logit more for each new character."""

    def __init__(self, base: nn.Module, rows: torch.Tensor):
        super().__init__()
        self.base = base
        weight = base.weight
        self.extra = nn.Parameter(rows.to(weight.dtype).to(weight.device))
        self.enabled = True  # off: the base head's logits only (the base model exactly)

    @property
    def weight(self) -> torch.Tensor:
        return self.base.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.enabled:
            return self.base(x)
        return torch.cat((self.base(x), F.linear(x, self.extra.to(x.dtype))), dim=-1)


# --------------------------------------------------------------------------- the adapter file

@dataclass
class Adapter:
    """What adapting learned: the LoRA weights (peft's names, relative to the decoder), the new
    characters' embedding and head rows, for a small model the change of the decoder's own
    weights (`weights`: trained minus base, names relative to the decoder with the adapters on),
    the base model's identity and the settings."""

    base_sha256: str
    base_name: str
    settings: dict
    new_chars: str
    lora: dict[str, torch.Tensor]
    embed_rows: torch.Tensor | None = None
    head_rows: torch.Tensor | None = None
    report: dict = field(default_factory=dict)
    name: str = ""  # what it was adapted to (a series' or a volume's name)
    path: Path | None = None
    weights: dict[str, torch.Tensor] = field(default_factory=dict)

    def save(self, path) -> Path:
        from safetensors.torch import save

        from app.atomic import atomic_open

        path = Path(path)
        tensors = {f"lora.{k}": v.detach().float().cpu().contiguous() for k, v in self.lora.items()}
        if self.embed_rows is not None:
            tensors["new_tokens.embed"] = self.embed_rows.detach().float().cpu().contiguous()
        if self.head_rows is not None:
            tensors["new_tokens.head"] = self.head_rows.detach().float().cpu().contiguous()
        tensors.update({f"weights.{k}": v.detach().float().cpu().contiguous() for k, v in self.weights.items()})
        meta = {"format": FORMAT, "version": str(VERSION if self.weights else 1), "base_sha256": self.base_sha256,
                "base_name": self.base_name, "name": self.name, "new_chars": self.new_chars,
                "settings": json.dumps(self.settings), "report": json.dumps(self.report, ensure_ascii=False)}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            data = save(tensors, metadata=meta)
            with atomic_open(path, binary=True) as f:
                f.write(data)
        except OSError as exc:
            raise UserError(f"{path}: cannot write the adapter ({exc.strerror or exc}). Choose another place "
                            "with --out, or free some disk space.") from exc
        self.path = path
        return path

    @staticmethod
    def load(path) -> Adapter:
        from safetensors import SafetensorError, safe_open

        path = Path(path)
        if not path.is_file():
            raise UserError(f"{path}: no such adapter file. Adapt the OCR first (`hayai-desktop adapt ...` or "
                            "Series > Teach the OCR my corrections).")
        try:
            with safe_open(str(path), framework="pt") as f:
                meta = f.metadata() or {}
                tensors = {k: f.get_tensor(k) for k in f.keys()}
        except (SafetensorError, OSError, ValueError) as exc:
            raise UserError(f"{path}: not a readable adapter file ({exc}). Adapt the OCR again.") from None
        if meta.get("format") != FORMAT:
            raise UserError(f"{path}: not a Hayai OCR adapter (no \"format\": \"{FORMAT}\" in its header).")
        if int(meta.get("version", "0")) > VERSION:
            raise UserError(f"{path}: made by a newer version of the app (adapter version {meta['version']}); "
                            "update the app to use it.")
        try:
            settings = json.loads(meta.get("settings") or "{}")
            report = json.loads(meta.get("report") or "{}")
        except ValueError as exc:
            raise UserError(f"{path}: the adapter's header is damaged ({exc}). Adapt the OCR again.") from None
        lora = {k[len("lora."):]: v for k, v in tensors.items() if k.startswith("lora.")}
        weights = {k[len("weights."):]: v for k, v in tensors.items() if k.startswith("weights.")}
        return Adapter(meta.get("base_sha256", ""), meta.get("base_name", ""), settings, meta.get("new_chars", ""),
                       lora, tensors.get("new_tokens.embed"), tensors.get("new_tokens.head"), report,
                       meta.get("name", ""), path, weights)

    def check_base(self, sha256: str, model_name: str) -> None:
        """ModelError when this adapter was made for another base model than the one of sha256."""
        if self.base_sha256 != sha256:
            where = f"{self.path}: " if self.path else ""
            raise ModelError(f"{where}this adapter was made for the OCR model {self.base_name or '?'} "
                             f"(sha256 {self.base_sha256[:12]}…), not for {model_name} (sha256 {sha256[:12]}…). "
                             "Choose the model it was made for, or adapt this model again.")


def model_sha256(folder: Path) -> str:
    """The identity of a model: the sha256 of its weights file."""
    from app.models.integrity import file_sha256

    return file_sha256(Path(folder) / "model.safetensors")


def _lora_config(settings: dict):
    from peft import LoraConfig

    targets = "|".join(DECODER_TARGETS)
    pattern = rf".*layers\.\d+\.(attn|ffn)\.({targets})"
    if settings.get("projector"):
        pattern = rf"({pattern})|(.*{PROJECTOR_TARGETS})"
    return LoraConfig(r=int(settings["rank"]), lora_alpha=int(settings["alpha"]), lora_dropout=0.0,
                      target_modules=pattern, bias="none")


def attach(model, tokenizer, settings: dict, new_chars: str, embed_rows=None, head_rows=None):
    """Put adapters (zero-initialised B: the model reads as before) and the new characters' rows
    on `model` in place -> the tokenizer that writes the new characters."""
    from peft import inject_adapter_in_model

    dec = model.decoder
    inject_adapter_in_model(_lora_config(settings), dec)
    if new_chars:
        if dec.output_head is None:
            raise ModelError("this model's output head is tied to its embeddings; new characters cannot be added")
        n, d = len(new_chars), model.cfg.d_model
        if embed_rows is None:
            g = torch.Generator().manual_seed(int(settings.get("seed", 0)))
            base = dec.token_embeddings.weight.detach().float().cpu()
            embed_rows = base.mean(0, keepdim=True) + base.std() * torch.randn(n, d, generator=g)
            head = dec.output_head.weight.detach().float().cpu()
            head_rows = head.mean(0, keepdim=True).expand(n, d).clone()
        dec.token_embeddings = ExtendedEmbedding(dec.token_embeddings, embed_rows)
        dec.output_head = ExtendedHead(dec.output_head, head_rows)
    return AdaptedTokenizer(tokenizer, new_chars, model.cfg.vocab_size) if new_chars else tokenizer


def set_adapters_enabled(model, enabled: bool) -> None:
    """Switch the LoRA layers on or off (off: each layer computes exactly its base layer, and
    the decoder's own weights an adapter changed are the base model's again, bit for bit)."""
    from peft.tuners.tuners_utils import BaseTunerLayer

    for module in model.modules():
        if isinstance(module, BaseTunerLayer):
            module.enable_adapters(enabled)
        elif isinstance(module, (ExtendedEmbedding, ExtendedHead)):
            module.enabled = enabled
    swapped = getattr(model.decoder, "adapted_weights", None)
    if swapped:
        params = dict(model.decoder.named_parameters())
        with torch.no_grad():
            for name, (base, adapted) in swapped.items():
                params[name].copy_(adapted if enabled else base)


def load_into(model, tokenizer, adapter: Adapter):
    """Put a saved adapter on `model` (in place) -> its tokenizer."""
    from peft import set_peft_model_state_dict

    tok = attach(model, tokenizer, adapter.settings, adapter.new_chars, adapter.embed_rows, adapter.head_rows)
    device = model.device
    dtype = model.decoder.layers[0].attn.w_q.base_layer.weight.dtype
    result = set_peft_model_state_dict(model.decoder, {k: v.to(device) for k, v in adapter.lora.items()})
    if getattr(result, "unexpected_keys", None):
        raise ModelError(f"{adapter.path}: the adapter does not fit this model (unexpected "
                         f"{', '.join(result.unexpected_keys[:3])}).")
    for name, p in model.decoder.named_parameters():
        if "lora_" in name:
            p.data = p.data.to(device=device, dtype=dtype)
    if adapter.weights:
        params = dict(model.decoder.named_parameters())
        missing = [k for k in adapter.weights if k not in params or params[k].shape != adapter.weights[k].shape]
        if missing:
            raise ModelError(f"{adapter.path}: the adapter does not fit this model (its weights {', '.join(missing[:3])}).")
        swapped = {}
        with torch.no_grad():
            for name, delta in adapter.weights.items():
                p = params[name]
                base = p.detach().cpu().clone()
                adapted = (base.float() + delta.float().cpu()).to(p.dtype)
                p.copy_(adapted)
                swapped[name] = (base, adapted)
        # what set_adapters_enabled swaps, kept on the CPU: they outlive a device the model leaves
        model.decoder.adapted_weights = swapped
    return tok
