"""The DeepL backend through the official `deepl` client pointed at a loopback DeepL
(tests/llm_server.py FakeDeepL via `server_url`): one call per page, context, glossary created
once and deleted at close, a short answer never mapped, a refused key, cancel mid-request."""

import pytest

from app.errors import Cancelled
from app.translate import (
    ContextPage,
    GlossaryEntry,
    Segment,
    TranslationError,
    TranslatorSettings,
    make_translator,
)
from tests.llm_server import fake_translate

SEGMENTS = [Segment("b1", "タナカさん、おはよう！"), Segment("b2", "ありがとう")]


def deepl(server, key=None, **kw):
    return make_translator(TranslatorSettings(provider="deepl", base_url=server.server_url, source_lang="ja",
                                              target_lang="en", **kw), key or server.key)


def test_a_page_in_one_call_with_context_and_glossary(fake_deepl):
    tr = deepl(fake_deepl)
    glossary = [GlossaryEntry("タナカ", "Tanaka")]
    context = [ContextPage("001.png", (("ユキ、まって！", "Yuki, wait!"),))]
    result = tr.translate_page(SEGMENTS, context, glossary)
    result2 = tr.translate_page(SEGMENTS, context, glossary)
    tr.close()
    assert dict(result.texts) == {"b1": fake_translate("タナカさん、おはよう！", {"タナカ": "Tanaka"}),
                                  "b2": "Arigatou"} == dict(result2.texts)
    posts = [s for s in fake_deepl.seen if s.path.endswith("/v2/translate")]
    assert len(posts) == 2 and posts[0].body["text"] == [s.text for s in SEGMENTS]
    assert posts[0].body["target_lang"] == "EN-US" and posts[0].body["source_lang"] == "JA"
    assert posts[0].body["context"] == "ユキ、まって！"
    made = [s for s in fake_deepl.seen if s.path.endswith("/v2/glossaries")]
    assert len(made) == 1  # created once for the run, reused
    assert fake_deepl.glossaries == {}  # deleted at close
    assert all(s.headers["authorization"] == f"DeepL-Auth-Key {fake_deepl.key}" for s in fake_deepl.seen)
    assert not any(fake_deepl.key in repr(s.body) + s.path for s in fake_deepl.seen)


def test_a_short_answer_is_never_mapped(fake_deepl):
    fake_deepl.script = ["short"]
    tr = deepl(fake_deepl)
    with pytest.raises(TranslationError, match="1 texts for 2 segments"):
        tr.translate_page(SEGMENTS)
    tr.close()


def test_a_refused_key_is_fatal_and_not_echoed(fake_deepl):
    tr = deepl(fake_deepl, key="wrong-key-1234567890:fx")
    with pytest.raises(TranslationError, match="refused the DeepL key") as err:
        tr.translate_page(SEGMENTS)
    tr.close()
    assert err.value.fatal and "wrong-key" not in str(err.value)


def test_cancel_mid_request(fake_deepl):
    fake_deepl.default = "slow"
    fake_deepl.delay = 20.0
    fake_deepl.delay = 120.0  # the answer is held until the test lets it go
    tr = deepl(fake_deepl)
    # cancel once the request is at the server: the call must return while its answer is still held
    with pytest.raises(Cancelled):
        tr.translate_page(SEGMENTS, cancel=lambda: any(s.path.rstrip("/") == "/v2/translate" for s in fake_deepl.seen))
    assert fake_deepl.holding == 1  # it did not wait for the held answer
    fake_deepl.close()  # ends the abandoned request
    tr.close()
