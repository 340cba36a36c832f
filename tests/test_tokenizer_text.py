import json

from app.ocr.testing import TINY_CHARS
from app.ocr.text import normalize, score
from app.ocr.tokenizer import ByteTokenizer, JsonTokenizer, load_tokenizer


def test_json_tokenizer_round_trip_and_specials(tiny_models):
    tok = load_tokenizer(tiny_models["nova"], byte_vocab=False)
    n = len(TINY_CHARS)
    assert (tok.pad_id, tok.bos_id, tok.eos_id, tok.unk_id) == (n, n + 1, n + 2, n + 3)
    text = "こんにちは!abc"
    ids = tok.encode(text)
    assert len(ids) == len(text) and tok.decode(ids) == text
    assert tok.decode([tok.bos_id, *ids, tok.eos_id, tok.pad_id]) == text  # specials skipped


def test_json_tokenizer_falls_back_when_names_are_missing(tiny_models, tmp_path):
    for name in ("tokenizer.json",):
        (tmp_path / name).write_bytes((tiny_models["v2"] / name).read_bytes())
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"bos_token": "<bos>"}))
    tok = JsonTokenizer(tmp_path)
    assert tok.bos_id == len(TINY_CHARS) + 1
    assert (tok.eos_id, tok.pad_id) == (2, 2)


def test_byte_tokenizer_round_trip_and_invalid_utf8():
    tok = ByteTokenizer()
    text = "「おはよう」 Hello 안녕 你好"
    assert tok.decode(tok.encode(text)) == text
    assert tok.decode([tok.bos_id, *tok.encode("ok"), tok.eos_id]) == "ok"
    assert tok.decode([0xE3, 0x81]) == "\ufffd"  # truncated sequence
    assert tok.decode([0xFF, 0x41, 0xC0, 0x80]) == "\ufffdA\ufffd\ufffd"


def test_normalization_follows_the_card():
    assert normalize("ｈｅｌｌｏ\r\n\tworld") == "hello world"  # NFKC, control runs
    assert normalize("こんにちは　世界") == "こんにちは世界"  # space between CJK removed
    assert normalize("  a   b  ") == "a b"
    assert normalize("한국 어") == "한국어"


def test_cer_and_exact_match():
    s = score(["abc", "xyz", "こんにちは"], ["abd", "xyz", "こんにちわ"])
    assert s.edits == 2 and s.ref_chars == 11
    assert abs(s.cer - 2 / 11) < 1e-12
    assert abs(s.exact_match - 1 / 3) < 1e-12
