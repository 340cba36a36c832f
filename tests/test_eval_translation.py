"""`hayai-desktop eval-translation` (app/core/translation/evaluation.py): corpus chrF, BLEU and name
accuracy of a volume with known reference translations, in the OpenMantra annotation format.
A server that answers with the references scores 100; one that copies the source back scores
near 0 (its answers look untranslated and are not used). A small annotation is written here;
the real one (../shared/openmantra-dev, for our evaluation only) is used when it is there."""
import json

import pytest
from PIL import Image

from app.cli import main
from app.core.translation.evaluation import load_references, name_hits, reference_names
from tests.conftest import shared_dir

BOOKS = [
    ("book_a", [[("シオラ、おはよう！", "Morning, Siora!"), ("ミツキ、まって！", "Wait, Mitsuki!")],
                [("シオラはどこ？", "Where is Siora?"), ("しらない", "No idea.")]]),
    ("book_b", [[("ケンタ、いこう", "Let's go, Kenta."), ("うん", "Yeah.")],
                [("ケンタはつよい", "Kenta is strong."), ("ミツキもね", "So is Mitsuki.")]]),
]


def write_annotation(root):
    data = []
    for title, pages in BOOKS:
        out = []
        for i, lines in enumerate(pages):
            rel = f"images/{title}/ja/{i:03d}.jpg"
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (800, 1200), "white").save(root / rel)
            out.append({"page_index": i, "image_paths": {"ja": rel}, "frame": [],
                        "text": [{"x": 50 + 300 * j, "y": 100, "w": 200, "h": 300, "text_ja": ja, "text_en": en,
                                  "text_zh": ""} for j, (ja, en) in enumerate(lines)]})
        data.append({"book_title": title, "pages": out})
    (root / "annotation.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return root / "annotation.json"


def args_for(server, *extra):
    return ["--provider", "openai", "--base-url", server.base_url, "--model", "test-model", "--to", "en",
            "--use-env-key", *extra]


def scores(path):
    return {r["book"]: r for r in json.loads(path.read_text())["scores"]}


def test_names_are_the_recurring_capitalised_words():
    refs = ["Morning, Siora!", "Where is Siora?", "Wait, Mitsuki!", "What? No.", "What is this?"]
    assert reference_names(refs) == {"Siora"}
    assert name_hits(refs, ["Good morning, siora.", "Where's Shiora?", "", "", ""], {"Siora"}) == (1, 2)


def test_oracle_scores_100_and_echo_scores_0(fake_llm, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    ann = write_annotation(tmp_path)
    fake_llm.default = "oracle"
    fake_llm.oracle = {ja: en for _t, pages in BOOKS for lines in pages for ja, en in lines}
    assert main(["eval-translation", str(ann), *args_for(fake_llm), "--json", str(tmp_path / "o.json"),
                 "--save", str(tmp_path / "saved")]) == 0
    got = scores(tmp_path / "o.json")
    assert set(got) == {"book_a", "book_b", "all"}
    for row in got.values():
        assert row["chrf"] == pytest.approx(100.0) and row["bleu"] == pytest.approx(100.0)
    # names recur in a book: Siora (book a), Kenta (book b); Mitsuki is once in each, so no name
    assert got["book_a"]["names"] == "2/2" and got["book_b"]["names"] == "2/2" and got["all"]["names"] == "4/4"
    assert got["all"]["translated"] == 8
    out = capsys.readouterr().out
    assert "book_a" in out and "100.00" in out
    # the saved translations are scored again without a request
    fake_llm.seen.clear()
    assert main(["eval-translation", str(ann), "--translations", str(tmp_path / "saved"), "--json",
                 str(tmp_path / "again.json")]) == 0
    assert fake_llm.chats() == [] and scores(tmp_path / "again.json")["all"]["chrf"] == pytest.approx(100.0)
    # a server that copies the source back: nothing counts as a translation
    fake_llm.default = "echo"
    assert main(["eval-translation", str(ann), *args_for(fake_llm), "--json", str(tmp_path / "e.json")]) == 0
    echo = scores(tmp_path / "e.json")
    assert echo["all"]["chrf"] < 5 and echo["all"]["translated"] == 0 and echo["book_a"]["name_accuracy"] == 0.0


def test_bad_references_are_named(tmp_path):
    from app.errors import UserError

    (tmp_path / "annotation.json").write_text('{"not": "a list"}')
    with pytest.raises(UserError, match="annotation.json: an OpenMantra annotation is a JSON list"):
        load_references(tmp_path)
    with pytest.raises(UserError, match="no such annotation file"):
        load_references(tmp_path / "nope.json")


OPENMANTRA = shared_dir() / "openmantra-dev" / "annotation.json"


@pytest.mark.skipif(not OPENMANTRA.is_file(), reason="../shared/openmantra-dev is not laid out here")
def test_on_the_openmantra_dev_books(fake_llm, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    books = json.loads(OPENMANTRA.read_text(encoding="utf-8"))
    fake_llm.oracle = {t["text_ja"]: t["text_en"] for b in books for p in b["pages"][:3] for t in p["text"]}
    fake_llm.default = "oracle"
    assert main(["eval-translation", str(OPENMANTRA), "--pages", "3", *args_for(fake_llm, "--page-image", "off"),
                 "--json", str(tmp_path / "o.json")]) == 0
    oracle = scores(tmp_path / "o.json")
    assert oracle["all"]["chrf"] > 99.0 and oracle["all"]["name_accuracy"] in (None, 1.0)
    fake_llm.default = "echo"
    assert main(["eval-translation", str(OPENMANTRA), "--pages", "3", *args_for(fake_llm, "--page-image", "off"),
                 "--json", str(tmp_path / "e.json")]) == 0
    assert scores(tmp_path / "e.json")["all"]["chrf"] < 10
