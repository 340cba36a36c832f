"""Answers that look degenerate (app.translate.judge): "The" for every block, one sentence for
many different lines. The run judges its answers as a whole: such answers are not counted,
asked for once more, reported with page and block numbers, flagged on the block, never fed into
the story memory (nor so into glossary proposals); the CLI says so and exits 1; the consistency
check lists them. Against the loopback server (tests/llm_server.py, behaviour "oracle")."""
from __future__ import annotations

import json

from app.cli import main
from app.core.exports import json_txt
from app.core.translation.consistency import check_text
from app.core.translation.glossary_proposals import proposals
from app.core.translation.run import TranslateOptions, translate_pages
from app.translate import TranslatorSettings, make_translator
from app.translate.judge import RunJudge, one_answer
from tests.llm_server import fake_translate, ids_in_order
from tests.translate_data import make_project

# four pages of real-length lines (what a small model answered "The" for, in a real volume)
PAGES = [
    ["このまちにはふるいとしょかんがある。", "わたしはまいにちそこへいく。", "タナカさん、まって！"],
    ["きょうもあめがふっている。", "ともだちがえきでまっているよ。", "はい"],
    ["でも、かさをわすれてしまった。", "あ、タナカさんがきた！", "かさ、かしてくれる？", "もちろん、いいよ、どうぞ。"],
    ["ありがとう、たすかったよ！", "じゃあ、いっしょにいこうか。", "うん", "ユキちゃん、またあした。"],
]
SLEEP = "I'm going to sleep now."


def translator(server, **kw):
    values = dict(base_url=server.base_url, model="test-model", timeout=5.0, max_retries=0, source_lang="ja")
    values.update(kw)
    return make_translator(TranslatorSettings(**values), server.key)


def test_the_judge_tells_degenerate_answers_from_short_honest_ones():
    assert one_answer("このまちにはふるいとしょかんがある。", "The")  # one word for a sentence
    assert one_answer("きのうのよる、ともだちといっしょにらーめんをたべた。", "I ate")  # far shorter
    assert one_answer("このまちにはふるいとしょかんがある。", "This town has an old library.") is None
    assert one_answer("ありがとうございました", "Thanks") is None and one_answer("はい", "Yes") is None
    # one long word is no sign: a cry drawn out, a line romanized
    assert one_answer("ああああああああああああああああ！", "Aaaaaaaaaaaaaaaaaah!") is None
    assert one_answer("きょうはいいてんきだねともだちよ", "Kyouhaiitenkidanetomodachiyo") is None
    judge = RunJudge()
    short = {"a": ("はい", "Yes"), "b": ("うん", "Yes"), "c": ("ええ", "Yes"), "d": ("そう", "Yes")}
    assert judge.degenerate(short) == {}  # short lines may well share a translation
    judge.accept({"x": (PAGES[0][0], SLEEP), "y": (PAGES[0][1], SLEEP)})
    verdict = judge.degenerate({"z": (PAGES[1][0], SLEEP + "  "), "w": (PAGES[1][1], "My friend is waiting.")})
    assert set(verdict) == {"z"} and "3 different lines" in verdict["z"]  # two on an earlier page + this one
    assert judge.degenerate({"z": (PAGES[0][0], SLEEP)}) == {}  # the same line again is not a different one


def test_a_page_of_short_bubbles_all_answered_the_is_judged_as_a_whole():
    # no line is long enough to tell alone; one answer for six different lines of six is the sign
    short = ["まって！", "えっ？", "なに？", "だれ？", "どこ？", "いくよ！"]
    verdict = RunJudge().degenerate({f"b{i}": (t, "The") for i, t in enumerate(short)})
    assert set(verdict) == {f"b{i}" for i in range(6)} and "6 different lines" in verdict["b0"]
    # "Yes" for five different short lines among a volume's honest answers is a few of many
    judge = RunJudge()
    judge.accept({f"h{i}": (t, f"Answer number {i}.") for i, t in enumerate(PAGES[0] + PAGES[2] + PAGES[3])})
    yes = {f"y{i}": (t, "Yes") for i, t in enumerate(["はい", "うん", "ええ", "そう", "ああ"])}
    assert judge.degenerate(yes) == {}
    judge.accept(yes)
    assert judge.degenerate({"z": ("うむ", "Yes.")}) == {}  # 6 of 17 answers: still not the run's one answer


def run(project, tr, **kw):
    outcomes = []
    for o in translate_pages(project, tr, **kw):
        project.pages[[p.name for p in project.pages].index(o.name)] = o.page
        if o.memory is not None:
            project.memory = o.memory
        outcomes.append(o)
    return outcomes


def test_the_everywhere_the_is_not_counted_asked_again_reported_and_kept_out_of_the_memory(fake_llm):
    fake_llm.default = "oracle"
    fake_llm.oracle = {t: "The" for page in PAGES for t in page}
    project = make_project(texts=PAGES)
    before = project.memory
    tr = translator(fake_llm)
    try:
        outcomes = run(project, tr, options=TranslateOptions(context_pages=1))
    finally:
        tr.close()
    # every long line; and by page 4 "The" is the run's one answer, so its short うん too (page 2's
    # はい -> "The" was taken before that showed: an answer accepted is not revisited)
    long_lines = {t for page in PAGES for t in page if t not in ("はい", "うん")}
    for page, o in zip(project.pages, outcomes, strict=True):
        flagged = {b.id for b in page.blocks if b.display_text in long_lines | ({"うん"} if page is project.pages[3]
                                                                                 else set())}
        assert set(o.degenerate) == flagged and not (set(o.texts) & flagged)
        assert flagged <= set(o.missing) and o.problem
        for b in page.blocks:
            if b.id in flagged:
                assert b.looks_degenerate and not b.translation and b.needs_translation  # the next run asks again
                assert b.machine_translation == "The" and o.reasons[b.id].startswith("looks degenerate")
        numbers = ", ".join(f"{b.order} ({b.id})" for b in sorted(page.blocks, key=lambda b: b.order) if b.id in flagged)
        assert f"looks degenerate: block(s) {numbers}" in o.summary()
    # asked again once per page, for the degenerate blocks alone
    chats = fake_llm.chats()
    assert len(chats) == 2 * len(PAGES)
    assert ids_in_order(chats[1]) == [f"b{i + 1}" for i in range(3)]  # page 1: its three lines again
    # the memory the model proposed with those answers is not taken, so nothing is proposed from it
    assert project.memory == before and all(o.memory is None for o in outcomes)
    assert not [p for p in proposals(project) if p.why == "story memory"]
    # the consistency check names every one of them
    rows = {(f.page, f.order, f.kind) for f in check_text(project)}
    for page in project.pages:
        for b in page.blocks:
            if b.looks_degenerate:
                assert (page.name, b.order, "degenerate") in rows


def test_one_sentence_for_ten_lines_on_the_cli(fake_llm, tmp_path, monkeypatch, capsys):
    """A small model answered "I'm going to sleep now" for 10 of 14 different lines: the CLI
    counts only the honest answers, names the pages and blocks, and exits 1."""
    lines = [t for page in PAGES for t in page]
    honest = {"はい", "うん", "タナカさん、まって！", "ユキちゃん、またあした。"}
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    fake_llm.default = "oracle"
    fake_llm.oracle = {t: (fake_translate(t) if t in honest else SLEEP) for t in lines}
    src = tmp_path / "pages.json"
    json_txt.export_json(make_project(str(tmp_path / "vol"), texts=PAGES), src)
    out = tmp_path / "out.json"
    code = main(["translate", str(src), "--provider", "openai", "--base-url", fake_llm.base_url, "--model",
                 "test-model", "--to", "en", "--from", "ja", "--use-env-key", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    data = json.loads(out.read_text(encoding="utf-8"))
    blocks = [b for p in data["pages"] for b in p["blocks"]]
    kept = [b for b in blocks if b["translation"] == SLEEP]
    assert len(kept) <= 2  # at most the first two, before the third line told (the check names them)
    flagged = [b for b in blocks if b.get("machine_flag") == "degenerate"]
    assert len(flagged) == 10 - len(kept) and all(not b["translation"] for b in flagged)
    translated = sum(1 for b in blocks if b["translation"])
    assert f"{translated} block(s) translated with" in err
    assert "looks degenerate: block(s)" in err and "answer(s) looked degenerate" in err
    assert "page 003.png:" in err  # pages named, blocks by number and id
    # Check consistency on the result: the repeated translation, and the blocks left untranslated
    from app.core.exports.json_read import read_json_export

    rows = check_text(read_json_export(out))
    assert sum(f.kind == "degenerate" for f in rows) == len(flagged)
    assert {(f.page, f.block) for f in rows if f.kind == "repeated"} == {(p["name"], b["id"]) for p in data["pages"]
                                                                           for b in p["blocks"] if b in kept}


def test_check_consistency_reports_untranslated_degenerate_and_repeated():
    from dataclasses import replace

    project = make_project(texts=[PAGES[0], PAGES[1]])
    p1, p2 = project.pages
    p1 = replace(p1, blocks=(replace(p1.blocks[0], translation=SLEEP, machine_translation=SLEEP),
                             replace(p1.blocks[1], translation=SLEEP, machine_translation=SLEEP),
                             replace(p1.blocks[2], translation="Tanaka, wait!", machine_translation="Tanaka, wait!")))
    p2 = replace(p2, blocks=(replace(p2.blocks[0], translation=SLEEP, machine_translation=SLEEP),
                             replace(p2.blocks[1], translation="The", machine_translation="The"),
                             p2.blocks[2]))  # "はい": never translated
    project.pages[:] = [p1, p2]
    rows = {(f.page, f.order, f.kind) for f in check_text(project)}
    assert {("001.png", 1, "repeated"), ("001.png", 2, "repeated"), ("002.png", 1, "repeated")} <= rows
    assert ("001.png", 3, "repeated") not in rows
    assert ("002.png", 2, "degenerate") in rows  # one word for a sentence
    assert ("002.png", 3, "untranslated") in rows  # a block with text and no translation
    assert not any(k == "degenerate" and p == "001.png" for p, _o, k in rows)
