"""Tokenizers of the Hayai family (docs/ocr-engine.md, tokenizers)."""
from __future__ import annotations

from pathlib import Path

from app.errors import ModelError
from app.textfile import read_json_file


class ByteTokenizer:
    """v2-alpha: bytes 0-255 are ids 0-255; BOS 256, EOS 257, PAD 258, UNK 259."""

    bos_id, eos_id, pad_id, unk_id = 256, 257, 258, 259
    vocab_size = 260

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))

    def decode(self, ids: list[int]) -> str:
        """Byte ids -> text; specials skipped; invalid UTF-8 becomes U+FFFD, never an error."""
        return bytes(i for i in ids if 0 <= i < 256).decode("utf-8", errors="replace")


class JsonTokenizer:
    """v2 / v2.5: tokenizer.json through the `tokenizers` library; special ids resolved from the
    names in tokenizer_config.json (fallback bos 1 / eos 2 / pad = eos when a name is missing)."""

    def __init__(self, folder: Path):
        from tokenizers import Tokenizer

        path = Path(folder) / "tokenizer.json"
        if not path.is_file():
            raise ModelError(f"{path}: tokenizer.json is missing from the model folder. Re-download the model "
                             "(`hayai-desktop models download nova`).")
        try:
            self._tok = Tokenizer.from_file(str(path))
        except Exception as exc:  # the tokenizers library raises plain Exception subclasses
            raise ModelError(f"{path}: tokenizer.json cannot be read ({exc}). Re-download the model.") from None
        names = {}
        cfg_path = Path(folder) / "tokenizer_config.json"
        if cfg_path.is_file():
            names = read_json_file(cfg_path, "tokenizer configuration", "Re-download the model.", ModelError)
        self.bos_id = self._special(names.get("bos_token"), 1)
        self.eos_id = self._special(names.get("eos_token"), 2)
        self.pad_id = self._special(names.get("pad_token"), self.eos_id)
        self.unk_id = self._special(names.get("unk_token"), None)
        self.vocab_size = self._tok.get_vocab_size(with_added_tokens=True)

    def _special(self, name, fallback):
        if isinstance(name, dict):  # {"content": "<bos>", ...}
            name = name.get("content")
        if isinstance(name, str):
            tid = self._tok.token_to_id(name)
            if tid is not None:
                return tid
        return fallback

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        return self._tok.decode(list(ids), skip_special_tokens=True)


def load_tokenizer(folder: Path, byte_vocab: bool):
    return ByteTokenizer() if byte_vocab else JsonTokenizer(folder)
