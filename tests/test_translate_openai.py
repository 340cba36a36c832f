"""The OpenAI-compatible backend against the loopback server (tests/llm_server.py): mapping by
id whatever the answer's shape, one retry for missing ids, rate limits, timeouts, a server that
is down, garbage, a refused key, cancel mid-request, and the key only in the Authorization header."""
import logging
import time

import pytest

from app.errors import Cancelled
from app.translate import Segment, TranslationError, TranslatorSettings, make_translator
from tests.llm_server import FakeLLM, fake_translate, ids_in_order

SEGMENTS = [Segment("b1", "タナカさん、おはよう！"), Segment("x9", "おはよう、ユキ。"), Segment("m3", "ありがとう")]
EXPECTED = {s.id: fake_translate(s.text) for s in SEGMENTS}


def translator(server, **kw):
    values = dict(base_url=server.base_url, model="test-model", timeout=3.0, max_retries=1, source_lang="ja")
    values.update(kw)
    return make_translator(TranslatorSettings(**values), server.key)


@pytest.mark.parametrize("behaviour", ["ok", "reverse", "fence"])
def test_translations_map_by_id(fake_llm, behaviour):
    fake_llm.default = behaviour
    tr = translator(fake_llm)
    try:
        result = tr.translate_page(SEGMENTS, page_name="001.png")
    finally:
        tr.close()
    assert dict(result.texts) == EXPECTED and result.missing == ()
    assert result.requests == 1 and result.prompt_tokens > 0
    assert ids_in_order(fake_llm.chats()[0]) == ["b1", "b2", "b3"]  # reading order, request ids


def test_a_dropped_id_is_asked_again_once(fake_llm):
    fake_llm.script = ["drop"]
    tr = translator(fake_llm)
    result = tr.translate_page(SEGMENTS)
    tr.close()
    assert dict(result.texts) == EXPECTED and result.requests == 2
    assert ids_in_order(fake_llm.chats()[1]) == ["b3"]  # the retry asks for exactly the missing id
    assert "missing" in result.notes[0]


def test_still_missing_ids_are_reported_never_shifted(fake_llm):
    fake_llm.default = "unknown"  # every answer drops the last id and invents another
    tr = translator(fake_llm)
    result = tr.translate_page(SEGMENTS)
    tr.close()
    assert result.missing == ("m3",) and "m3" not in result.texts
    assert dict(result.texts) == {k: v for k, v in EXPECTED.items() if k != "m3"}
    assert result.requests == 2  # one retry, no more
    assert any("unknown ids" in n for n in result.notes)


def test_garbage_once_is_retried_and_garbage_twice_fails_the_page(fake_llm):
    fake_llm.script = ["garbage"]
    tr = translator(fake_llm)
    assert dict(tr.translate_page(SEGMENTS).texts) == EXPECTED
    fake_llm.script = ["garbage", "garbage"]
    with pytest.raises(TranslationError, match="not the JSON asked for") as err:
        tr.translate_page(SEGMENTS, page_name="007.png")
    tr.close()
    assert not err.value.fatal and "007.png" in str(err.value) and "sorry" in str(err.value)


def test_truncated_answer_keeps_what_is_complete(fake_llm):
    fake_llm.script = ["truncated"]
    tr = translator(fake_llm)
    result = tr.translate_page(SEGMENTS)
    tr.close()
    assert dict(result.texts) == EXPECTED and result.requests == 2


def test_rate_limit_waits_for_retry_after(fake_llm):
    fake_llm.retry_after = "0.6"
    fake_llm.script = ["rate_limit"]
    tr = translator(fake_llm)
    start = time.monotonic()
    result = tr.translate_page(SEGMENTS)
    took = time.monotonic() - start
    tr.close()
    assert dict(result.texts) == EXPECTED
    behaviours = [s.behaviour for s in fake_llm.chats()]
    assert behaviours == ["rate_limit", "ok"]
    gap = fake_llm.chats()[1].at - fake_llm.chats()[0].at
    assert gap >= 0.55 and took >= 0.55  # Retry-After honoured, not the client's 0.5 s default


def test_rate_limit_after_the_retries_fails_only_that_page(fake_llm):
    fake_llm.script = ["rate_limit"] * 2
    tr = translator(fake_llm, max_retries=1)
    with pytest.raises(TranslationError, match="429") as err:
        tr.translate_page(SEGMENTS)
    assert not err.value.fatal
    assert dict(tr.translate_page(SEGMENTS).texts) == EXPECTED  # the next page goes through
    tr.close()


def test_timeout_is_reported_with_the_server(fake_llm):
    fake_llm.default = "slow"
    fake_llm.delay = 5.0
    tr = translator(fake_llm, timeout=0.4, max_retries=0)
    with pytest.raises(TranslationError, match=r"nothing arrived for 0.4 s") as err:
        tr.translate_page(SEGMENTS)
    tr.close()
    assert fake_llm.holding == 1  # it gave up while the answer was still held (no clock read here)
    assert "127.0.0.1" in str(err.value) and not err.value.fatal


def test_server_down_is_fatal_and_clear():
    server = FakeLLM()
    url, key = server.base_url, server.key
    server.close()
    tr = make_translator(TranslatorSettings(base_url=url, model="test-model", timeout=2, max_retries=0), key)
    with pytest.raises(TranslationError, match="cannot connect") as err:
        tr.translate_page(SEGMENTS)
    tr.close()
    assert err.value.fatal and url.split("/v1")[0] in str(err.value)


def test_wrong_key_is_fatal_and_never_echoed(fake_llm):
    wrong = "sk-wrong-ABCDEFGHIJKLMNOP"
    tr = make_translator(TranslatorSettings(base_url=fake_llm.base_url, model="test-model", max_retries=0), wrong)
    with pytest.raises(TranslationError, match="refused the API key") as err:
        tr.translate_page(SEGMENTS)
    tr.close()
    assert err.value.fatal and "sk-wrong" not in str(err.value) and "ABCDEFGH" not in str(err.value)


def test_unknown_model_is_fatal(fake_llm):
    tr = translator(fake_llm, model="no-such-model")
    with pytest.raises(TranslationError, match="not found") as err:
        tr.translate_page(SEGMENTS)
    tr.close()
    assert err.value.fatal


def test_refused_json_schema_falls_back_and_remembers(fake_llm):
    fake_llm.default = "refuse_schema"
    tr = translator(fake_llm, structured="schema")
    assert dict(tr.translate_page(SEGMENTS).texts) == EXPECTED
    assert dict(tr.translate_page(SEGMENTS).texts) == EXPECTED
    tr.close()
    formats = [(s.body.get("response_format") or {}).get("type") for s in fake_llm.chats()]
    assert formats == ["json_schema", "json_object", "json_object"]


def test_cancel_stops_mid_request(fake_llm):
    fake_llm.default = "slow"
    fake_llm.delay = 120.0  # the answer is held until the test lets it go
    tr = translator(fake_llm, timeout=300.0)
    # cancel once the request is at the server: the call must return while its answer is still held
    with pytest.raises(Cancelled):
        tr.translate_page(SEGMENTS, cancel=lambda: len(fake_llm.chats()) == 1)
    assert fake_llm.holding == 1  # it did not wait for the held answer (nor for the 300 s timeout)
    tr.close()
    assert len(fake_llm.chats()) == 1  # the request was in flight


def test_test_connection_lists_models(fake_llm):
    tr = translator(fake_llm)
    assert tr.list_models() == ["other-model", "test-model"]
    tr.close()


def test_key_goes_only_into_the_authorization_header(fake_llm, caplog):
    caplog.set_level(logging.DEBUG)
    fake_llm.script = ["drop", "ok", "rate_limit"]
    fake_llm.retry_after = "0.05"
    tr = translator(fake_llm)
    tr.translate_page(SEGMENTS)
    tr.translate_page(SEGMENTS)
    tr.list_models()
    tr.close()
    # 4 chat requests + /models, and the context-size probes of a local server (/props,
    # /v1/models, /api/show), each once per run
    assert len(fake_llm.chats()) == 4 and len(fake_llm.seen) == 8
    for seen in fake_llm.seen:
        assert seen.headers["authorization"] == f"Bearer {fake_llm.key}"
        others = {k: v for k, v in seen.headers.items() if k != "authorization"}
        assert fake_llm.key not in repr(others) + seen.path + repr(seen.body)
    assert caplog.records and fake_llm.key not in caplog.text
    assert fake_llm.key[:8] not in caplog.text


@pytest.mark.parametrize("stream", [True, False])
def test_a_connection_closed_before_any_answer_is_asked_again_on_a_new_one(fake_llm, stream):
    # a server closes a kept-alive connection just as a request goes out on it (seen with
    # llama-server on a busy machine after a cancelled stream or an error answer): "Server
    # disconnected without sending a response"; asked again at once, even with no retries set
    fake_llm.script = ["hangup"]
    tr = translator(fake_llm, max_retries=0, stream=stream)
    try:
        result = tr.translate_page(SEGMENTS)
    finally:
        tr.close()
    assert dict(result.texts) == EXPECTED and not result.error
    assert [s.behaviour for s in fake_llm.chats()] == ["hangup", "ok"]


def test_a_server_that_keeps_hanging_up_is_named(fake_llm):
    fake_llm.default = "hangup"
    tr = translator(fake_llm, max_retries=0)
    try:
        with pytest.raises(TranslationError, match=f"127.0.0.1:{fake_llm.port}.*connection broke"):
            tr.translate_page(SEGMENTS)
    finally:
        tr.close()
    assert len(fake_llm.chats()) == 2  # one fresh try, not a loop


def test_cancel_during_a_retry_wait_stops_at_once(fake_llm):
    # a 429 asking for 30 s: the one retry loop waits polling Cancel, so Cancel ends the page
    fake_llm.retry_after = "30"
    fake_llm.script = ["rate_limit"]
    tr = translator(fake_llm, max_retries=2)
    start = time.monotonic()
    try:
        with pytest.raises(Cancelled):
            tr.translate_page(SEGMENTS, cancel=lambda: len(fake_llm.chats()) == 1 and time.monotonic() - start > 0.3)
    finally:
        tr.close()
    assert time.monotonic() - start < 3.0 and len(fake_llm.chats()) == 1  # no second request


def test_every_retryable_failure_counts_against_one_budget(fake_llm):
    # a 429, then a 503, then an answer: two retries of one loop (max_retries=2); with one retry
    # the 503 is the error, naming the server
    fake_llm.retry_after = "0.05"
    fake_llm.script = ["rate_limit", "error503"]
    tr = translator(fake_llm, max_retries=2)
    try:
        assert dict(tr.translate_page(SEGMENTS).texts) == EXPECTED
    finally:
        tr.close()
    assert [s.behaviour for s in fake_llm.chats()] == ["rate_limit", "error503", "ok"]
    fake_llm.script = ["rate_limit", "error503"]
    tr = translator(fake_llm, max_retries=1)
    try:
        with pytest.raises(TranslationError, match="503") as err:
            tr.translate_page(SEGMENTS)
    finally:
        tr.close()
    assert "127.0.0.1" in str(err.value) and not err.value.fatal


def test_the_wire_is_a_declared_transport(fake_llm):
    """The backend holds its wire (openai_wire.Wire) by composition, through the Transport
    interface: every method the backend calls on it is declared there."""
    import ast
    import inspect

    from app.translate import openai_backend
    from app.translate.openai_wire import Transport, Wire

    declared = {n for n in vars(Transport) if not n.startswith("_")} | set(Transport.__annotations__)
    tree = ast.parse(inspect.getsource(openai_backend))
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Attribute) and node.value.attr == "wire"}
    assert used and used <= declared, used - declared
    assert all(callable(getattr(Wire, n)) for n in declared if n != "server")
    assert Wire not in openai_backend.OpenAITranslator.__mro__
    tr = translator(fake_llm)
    try:
        assert isinstance(tr.wire, Wire) and tr.list_models() == ["other-model", "test-model"]
    finally:
        tr.close()


def test_closing_runs_out_what_is_still_pending_on_its_loop(fake_llm):
    """A streamed answer's generator closed by the garbage collector is closed by a task of the
    wire's loop; closing the translator runs such tasks out instead of destroying them (seen
    once in a CI log: "Task was destroyed but it is pending!")."""
    import asyncio

    tr = translator(fake_llm)
    assert tr.translate_page(SEGMENTS) is not None
    finished = []

    async def late():
        await asyncio.sleep(0.05)
        finished.append(True)

    task = tr.wire.loop.create_task(late())  # pending when close() is called
    tr.close()
    assert finished == [True] and task.done() and tr.wire.loop.is_closed()
