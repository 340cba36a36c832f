"""A server whose context is too small for a page: an answer that stops where the context ends
(finish_reason "length", the JSON cut before one item is complete) is a length stop. The page
goes again without its context pages, then in smaller requests, until the answers fit; a line
that cannot fit alone is reported with the server's context size and how to raise it. Against
the loopback server (tests/llm_server.py, behaviour "context": llama.cpp's cut at n_ctx)."""
from __future__ import annotations

import pytest

from app.translate import ContextPage, Segment, TranslatorSettings, make_translator
from tests.llm_server import fake_translate, page_of, prompt_tokens

LINES = ["このまちにはふるいとしょかんがある。", "わたしはまいにちそこへいく。", "きょうもあめがふっている。",
         "ともだちがまっているよ。", "はやくいかなきゃ！", "でも、かさをわすれた。", "どうしよう……", "あ、タナカさんだ！",
         "かさ、かしてくれる？", "もちろん、いいよ。", "ありがとう、たすかった！", "じゃあ、いっしょにいこう。"]
SEGMENTS = [Segment(f"s{i}", t) for i, t in enumerate(LINES)]
CONTEXT = [ContextPage("001.png", tuple((t, fake_translate(t)) for t in LINES))]


def translator(server, **kw):
    values = dict(base_url=server.base_url, model="test-model", timeout=5.0, max_retries=0, source_lang="ja")
    values.update(kw)
    return make_translator(TranslatorSettings(**values), server.key)


def prompt_of(server, segments, context=()) -> int:
    """The prompt tokens (as the loopback server counts them) of the request for `segments`."""
    server.default, server.n_ctx = "ok", None
    tr = translator(server, context_pages=len(context))
    try:
        tr.translate_page(segments, list(context), page_name="002.png")
    finally:
        tr.close()
    body = server.chats()[-1].body
    server.seen.clear()
    return prompt_tokens(body)


def test_an_answer_cut_at_the_context_splits_the_page_until_it_fits(fake_llm):
    # the whole page's prompt fits, but its answer is cut after 5 tokens: not one item complete
    fake_llm.n_ctx = prompt_of(fake_llm, SEGMENTS) + 5
    fake_llm.default = "context"
    tr = translator(fake_llm, context_pages=0)
    try:
        result = tr.translate_page(SEGMENTS, page_name="002.png")
    finally:
        tr.close()
    assert dict(result.texts) == {s.id: fake_translate(s.text) for s in SEGMENTS}, (result.notes, result.reasons)
    assert not result.error and not result.missing
    assert any("the answer stopped at the server's limit" in n and "halves" in n for n in result.notes)
    sizes = [len(page_of(s.body)["segments"]) for s in fake_llm.chats()]
    assert sizes[0] == 12 and max(sizes[1:]) < 12  # smaller requests after the stop


def test_context_pages_are_dropped_first(fake_llm):
    # with the previous page the answer is cut at once; without it, the page and its answer fit
    # (the server does not say its size, so the backend cannot trim the context beforehand)
    two = SEGMENTS[:2]
    alone = prompt_of(fake_llm, two)
    with_context = prompt_of(fake_llm, two, CONTEXT)
    assert with_context > alone + 60
    fake_llm.n_ctx = with_context + 3
    fake_llm.default = "context"
    fake_llm.serve_props = False  # a server that reports its size gets no context that cannot fit at all
    tr = translator(fake_llm, context_pages=1, context_tokens=4000)
    try:
        result = tr.translate_page(two, CONTEXT, page_name="002.png")
    finally:
        tr.close()
    assert dict(result.texts) == {s.id: fake_translate(s.text) for s in two}, (result.notes, result.reasons)
    chats = fake_llm.chats()
    assert [sum(m["role"] == "user" for m in c.body["messages"]) for c in chats] == [2, 1]  # context dropped
    assert any("without the previous pages" in n for n in result.notes)


@pytest.mark.parametrize("cut", ["length", "no finish reason"])
def test_a_line_that_cannot_fit_alone_names_the_context_size(fake_llm, cut):
    one = [Segment("s0", LINES[0])]
    fake_llm.n_ctx = prompt_of(fake_llm, one) + 4
    fake_llm.default = "context"
    fake_llm.report_finish = cut == "length"  # else the cut JSON alone tells
    tr = translator(fake_llm, context_pages=0)
    try:
        result = tr.translate_page(one, page_name="002.png")  # the prompt fits, the answer is cut
    finally:
        tr.close()
    assert not result.texts and not result.error  # reported with its reason, not a broken page
    assert set(result.missing) == {"s0"}
    for reason in result.reasons.values():
        assert f"server's context ({fake_llm.n_ctx} tokens, as the server reports it) is too small" in reason
        assert "llama-server -c 4096" in reason
    assert not any("not the JSON asked for" in n for n in result.notes) or all(result.reasons.values())
