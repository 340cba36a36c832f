"""The translation stage (app.core.translation) over a project, with the loopback server:
page by page results, context from the previous pages, per-page glossary, resume, hand edits
kept, errors reported per page, a fatal error ending the run, cancel."""
import json
from dataclasses import replace

import pytest

from app.core.edits import set_translation
from app.core.translation import TranslateOptions, pages_to_translate, translate_pages
from app.errors import Cancelled
from app.translate import GlossaryEntry, TranslatorSettings, make_translator
from tests.llm_server import fake_translate
from tests.translate_data import PAGES, make_project


@pytest.fixture
def translator(fake_llm):
    tr = make_translator(TranslatorSettings(base_url=fake_llm.base_url, model="test-model", timeout=3,
                                            max_retries=1, source_lang="ja"), fake_llm.key)
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
    msgs = page_messages(fake_llm.chats()[3])  # page 4: pages 2 and 3 as context
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert json.loads(msgs[1]["content"])["page"] == "002.png"
    assert json.loads(msgs[3]["content"])["page"] == "003.png"
    assert json.loads(msgs[4]["content"])["translations"][0]["text"] == fake_translate(PAGES[2][0])
    assert [m["role"] for m in page_messages(fake_llm.chats()[0])] == ["system", "user"]
    # the shared prefix of consecutive requests is identical (what providers cache)
    assert page_messages(fake_llm.chats()[2])[:1] == page_messages(fake_llm.chats()[3])[:1]
    fake_llm.seen.clear()
    run(make_project(), translator, options=TranslateOptions(context_pages=0))
    assert all(len(page_messages(s)) == 2 for s in fake_llm.chats())


def test_only_glossary_terms_on_the_page_or_its_context_are_sent(fake_llm, translator):
    glossary = [GlossaryEntry("タナカ", "Tanaka-san"), GlossaryEntry("ユキ", "Yuki"), GlossaryEntry("ねこ", "Cat")]
    project = make_project()
    run(project, translator, glossary=glossary, options=TranslateOptions(context_pages=0))
    sent = [[g["source"] for g in json.loads(page_messages(s)[-1]["content"]).get("glossary", [])]
            for s in fake_llm.chats()]
    assert sent == [["タナカ", "ユキ"], ["ユキ"], ["タナカ"], []]
    assert project.pages[0].blocks[0].translation.startswith("Tanaka-san")  # the server applied it
    fake_llm.seen.clear()
    run(make_project(), translator, glossary=glossary, options=TranslateOptions(context_pages=1))
    assert "glossary" in json.loads(page_messages(fake_llm.chats()[3])[-1]["content"])  # タナカ is on page 3


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
    from app.core.edits import apply_machine_translations

    page = make_project().pages[0]
    edited = set_translation(page, "b2", "Mine")  # typed after the request left
    done = apply_machine_translations(edited, {"b1": "One", "b2": "Two", "gone": "x"}, "t")
    assert [(b.translation, b.machine_translation) for b in done.blocks[:2]] == [("One", "One"), ("Mine", "Two")]
    assert done.blocks[1].translation_edited
    forced = apply_machine_translations(edited, {"b2": "Two"}, "t", replace_edited=True)
    assert forced.blocks[1].translation == "Two" and not forced.blocks[1].translation_edited
