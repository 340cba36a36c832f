"""A tiny MarianMT model built in the tests: random weights, sentencepiece vocabularies trained
on a few lines, saved in the Hugging Face Hub layout of Helsinki-NLP/opus-mt-* (config.json,
source.spm, target.spm, vocab.json, model.safetensors)."""
from __future__ import annotations

import io
import json
from pathlib import Path

JA = ["こんにちは、元気ですか", "おはようございます", "ありがとうございました", "今日は天気がいいですね",
      "タナカさんはやさしい", "ユキ、まって！", "なに？", "さようなら、また明日"]
EN = ["hello, how are you", "good morning", "thank you very much", "the weather is nice today",
      "Tanaka is kind", "Yuki, wait!", "what?", "goodbye, see you tomorrow"]


def _spm(lines: list[str], size: int) -> bytes:
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines * 4), model_writer=buf, vocab_size=size,
                                   model_type="unigram", character_coverage=1.0, hard_vocab_limit=False,
                                   minloglevel=2, bos_id=-1, eos_id=-1, unk_id=0, num_threads=1)
    return buf.getvalue()


def write_tiny_marian(folder: Path, seed: int = 0, d_model: int = 16) -> dict[str, bytes]:
    """Write the model into `folder`; returns {file name: bytes} (for a fake Hub)."""
    import sentencepiece as spm
    import torch
    from transformers import MarianConfig, MarianMTModel

    folder.mkdir(parents=True, exist_ok=True)
    source, target = _spm(JA, 80), _spm(EN, 60)
    vocab = {"</s>": 0, "<unk>": 1}
    for data in (source, target):
        sp = spm.SentencePieceProcessor(model_proto=data)
        for i in range(sp.get_piece_size()):
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    vocab["<pad>"] = len(vocab)
    (folder / "source.spm").write_bytes(source)
    (folder / "target.spm").write_bytes(target)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    config = MarianConfig(vocab_size=len(vocab), d_model=d_model, encoder_layers=1, decoder_layers=1,
                          encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=2 * d_model,
                          decoder_ffn_dim=2 * d_model, max_position_embeddings=128, pad_token_id=vocab["<pad>"],
                          eos_token_id=0, decoder_start_token_id=vocab["<pad>"])
    torch.manual_seed(seed)
    MarianMTModel(config).save_pretrained(folder, safe_serialization=True)
    # the published folders carry a two-key tokenizer_config.json (44 bytes) beside the vocabularies
    (folder / "tokenizer_config.json").write_text('{"target_lang": "eng", "source_lang": "jpn"}', encoding="utf-8")
    names = ("config.json", "generation_config.json", "source.spm", "target.spm", "vocab.json",
             "tokenizer_config.json", "model.safetensors")
    return {n: (folder / n).read_bytes() for n in names}
