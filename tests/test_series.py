"""Series and translation memory: the series file found beside or above a volume, a new volume
starting with what the series knows, what a volume learns written back (merged under a lock),
newer files kept read-only; the translation memory's exact and close matches; the stage filling
exact repeats without a request; `translate --series` end to end against the loopback server."""
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli import main
from app.core.document.edits import approve_translation, set_translation
from app.core.document.types import Project
from app.core.project.files import load_project, save_project
from app.core.project.paths import find_project_file
from app.core.translation.run import translate_pages
from app.core.translation.series import (
    SERIES_FILE,
    Series,
    find_series_file,
    learn_from,
    load_series,
    save_series,
    start_volume,
)
from app.core.translation.translation_memory import LABEL, TranslationMemory, approved_pairs, memory_of
from app.errors import UserError
from app.render.style import TextStyle
from app.translate import GlossaryEntry, TranslatorSettings, make_translator
from app.translate.memory import Character, StoryMemory
from tests.llm_server import fake_translate
from tests.translate_data import PAGES, make_project

ROOT = Path(__file__).resolve().parents[1]



def test_series_file_is_found_beside_or_up_to_two_levels_above(tmp_path):
    vol = tmp_path / "a" / "b" / "c" / "vol1"
    vol.mkdir(parents=True)
    assert find_series_file(vol) is None
    top = tmp_path / "a" / SERIES_FILE
    top.write_text("{}")
    assert find_series_file(vol) == top  # c (beside), b, a: two levels above
    (tmp_path / "a" / "b" / "c" / SERIES_FILE).write_text("{}")
    assert find_series_file(vol) == tmp_path / "a" / "b" / "c" / SERIES_FILE  # the nearest wins
    deeper = tmp_path / "x" / "y" / "z" / "w" / "vol.cbz"
    deeper.parent.mkdir(parents=True)
    (tmp_path / SERIES_FILE).write_text("{}")
    assert find_series_file(deeper) is None  # w, z, y searched; x and above are not
    assert find_series_file(tmp_path / "x" / "y" / "vol.cbz") == tmp_path / SERIES_FILE


def test_round_trip_unknown_keys_kept_newer_major_read_only_damaged_named(tmp_path):
    path = tmp_path / SERIES_FILE
    series = Series(path, [GlossaryEntry("タナカ", "Tanaka", "a teacher")],
                    StoryMemory((Character("ユキ", "Yuki", "she, casual", by_user=True),), summary="They meet."),
                    [("おはよう", "Morning!")], TextStyle(min_size=9))
    save_series(series)
    again = load_series(path)
    assert (again.glossary, again.memory, again.tm, again.style) == (series.glossary, series.memory, series.tm,
                                                                     series.style)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["minor"] = 7
    data["future"] = {"x": 1}
    path.write_text(json.dumps(data), encoding="utf-8")
    save_series(load_series(path))
    assert json.loads(path.read_text(encoding="utf-8"))["future"] == {"x": 1}
    data["version"] = 2
    path.write_text(json.dumps(data), encoding="utf-8")
    newer = load_series(path)
    assert newer.read_only and newer.tm == series.tm
    with pytest.raises(UserError, match="newer"):
        save_series(newer)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(UserError, match=SERIES_FILE):
        load_series(path)
    assert load_series(tmp_path / "none" / SERIES_FILE).tm == []  # missing: an empty series


def test_translation_memory_exact_and_similar():
    tm = TranslationMemory([("タナカさん、おはよう！", "Morning, Tanaka!"), ("ありがとう", "Thanks."),
                            ("Hello there", "Salut")])
    assert tm.exact("タナカさん、\nおはよう！") == "Morning, Tanaka!"  # line breaks ignored
    assert tm.exact("Hello   there") == "Salut" and tm.exact("Hellothere") is None
    assert tm.exact("さようなら") is None
    near = tm.similar("タナカさん、おはよう。")
    assert near[0][:2] == ("タナカさん、おはよう！", "Morning, Tanaka!") and 60 <= near[0][2] < 100
    assert all(s != "ありがとう" for s, _t, _sc in near)  # unlike lines are not offered
    assert tm.similar("タナカさん、おはよう！") == []  # the line itself is not "similar"
    tm.add("ありがとう", "Thank you.")  # the latest approval wins
    assert tm.exact("ありがとう") == "Thank you." and len(tm) == 3


def test_approved_means_edited_by_hand_or_accepted():
    project = make_project()
    page = project.pages[0]
    page = replace(page, blocks=tuple(replace(b, translation="m", machine_translation="m") for b in page.blocks))
    assert list(approved_pairs([page])) == []  # a machine translation alone is not approved
    page = set_translation(page, "b1", "Morning, Tanaka!")
    page = approve_translation(page, "b2")
    assert list(approved_pairs([page])) == [(PAGES[0][0], "Morning, Tanaka!"), (PAGES[0][1], "m")]
    page = set_translation(page, "b2", "changed")  # still approved: it is the user's own now
    assert (PAGES[0][1], "changed") in list(approved_pairs([page]))


def fresh_translator(fake_llm):
    return make_translator(TranslatorSettings(base_url=fake_llm.base_url, model="test-model", timeout=3,
                                              max_retries=1, source_lang="ja"), fake_llm.key)


def test_exact_repeats_are_filled_from_memory_without_a_request(fake_llm):
    project = make_project()
    tm = TranslationMemory([(PAGES[3][0], "Goodbye!"), (PAGES[2][0], "Thank you!")])
    translator = fresh_translator(fake_llm)
    try:
        outcomes = list(translate_pages(project, translator, tm=tm))
    finally:
        translator.close()
    by_name = {o.name: o for o in outcomes}
    last = by_name["004.png"]  # its only line is in the memory: no request at all
    assert last.requests == 0 and last.translator == LABEL and last.texts == {"b1": "Goodbye!"}
    assert last.page.blocks[0].translation == "Goodbye!" and last.page.blocks[0].translator == LABEL
    third = by_name["003.png"].page
    assert third.blocks[0].translator == LABEL and third.blocks[1].translator not in ("", LABEL)
    assert third.blocks[0].translation == "Thank you!"
    assert third.blocks[1].translation == fake_translate(PAGES[2][1])
    assert len(fake_llm.chats()) == 3  # pages 1-3; page 4 came from memory
    sent = fake_llm.chats()[2].body["messages"][-1]["content"]
    assert PAGES[2][0] not in sent and PAGES[2][1] in sent  # the filled line is not asked for
    # a close match goes with the request as an example: "タナカさんはやさしいね" ~ nothing; page 1's
    # "タナカさん、おはよう！" is near the memory's "タナカさん、おはよう。"
    tm.add("タナカさん、おはよう。", "Good morning, Mr. Tanaka.")
    fake_llm.seen.clear()
    translator = fresh_translator(fake_llm)
    try:
        list(translate_pages(make_project(), translator, names=["001.png"], tm=tm))
    finally:
        translator.close()
    body = json.loads(fake_llm.chats()[0].body["messages"][-1]["content"])
    assert {"source": "タナカさん、おはよう。", "target": "Good morning, Mr. Tanaka."} in body["examples"]


def copy_pages(folder: Path, project: Project) -> None:
    folder.mkdir(parents=True)
    for page in project.pages:
        shutil.copyfile(ROOT / "app" / "resources" / "samples" / "page_0000.png", folder / page.name)


def args_for(server, *extra):
    return ["--provider", "openai", "--base-url", server.base_url, "--model", "test-model", "--to", "en",
            "--timeout", "3", "--retries", "1", "--use-env-key", *extra]


def test_two_volumes_of_one_series(fake_llm, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    series_dir = tmp_path / "Series"
    vol1 = series_dir / "vol1"
    first = make_project(str(vol1))
    copy_pages(vol1, first)
    first.glossary = [GlossaryEntry("タナカ", "Tanaka-sensei")]
    first.memory = StoryMemory((Character("ユキ", "Yuki", "she", by_user=True),), summary="Yuki meets Tanaka.",
                               summary_by_user=True)  # the user wrote it: the model's summaries never replace it
    first.style = TextStyle(min_size=11)
    save_project(first)
    series_file = series_dir / SERIES_FILE
    # volume 1: translated with --series (the file is created), a line corrected by hand
    assert main(["translate", str(vol1), "--format", "json", "--series", str(series_file), *args_for(fake_llm)]) == 0
    capsys.readouterr()
    saved = load_project(find_project_file(vol1))
    saved.pages[3] = set_translation(saved.pages[3], "b1", "See you!")
    save_project(saved)
    assert main(["translate", str(vol1), "--format", "json", *args_for(fake_llm)]) == 0  # found beside: learns
    series = load_series(series_file)
    assert series.glossary == first.glossary and series.memory.characters[0].target == "Yuki"
    assert series.style.min_size == 11 and (PAGES[3][0], "See you!") in series.tm
    # volume 2 in the same folder: starts with the glossary, memory and style; the repeat is
    # filled from memory with no request
    vol2 = series_dir / "vol2"
    second = make_project(str(vol2), texts=[["さようなら"], ["タナカさん、またね"]])
    copy_pages(vol2, second)
    save_project(second)
    fake_llm.seen.clear()
    assert main(["translate", str(vol2), "--format", "json", *args_for(fake_llm)]) == 0
    err = capsys.readouterr().err
    assert "new volume of the series" in err
    got = load_project(find_project_file(vol2))
    assert got.glossary == first.glossary and got.memory.summary == "Yuki meets Tanaka."
    assert got.style.min_size == 11
    assert got.pages[0].blocks[0].translation == "See you!" and got.pages[0].blocks[0].translator == LABEL
    assert len(fake_llm.chats()) == 1  # only page 2 was asked for
    assert "Tanaka-sensei" in json.dumps(fake_llm.chats()[0].body, ensure_ascii=False)  # the series' glossary
    # volume 2 learned: its own hand edit reaches the series, volume 1's stays
    got.pages[1] = set_translation(got.pages[1], "b1", "Bye, Tanaka!")
    learn_from(series_file, got)
    pairs = load_series(series_file).tm
    assert (PAGES[3][0], "See you!") in pairs and ("タナカさん、またね", "Bye, Tanaka!") in pairs


def test_learning_merges_with_what_another_volume_wrote(tmp_path):
    path = tmp_path / SERIES_FILE
    a, b = make_project(str(tmp_path / "a")), make_project(str(tmp_path / "b"))
    a.pages[0] = set_translation(a.pages[0], "b1", "A's line")
    b.pages[1] = set_translation(b.pages[1], "b1", "B's line")
    b.glossary = [GlossaryEntry("ユキ", "Yuki")]
    learn_from(path, a)
    learn_from(path, b)  # b never saw a's line: it is read back from the file, not lost
    series = load_series(path)
    assert set(series.tm) == {(PAGES[0][0], "A's line"), (PAGES[1][0], "B's line")}
    assert series.glossary == [GlossaryEntry("ユキ", "Yuki")]


def test_a_volume_that_knows_things_is_not_overwritten(tmp_path):
    series = Series(tmp_path / SERIES_FILE, [GlossaryEntry("タナカ", "Tanaka")], StoryMemory(summary="s"))
    project = make_project()
    project.glossary = [GlossaryEntry("ユキ", "Snow")]
    assert not start_volume(project, series)
    assert project.glossary == [GlossaryEntry("ユキ", "Snow")] and project.memory.empty
    assert memory_of(project, [("x", "y")]).exact("x") == "y"


def test_replacing_the_users_translations_asks_the_model_not_the_memory(fake_llm):
    from app.core.translation.run import TranslateOptions

    project = make_project()
    project.pages[0] = set_translation(project.pages[0], "b1", "My own line")
    translator = fresh_translator(fake_llm)
    try:
        outcomes = list(translate_pages(project, translator, names=["001.png"], tm=memory_of(project),
                                        options=TranslateOptions(retranslate=True, replace_edited=True)))
    finally:
        translator.close()
    assert outcomes[0].page.blocks[0].translation == fake_translate(PAGES[0][0])
