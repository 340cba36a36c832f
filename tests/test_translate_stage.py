"""The translation stage (app.core.translation.run) over a project, with the loopback server:
page by page results, context from the previous pages, per-page glossary, resume, hand edits
kept, errors reported per page, a fatal error ending the run, cancel."""
import json
from dataclasses import replace

import pytest

from app.core.document.edits import set_translation
from app.core.translation.run import TranslateOptions, pages_to_translate, translate_pages
from app.errors import Cancelled
from app.translate import GlossaryEntry, TranslatorSettings, make_translator
from tests.llm_server import fake_translate, glossary_of, page_of
from tests.translate_data import PAGES, make_project


def fresh_translator(fake_llm):
    return make_translator(TranslatorSettings(base_url=fake_llm.base_url, model="test-model", timeout=3,
                                              max_retries=1, source_lang="ja"), fake_llm.key)


@pytest.fixture
def translator(fake_llm):
    tr = fresh_translator(fake_llm)
    yield tr
    tr.close()


def run(project, translator, **kw):
    outcomes = list(translate_pages(project, translator, **kw))
    for o in outcomes:
        project.pages[[p.name for p in project.pages].index(o.name)] = o.page
    return outcomes


def page_messages(seen):
    return seen.body["messages"]


def test_every_block_is_translated_in_place(fake_llm, translator):
    project = make_project()
    outcomes = run(project, translator)
    assert [o.name for o in outcomes] == ["001.png", "002.png", "003.png", "004.png"]
    assert all(o.ok for o in outcomes)
    for page, lines in zip(project.pages, PAGES, strict=True):
        assert [b.translation for b in page.blocks] == [fake_translate(t) for t in lines]
        assert all(b.machine_translation == b.translation and b.translator == translator.name for b in page.blocks)
        assert page.translated
    assert len(fake_llm.chats()) == 4  # one request per page


def test_previous_pages_go_as_context_earlier_first(fake_llm, translator):
    project = make_project()
    run(project, translator, options=TranslateOptions(context_pages=2))
    # page 4: at least pages 2 and 3 as context, and page 1 too, since the previous request
    # started with it (the window grows append-only so that each request starts as the last one)
    msgs = page_messages(fake_llm.chats()[3])
    assert [m["role"] for m in msgs] == ["system"] + ["user", "assistant"] * 3 + ["user"]
    assert [json.loads(m["content"])["page"] for m in msgs[1::2]] == ["001.png", "002.png", "003.png", "004.png"]
    assert json.loads(msgs[6]["content"])["translations"][0]["text"] == fake_translate(PAGES[2][0])
    assert [m["role"] for m in page_messages(fake_llm.chats()[0])] == ["system", "user"]
    # each request starts with the previous one, byte for byte (what prompt caches serve), up to
    # the previous page's own message, which carried the story memory then
    for before, after in zip(fake_llm.chats(), fake_llm.chats()[1:]):
        prev, cur = page_messages(before), page_messages(after)
        assert cur[:len(prev) - 1] == prev[:-1]
    # without the memory, the whole previous request
    fake_llm.seen.clear()
    run(make_project(), fresh_translator(fake_llm), options=TranslateOptions(context_pages=2, memory=False))
    for before, after in zip(fake_llm.chats(), fake_llm.chats()[1:]):
        prev, cur = page_messages(before), page_messages(after)
        assert cur[:len(prev)] == prev
    # the window is bounded: with 1 context page, at most 4 earlier pages are kept
    fake_llm.seen.clear()
    run(make_project(texts=PAGES * 3), fresh_translator(fake_llm), options=TranslateOptions(context_pages=1))
    counts = [(len(page_messages(s)) - 2) // 2 for s in fake_llm.chats()]
    assert max(counts) == 4 and min(counts[1:]) >= 1 and counts[0] == 0
    fake_llm.seen.clear()
    run(make_project(), translator, options=TranslateOptions(context_pages=0))
    assert all(len(page_messages(s)) == 2 for s in fake_llm.chats())


def test_only_glossary_terms_on_the_page_or_its_context_are_sent(fake_llm, translator):
    glossary = [GlossaryEntry("タナカ", "Tanaka-san"), GlossaryEntry("ユキ", "Yuki"), GlossaryEntry("ねこ", "Cat")]
    project = make_project()
    run(project, translator, glossary=glossary, options=TranslateOptions(context_pages=0))
    # sent in the system message: the terms met so far in the run (it only grows, so the start
    # of the requests stays the same); ねこ, on no page, is never sent
    sent = [list(glossary_of(s.body)) for s in fake_llm.chats()]
    assert sent == [["タナカ", "ユキ"]] * 4
    assert all("glossary" not in json.loads(page_messages(s)[-1]["content"]) for s in fake_llm.chats())
    assert project.pages[0].blocks[0].translation.startswith("Tanaka-san")  # the server applied it
    fake_llm.seen.clear()
    run(make_project(texts=PAGES[2:]), fresh_translator(fake_llm), glossary=glossary,
        options=TranslateOptions(context_pages=0))
    assert [list(glossary_of(s.body)) for s in fake_llm.chats()] == [["タナカ"], ["タナカ"]]


def test_resume_skips_translated_pages_and_keeps_hand_edits(fake_llm, translator):
    project = make_project()
    run(project, translator, names=["001.png", "002.png"])
    project.pages[1] = set_translation(project.pages[1], "b1", "Yuki, hold on!")  # the user's own
    assert pages_to_translate(project) == ["003.png", "004.png"]
    fake_llm.seen.clear()
    run(project, translator)
    assert len(fake_llm.chats()) == 2  # pages 1 and 2 were skipped
    # asked to translate everything again: the hand edit stays, the machine text is refreshed
    fake_llm.seen.clear()
    run(project, translator, options=TranslateOptions(retranslate=True))
    assert len(fake_llm.chats()) == 4
    b = project.pages[1].blocks[0]
    assert b.translation == "Yuki, hold on!" and b.translation_edited
    assert all("ユキ、まって" not in s["text"] for s in json.loads(page_messages(fake_llm.chats()[1])[-1]["content"])["segments"])
    run(project, translator, options=TranslateOptions(retranslate=True, replace_edited=True))
    assert project.pages[1].blocks[0].translation == fake_translate("ユキ、まって！")


def test_a_failing_page_is_reported_and_the_run_goes_on(fake_llm, translator):
    fake_llm.script = ["ok", "rate_limit", "rate_limit", "ok", "ok"]
    fake_llm.retry_after = "0.05"
    project = make_project()
    outcomes = run(project, translator)
    assert [bool(o.error) for o in outcomes] == [False, True, False, False]
    assert "429" in outcomes[1].error
    assert project.pages[0].translated and not project.pages[1].translated and project.pages[2].translated


def test_unread_pages_are_skipped_with_a_reason(translator):
    project = make_project()
    project.pages[2] = replace(project.pages[2], processed=False, blocks=())
    outcomes = run(project, translator)
    assert outcomes[2].skipped.startswith("not read yet")


def test_a_fatal_error_ends_the_run(fake_llm):
    tr = make_translator(TranslatorSettings(base_url=fake_llm.base_url, model="test-model", max_retries=0), "sk-bad")
    outcomes = list(translate_pages(make_project(), tr))
    tr.close()
    assert len(fake_llm.chats()) == 1
    assert "refused the API key" in outcomes[0].error
    assert all(o.skipped.startswith("not attempted") for o in outcomes[1:])


def test_cancel_keeps_pages_already_done(fake_llm, translator):
    project = make_project()
    state = {"pages": 0}
    gen = translate_pages(project, translator, cancel=lambda: state["pages"] >= 2)
    got = []
    with pytest.raises(Cancelled):
        for outcome in gen:
            got.append(outcome)
            state["pages"] += 1
    assert [o.name for o in got] == ["001.png", "002.png"] and all(o.ok for o in got)


def test_a_translation_edited_while_the_request_ran_is_kept():
    from app.core.document.edits import apply_machine_translations

    page = make_project().pages[0]
    edited = set_translation(page, "b2", "Mine")  # typed after the request left
    done = apply_machine_translations(edited, {"b1": "One", "b2": "Two", "gone": "x"}, "t")
    assert [(b.translation, b.machine_translation) for b in done.blocks[:2]] == [("One", "One"), ("Mine", "Two")]
    assert done.blocks[1].translation_edited
    forced = apply_machine_translations(edited, {"b2": "Two"}, "t", replace_edited=True)
    assert forced.blocks[1].translation == "Two" and not forced.blocks[1].translation_edited


def test_a_selection_sends_only_its_blocks_with_the_rest_of_the_page_as_context(fake_llm, translator):
    """Translate what is selected: one block of page 1 (translated already) and one of page 3;
    the other blocks keep their text, the page's translated blocks go as its nearest context."""
    from app.core.translation.run import parse_page_range

    project = make_project()
    run(project, translator, names=["001.png"])
    project.pages[0] = set_translation(project.pages[0], "b2", "Morning, Yuki.")  # the user's own
    project.pages[0] = set_translation(project.pages[0], "b3", "")  # cleared: not translated
    before = [list(p.blocks) for p in project.pages]
    chosen = frozenset({("001.png", "b3"), ("003.png", "b2")})
    assert pages_to_translate(project, blocks=chosen) == ["001.png", "003.png"]
    fake_llm.seen.clear()
    outcomes = run(project, translator, options=TranslateOptions(context_pages=2, blocks=chosen))
    assert [o.name for o in outcomes] == ["001.png", "003.png"]
    assert [[s["text"] for s in page_of(c.body)["segments"]] for c in fake_llm.chats()] == \
        [[PAGES[0][2]], [PAGES[2][1]]]
    # only the chosen blocks changed
    assert project.pages[0].block("b3").translation == fake_translate(PAGES[0][2])
    assert project.pages[2].block("b2").translation == fake_translate(PAGES[2][1])
    for p, (page, old) in enumerate(zip(project.pages, before, strict=True)):
        for b, was in zip(page.blocks, old, strict=True):
            if (page.name, b.id) not in chosen:
                assert b == was, (p, b.id)
    # the page's other translated blocks (the user's own as it is) are the nearest context page
    msgs = fake_llm.chats()[0].body["messages"]
    assert json.loads(msgs[-3]["content"])["page"] == "001.png"
    assert [s["text"] for s in json.loads(msgs[-3]["content"])["segments"]] == PAGES[0][:2]
    assert [t["text"] for t in json.loads(msgs[-2]["content"])["translations"]] == \
        [fake_translate(PAGES[0][0]), "Morning, Yuki."]
    # a chosen block translated by hand is kept unless asked
    mine = frozenset({("001.png", "b2")})
    fake_llm.seen.clear()
    run(project, translator, options=TranslateOptions(blocks=mine))
    assert fake_llm.chats() == [] and project.pages[0].block("b2").translation == "Morning, Yuki."
    run(project, translator, options=TranslateOptions(blocks=mine, replace_edited=True))
    assert project.pages[0].block("b2").translation == fake_translate(PAGES[0][1])
    # page ranges (the GUI's Translate pages… and the CLI's --pages)
    assert parse_page_range("2-3", 4) == [2, 3] and parse_page_range("1, 3-", 4) == [1, 3, 4]
    assert parse_page_range("-2,2", 4) == [1, 2]
    for bad in ("0-2", "3-1", "5", "x", ""):
        with pytest.raises(Exception, match="page"):
            parse_page_range(bad, 4)
