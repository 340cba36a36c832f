"""The page image and the story memory in the requests, against the loopback server:
the image decoded, of the size asked, with numbered boxes where the blocks are; a model that
refuses images found on the first request, the run going on as text only, remembered; the
memory sent with each page, the model's proposals merged into the project's, the user's entries
kept, the ids unchanged."""
import numpy as np
import pytest
from PIL import Image

from app.core.translation.run import TranslateOptions, translate_pages
from app.translate import Segment, TranslatorSettings
from app.translate.capabilities import CapabilityStore
from app.translate.memory import Character, StoryMemory
from app.translate.openai_backend import OpenAITranslator
from app.translate.page_image import COLOURS
from tests.llm_server import fake_translate, image_of, page_of
from tests.translate_data import make_project


def translator(server, store=None, **kw):
    values = dict(base_url=server.base_url, model="test-model", timeout=5.0, max_retries=0, source_lang="ja")
    values.update(kw)
    return OpenAITranslator(TranslatorSettings(**values), server.key, store=store or CapabilityStore(None))


def page(width=1200, height=1800):
    return Image.new("RGB", (width, height), (255, 255, 255))


SEGMENTS = [Segment("a", "タナカさん、おはよう！", (100.0, 100.0, 500.0, 400.0)),
            Segment("b", "おはよう、ユキ。", (700.0, 900.0, 1100.0, 1500.0))]


def test_the_page_goes_scaled_with_numbered_boxes_where_the_blocks_are(fake_llm):
    tr = translator(fake_llm, image_max_side=900)
    result = tr.translate_page(SEGMENTS, page_image=page(), page_name="001.png")
    tr.close()
    assert dict(result.texts) == {s.id: fake_translate(s.text) for s in SEGMENTS} and result.image_sent
    img = image_of(fake_llm.chats()[0].body)
    assert img.format == "JPEG" and img.size == (600, 900)  # longest side 900, aspect kept
    px = np.asarray(img.convert("RGB")).astype(int)
    scale = 0.5
    for i, s in enumerate(SEGMENTS):
        x0, y0, x1, y1 = (round(v * scale) for v in s.box)
        edge = px[(y0 + y1) // 2, x0 - 1:x0 + 2]  # the box's left side, half way down
        assert np.abs(edge - np.array(COLOURS[i])).sum(axis=1).min() < 90, (s.id, edge)
        inside = px[(y0 + y1) // 2, (x0 + x1) // 2]
        assert inside.min() > 230  # the page itself is not painted over
    # the label of each box is the id the request uses for it: b1 drawn at the first box
    label_area = px[max(0, round(100 * scale) - 30):round(100 * scale), round(100 * scale):round(100 * scale) + 40]
    assert (np.abs(label_area - np.array(COLOURS[0])).sum(axis=2) < 90).mean() > 0.15
    assert [s["id"] for s in page_of(fake_llm.chats()[0].body)["segments"]] == ["b1", "b2"]


def test_a_model_that_refuses_images_gets_text_and_it_is_remembered(fake_llm, tmp_path):
    fake_llm.default = "refuse_images"
    store = CapabilityStore(tmp_path / "caps.json")
    tr = translator(fake_llm, store=store)
    result = tr.translate_page(SEGMENTS, page_image=page())
    assert dict(result.texts) == {s.id: fake_translate(s.text) for s in SEGMENTS} and not result.image_sent
    assert any("does not take images" in n for n in result.notes)
    chats = fake_llm.chats()
    assert image_of(chats[0].body) is not None and image_of(chats[1].body) is None
    assert not tr.takes_images()  # the stage then does not even load the next page's image
    tr.close()
    again = translator(fake_llm, store=CapabilityStore(tmp_path / "caps.json"))
    assert not again.takes_images()
    again.close()
    forced = translator(fake_llm, page_image="off")
    fake_llm.default = "ok"
    forced.translate_page(SEGMENTS, page_image=page())
    forced.close()
    assert image_of(fake_llm.chats()[-1].body) is None


def test_the_stage_sends_each_page_image_and_the_memory_grows(fake_llm):
    project = make_project()
    project.memory = StoryMemory((Character("ユキ", "Yukiko", "she", by_user=True),))
    loaded = []

    def images(name):
        loaded.append(name)
        return page(400, 600)
    tr = translator(fake_llm)
    outcomes = list(translate_pages(project, tr, options=TranslateOptions(context_pages=1), page_image=images))
    tr.close()
    assert loaded == ["001.png", "002.png", "003.png", "004.png"] and all(o.image_sent for o in outcomes)
    first = page_of(fake_llm.chats()[0].body)
    assert first["memory"]["characters"] == [{"source": "ユキ", "target": "Yukiko", "notes": "she"}]
    schema = fake_llm.chats()[0].body["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["translations", "memory"]
    merged = outcomes[0].memory
    by = {c.source: c for c in merged.characters}
    assert by["ユキ"].target == "Yukiko" and by["タナカ"].target == fake_translate("タナカ")  # user kept, new added
    second = page_of(fake_llm.chats()[1].body)
    assert {c["source"] for c in second["memory"]["characters"]} == {"ユキ", "タナカ"}
    assert second["memory"]["summary"] == "On 001.png: 3 lines."
    for o in outcomes:  # the ids and the texts are what they would be without the memory
        assert set(o.texts) == {b.id for b in project.pages[int(o.name[:3]) - 1].blocks}


def test_memory_off_sends_none_and_asks_none(fake_llm):
    project = make_project()
    tr = translator(fake_llm, memory=False)
    outcomes = list(translate_pages(project, tr, options=TranslateOptions(memory=False)))
    tr.close()
    assert all(o.memory is None for o in outcomes)
    for seen in fake_llm.chats():
        assert "memory" not in page_of(seen.body)
        assert "memory" not in seen.body["response_format"]["json_schema"]["schema"]["properties"]


@pytest.mark.parametrize("mode", ["auto", "on"])
def test_the_cli_reads_the_pages_of_a_source_for_the_image(fake_llm, tmp_path, monkeypatch, mode):
    import shutil

    from app.cli import main
    from app.core.project.files import load_project, save_project
    from app.core.project.paths import find_project_file
    from tests.conftest import ROOT

    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    folder = tmp_path / "vol"
    folder.mkdir()
    project = make_project(str(folder))
    for p in project.pages:
        shutil.copyfile(ROOT / "app" / "resources" / "samples" / "page_0000.png", folder / p.name)
    save_project(project)
    code = main(["translate", str(folder), "--provider", "openai", "--base-url", fake_llm.base_url, "--model",
                 "test-model", "--to", "en", "--page-image", mode, "--use-env-key", "--out", str(tmp_path / "o.json")])
    assert code == 0
    assert all(image_of(s.body) is not None for s in fake_llm.chats())
    saved = load_project(find_project_file(folder))
    assert {c.source for c in saved.memory.characters} >= {"タナカ", "ユキ"}
