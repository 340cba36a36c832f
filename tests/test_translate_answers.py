"""What real OpenAI-compatible servers do that a well-behaved one does not, against the loopback
server (tests/llm_server.py): reasoning before the answer, raw newlines, format and temperature
refusals, answers cut at max_tokens, server errors with a message, servers that do not stream,
echoes, requests too long for the server's context, streaming progress and cancel mid-stream.
(The real llama.cpp server is in tests/test_llama_server.py.)"""
import json
import threading

import pytest

from app.errors import Cancelled
from app.translate import Segment, TranslationError, TranslatorSettings, contract, make_translator
from app.translate.capabilities import CapabilityStore
from tests.llm_server import fake_translate, page_of

SEGMENTS = [Segment("b1", "タナカさん、おはよう！"), Segment("x9", "おはよう、ユキ。"), Segment("m3", "ありがとう")]
EXPECTED = {s.id: fake_translate(s.text) for s in SEGMENTS}


def translator(server, store=None, **kw):
    values = dict(base_url=server.base_url, model="test-model", timeout=3.0, max_retries=1, source_lang="ja")
    values.update(kw)
    from app.translate.openai_backend import OpenAITranslator

    return OpenAITranslator(TranslatorSettings(**values), server.key, store=store or CapabilityStore(None))


def one_page(server, **kw):
    tr = translator(server, **kw)
    try:
        return tr.translate_page(SEGMENTS, page_name="001.png"), tr
    finally:
        tr.close()


# ----------------------------------------------------------------------------- reading answers
@pytest.mark.parametrize("behaviour", ["think", "reasoning", "newline"])
def test_reasoning_and_raw_newlines_do_not_get_in_the_way(fake_llm, behaviour):
    fake_llm.default = behaviour
    result, _tr = one_page(fake_llm)
    assert "DRAFT" not in json.dumps(dict(result.texts))  # the draft inside the thoughts is not taken
    if behaviour == "newline":
        assert result.texts["b1"] == "line one\n" + EXPECTED["b1"]
        assert set(result.texts) == set(EXPECTED)
    else:
        assert dict(result.texts) == EXPECTED
    assert result.missing == ()


def test_read_answer_takes_the_last_complete_answer_never_the_request():
    ids = ["b1", "b2"]
    request = contract.page_message([("b1", "はい"), ("b2", "いいえ")], "ja", "en")["content"]
    assert contract.read_answer(request, ids).texts == {}  # the request echoed back
    draft = '{"translations": [{"id": "b1", "text": "draft"}, {"id": "b2", "text": "draft"}]}'
    final = '{"translations": [{"id": "b1", "text": "Yes"}, {"id": "b2", "text": "No"}]}'
    assert contract.read_answer(f"{request}\nFirst: {draft}\nBetter: {final}", ids).texts == {"b1": "Yes", "b2": "No"}
    assert contract.read_answer(f"<think>{draft}</think>{final}", ids).texts == {"b1": "Yes", "b2": "No"}
    assert contract.read_answer(f"<think>still thinking {draft}", ids).texts == {}  # cut off while thinking
    assert contract.read_answer(f"{draft}</think>\n{final}", ids).texts == {"b1": "Yes", "b2": "No"}
    raw = '{"translations": [{"id": "b1", "text": "two\nlines\tand a tab"}]}'
    assert contract.read_answer(raw, ids).texts == {"b1": "two\nlines\tand a tab"}


def test_the_schema_bounds_the_answer_to_the_page():
    schema = contract.response_schema(["b1", "b2", "b3"])["json_schema"]["schema"]
    items = schema["properties"]["translations"]
    assert items["minItems"] == items["maxItems"] == 3
    assert items["items"]["properties"]["id"]["enum"] == ["b1", "b2", "b3"]
    assert contract.answer_budget(["あ" * 10]) == contract.MAX_TOKENS_FLOOR
    assert contract.answer_budget(["あ" * 400]) > 1200


def test_every_request_is_bounded(fake_llm):
    one_page(fake_llm)
    body = fake_llm.chats()[0].body
    assert body["max_tokens"] >= contract.MAX_TOKENS_FLOOR
    assert body["response_format"]["json_schema"]["schema"]["properties"]["translations"]["maxItems"] == 3
    assert body["stream"] is True


# ----------------------------------------------------------------------------- capabilities
@pytest.mark.parametrize("refusal, expect", [
    ("refuse_schema", {"response_format": {"type": "json_object"}}),
    ("refuse422", {"response_format": {"type": "json_object"}}),
    ("refuse_temperature", {"temperature": None}),
])
def test_a_refused_first_request_is_sent_again_with_less_and_remembered(fake_llm, tmp_path, refusal, expect):
    fake_llm.default = refusal
    store = CapabilityStore(tmp_path / "caps.json")
    tr = translator(fake_llm, store=store)
    result = tr.translate_page(SEGMENTS)
    tr.close()
    assert dict(result.texts) == EXPECTED
    assert len(fake_llm.chats()) == 2  # one refused, then the one that worked: the refusal's own cause removed
    last = fake_llm.chats()[-1].body
    for key, value in expect.items():
        assert last.get(key) == value
    if refusal == "refuse_temperature":  # only the temperature went: the schema stays
        assert last["response_format"]["type"] == "json_schema"
    saved = json.loads((tmp_path / "caps.json").read_text())
    assert list(saved) == [f"{fake_llm.base_url}|test-model"]
    # the next run starts with what worked: no refused request first
    fake_llm.seen.clear()
    tr = translator(fake_llm, store=CapabilityStore(tmp_path / "caps.json"))
    assert dict(tr.translate_page(SEGMENTS).texts) == EXPECTED
    tr.close()
    assert len(fake_llm.chats()) == 1


def test_a_server_that_does_not_stream_gets_one_plain_request(fake_llm):
    fake_llm.default = "nostream"
    tr = translator(fake_llm)
    assert dict(tr.translate_page(SEGMENTS).texts) == EXPECTED
    assert dict(tr.translate_page(SEGMENTS).texts) == EXPECTED
    tr.close()
    streams = [s.body.get("stream") for s in fake_llm.chats()]
    assert streams[0] is True and streams[-1] is not True  # the second page is asked plainly


def test_a_server_error_shows_the_servers_message(fake_llm):
    fake_llm.default = "error500disk"
    tr = translator(fake_llm)
    with pytest.raises(TranslationError, match="HTTP 500: model file could not be mapped") as err:
        tr.translate_page(SEGMENTS)
    tr.close()
    assert "nothing arrived" not in str(err.value) and len(fake_llm.chats()) == 1  # a 500 is not retried


# ----------------------------------------------------------------------------- length
def test_an_answer_cut_at_max_tokens_keeps_its_items_and_asks_for_the_rest(fake_llm):
    fake_llm.script = ["length"]
    result, _tr = one_page(fake_llm)
    assert dict(result.texts) == EXPECTED and result.missing == ()
    assert [len(page_of(s.body)["segments"]) for s in fake_llm.chats()] == [3, 2]
    assert any("token limit" in n for n in result.notes)


@pytest.mark.parametrize("behaviour", ["context_exceeded", "error500msg"])
def test_too_long_for_the_server_drops_context_then_splits_the_page(fake_llm, behaviour):
    from app.translate.base import ContextPage

    fake_llm.default = behaviour if behaviour == "context_exceeded" else "ok"
    fake_llm.script = [] if behaviour == "context_exceeded" else ["error500msg", "error500msg"]
    fake_llm.max_segments = 1
    tr = translator(fake_llm)
    context = [ContextPage("000.png", (("はい", "Yes"),))]
    result = tr.translate_page(SEGMENTS, context=context, page_name="001.png")
    tr.close()
    assert dict(result.texts) == EXPECTED and result.missing == ()
    sizes = [(sum(1 for m in s.body["messages"] if m["role"] == "user"),
              len(page_of(s.body)["segments"])) for s in fake_llm.chats()]
    assert sizes[0] == (2, 3) and sizes[1] == (1, 3)  # context dropped first
    if behaviour == "context_exceeded":
        assert sizes[2:] == [(1, 2), (1, 1), (1, 1), (1, 1)]  # then halves, then halves again
    assert any("without the previous pages" in n for n in result.notes)


def test_the_servers_context_size_bounds_the_context_sent(fake_llm):
    from app.translate.base import ContextPage

    fake_llm.n_ctx = 1400
    context = [ContextPage(f"{i:03d}.png", (("おはようございます" * 4, "Good morning " * 4),) * 4) for i in range(6)]
    tr = translator(fake_llm, context_pages=6, context_tokens=100000)
    tr.translate_page(SEGMENTS, context=context)
    tr.close()
    body = fake_llm.chats()[0].body
    assert contract.messages_tokens(body["messages"]) + body["max_tokens"] <= 1400
    assert any(m["role"] == "assistant" for m in body["messages"])  # some context still fits


# ----------------------------------------------------------------------------- honest results
def test_echoes_are_asked_again_then_reported_not_counted(fake_llm):
    fake_llm.default = "echo"
    result, _tr = one_page(fake_llm)
    assert dict(result.texts) == {}
    assert set(result.untranslated) == {"b1", "x9", "m3"} and set(result.missing) == {"b1", "x9", "m3"}
    assert len(fake_llm.chats()) == 2  # asked again once
    note = page_of(fake_llm.chats()[1].body)["note"]
    assert "untranslated" in note


def test_an_echoed_request_is_not_a_translation(fake_llm):
    fake_llm.script = ["echo_request"]
    result, _tr = one_page(fake_llm)
    assert dict(result.texts) == EXPECTED  # the second answer; the echo gave nothing
    assert len(fake_llm.chats()) == 2


def test_a_failed_second_request_keeps_the_first_answer(fake_llm):
    fake_llm.script = ["drop", "error500disk"]
    result, _tr = one_page(fake_llm)
    assert result.texts == {k: v for k, v in EXPECTED.items() if k != "m3"}
    assert result.missing == ("m3",) and "model file could not be mapped" in result.error


def test_wrong_addresses_fail_fast_and_say_what_to_do(fake_llm):
    root = fake_llm.base_url.removesuffix("/v1")
    tr = make_translator(TranslatorSettings(base_url=root, model="test-model", timeout=3, max_retries=0), fake_llm.key)
    with pytest.raises(TranslationError, match=r"Did you mean .*/v1") as err:
        tr.translate_page(SEGMENTS)
    tr.close()
    assert err.value.fatal
    tr = translator(fake_llm, model="no-such-model")
    with pytest.raises(TranslationError, match="offers: other-model, test-model") as err:
        tr.translate_page(SEGMENTS)
    tr.close()
    assert err.value.fatal


# ----------------------------------------------------------------------------- streaming
def test_tokens_are_counted_as_they_arrive(fake_llm):
    fake_llm.chunk_chars = 4
    seen: list[int] = []
    tr = translator(fake_llm)
    result = tr.translate_page(SEGMENTS, on_tokens=seen.append)
    tr.close()
    assert dict(result.texts) == EXPECTED
    assert len(seen) > 10 and seen == sorted(seen) and result.first_token_s > 0


def test_blocks_are_labelled_with_the_model_that_answered(fake_llm):
    fake_llm.answer_model = "served-model-q4"
    result, tr = one_page(fake_llm)
    assert result.translator == f"served-model-q4 @ {fake_llm.base_url}" and tr.name == result.translator


def test_cancel_stops_mid_stream(fake_llm):
    fake_llm.chunk_chars = 1
    fake_llm.chunk_delay = 0.05  # a slow stream: several seconds for the whole answer
    got_tokens = threading.Event()
    tr = translator(fake_llm, timeout=10)
    with pytest.raises(Cancelled):
        tr.translate_page(SEGMENTS, cancel=got_tokens.is_set, on_tokens=lambda n: n >= 5 and got_tokens.set())
    tr.close()
    assert got_tokens.is_set() and len(fake_llm.chats()) == 1


def test_a_whole_answer_limit_stops_a_stream_that_never_ends(fake_llm):
    fake_llm.chunk_chars = 1
    fake_llm.chunk_delay = 0.05
    tr = translator(fake_llm, timeout=10, total_timeout=0.5, max_retries=0)
    with pytest.raises(TranslationError, match="not complete after 0.5 s"):
        tr.translate_page(SEGMENTS)
    tr.close()
