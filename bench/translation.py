"""The translation stage's cost, measured against the loopback servers of the tests.

1. Requests and tokens per page, without context and with 2 context pages (the default), for a
   volume of synthetic manga pages (tools.synth text: the truth of --pages pages). Tokens are the
   server's `usage` (the tokenizer-free estimate in tests/llm_server.py, the same rule as
   app.translate.contract.estimate_tokens).
2. Time per page through the stage (app.core.translation.run + the OpenAI-compatible backend +
   the `openai` client) against the loopback server, and the same requests sent by a bare
   HTTP client (urllib, one POST of the same JSON body): the ratio is the stage's overhead over
   the cheapest possible request.
3. Offline: sentences per second of the tiny MarianMT (tests/translate_marian.py) on the CPU,
   batch 8 against batch 1.

    python bench/translation.py [--pages 12] [--sentences 64]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.document.types import Block, Page, Project  # noqa: E402
from app.core.translation.run import TranslateOptions, translate_pages  # noqa: E402
from app.translate import TranslatorSettings, make_translator  # noqa: E402
from tests.llm_server import FakeLLM  # noqa: E402

IMAGES: dict[str, object] = {}


def synthetic_volume(n: int) -> Project:
    from tools.synth import generate_page

    pages = []
    for i in range(n):
        image, truth = generate_page(9090, i)
        IMAGES[f"{i + 1:03d}.png"] = image
        blocks = tuple(Block(id=f"b{k + 1}", order=k + 1, kind=b.get("kind", "bubble"), box=tuple(b["box"]),
                             ocr_text=b["text"]) for k, b in enumerate(truth["blocks"]))
        pages.append(Page(name=f"{i + 1:03d}.png", blocks=blocks, processed=True))
    return Project(source="/bench", pages=pages)


def run_stage(project, server, context_pages, image: bool = False, memory: bool = False):
    tr = make_translator(TranslatorSettings(base_url=server.base_url, model="test-model", source_lang="ja",
                                            context_pages=context_pages, max_retries=0,
                                            page_image="on" if image else "off", memory=memory), server.key)
    server.seen.clear()
    start = time.perf_counter()
    outcomes = list(translate_pages(project, tr, options=TranslateOptions(context_pages=context_pages, memory=memory),
                                    page_image=IMAGES.get if image else None))
    took = time.perf_counter() - start
    tr.close()
    assert all(o.ok for o in outcomes), [o.error or o.missing for o in outcomes if not o.ok]
    return outcomes, took


def bare_requests(server, bodies) -> float:
    start = time.perf_counter()
    for body in bodies:
        req = urllib.request.Request(server.base_url + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {server.key}",
                                              "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            resp.read()
    return time.perf_counter() - start


def offline(sentences: int) -> dict:
    from tests.translate_marian import JA, write_tiny_marian

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tiny-marian"
        write_tiny_marian(folder)
        texts = [JA[i % len(JA)] + ("、" + JA[(i * 3) % len(JA)] if i % 2 else "") for i in range(sentences)]
        out = {}
        for batch in (1, 8):
            tr = make_translator(TranslatorSettings(provider="offline", model=str(folder), device="cpu",
                                                    batch_size=batch))
            tr.translate_texts(texts[:4])  # warm-up
            start = time.perf_counter()
            tr.translate_texts(texts)
            out[batch] = sentences / (time.perf_counter() - start)
            tr.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=12)
    ap.add_argument("--sentences", type=int, default=64)
    args = ap.parse_args()
    project = synthetic_volume(args.pages)
    blocks = sum(len(p.blocks) for p in project.pages)
    server = FakeLLM()
    try:
        print(f"volume: {args.pages} synthetic pages, {blocks} blocks "
              f"({statistics.mean(len(b.ocr_text) for p in project.pages for b in p.blocks):.1f} characters a block)")
        print("\n1. requests and tokens per page")
        print(f"{'context':>10} {'requests/page':>14} {'prompt tok/page':>16} {'answer tok/page':>16}")
        for ctx in (0, 2):
            outcomes, _ = run_stage(project, server, ctx)
            n = len(outcomes)
            print(f"{ctx:>8} p {sum(o.requests for o in outcomes) / n:>14.2f} "
                  f"{sum(o.prompt_tokens for o in outcomes) / n:>16.0f} {sum(o.completion_tokens for o in outcomes) / n:>16.0f}")
        print("\n1b. with the page image and the story memory (2 context pages; tokens estimated from the requests,")
        print("    an image part counted as contract.IMAGE_TOKENS; JPEG size of the image part)")
        from app.translate.contract import messages_tokens

        print(f"{'image':>6} {'memory':>7} {'requests/page':>14} {'prompt tok/page':>16} {'answer tok/page':>16} "
              f"{'image kB/page':>14}")
        for image, memory in ((False, False), (False, True), (True, False), (True, True)):
            outcomes, _ = run_stage(project, server, 2, image=image, memory=memory)
            n = len(outcomes)
            chats = server.chats()
            prompt = sum(messages_tokens(c.body["messages"]) for c in chats) / n
            kb = sum(len(p["image_url"]["url"]) * 3 / 4 / 1024 for c in chats
                     for p in (c.body["messages"][-1]["content"] if isinstance(c.body["messages"][-1]["content"], list)
                               else []) if p.get("type") == "image_url") / n
            print(f"{'on' if image else 'off':>6} {'on' if memory else 'off':>7} "
                  f"{sum(o.requests for o in outcomes) / n:>14.2f} {prompt:>16.0f} "
                  f"{sum(o.completion_tokens for o in outcomes) / n:>16.0f} {kb:>14.1f}")
        print("\n2. time per page against the loopback server (median of 3 runs)")
        stage, bare = [], []
        for _ in range(3):
            _outcomes, took = run_stage(project, server, 2)
            bodies = [s.body for s in server.chats()]
            stage.append(took / args.pages)
            bare.append(bare_requests(server, bodies) / args.pages)
        s, b = statistics.median(stage), statistics.median(bare)
        print(f"   stage (translate_pages + openai client): {s * 1000:.1f} ms/page")
        print(f"   bare urllib POST of the same bodies:      {b * 1000:.1f} ms/page")
        print(f"   ratio stage / bare: {s / b:.2f}  (overhead {max(0.0, s - b) * 1000:.1f} ms/page)")
    finally:
        server.close()
    print(f"\n3. offline tiny MarianMT on the CPU, {args.sentences} sentences")
    rates = offline(args.sentences)
    print(f"   batch 1: {rates[1]:.1f} sentences/s; batch 8: {rates[8]:.1f} sentences/s; "
          f"ratio {rates[8] / rates[1]:.2f}")


if __name__ == "__main__":
    main()
