"""Pure page edits (app.core.document.edits) and the typed settings (app.core.config.settings), without Qt."""
import pytest

from app.core.config.settings import AppSettings, load_settings, save_settings
from app.core.document import edits
from app.core.document.types import Block, Page


def page(n=3):
    blocks = tuple(Block(id=f"b{i}", order=i + 1, kind="bubble", box=(10.0 * i, 0.0, 10.0 * i + 8, 20.0),
                         ocr_text=f"t{i}") for i in range(n))
    return Page(name="p.png", width=100, height=50, blocks=blocks)


def test_text_edit_and_restore():
    p = edits.set_text(page(), "b1", "new")
    assert p.block("b1").text == "new" and p.block("b1").edited
    assert edits.set_text(p, "b1", "t1").block("b1").text is None  # back to the model's text
    assert edits.restore_text(p, "b1").block("b1").display_text == "t1"
    with pytest.raises(KeyError):
        edits.set_text(p, "nope", "x")


def test_a_reading_taken_in_keeps_what_the_user_did_meanwhile():
    from dataclasses import replace

    asked = page(4)  # the page when the reading was asked for
    read = [replace(b, ocr_text=f"new{i}", model="m + adapted", patches=128) for i, b in enumerate(asked.blocks)]
    now = edits.set_text(asked, "b0", "typed meanwhile")
    now = edits.set_translation(now, "b1", "my translation")
    now = edits.set_box(now, "b2", (50, 0, 60, 20))  # moved meanwhile: the reading of its old box is stale
    now = edits.delete_blocks(now, ["b3"])
    now = edits.add_block(now, Block(id="m1", order=0, kind="manual", box=(0, 30, 5, 40), ocr_text="drawn"))
    got = edits.take_reading(now, read)
    b0, b1, b2, m1 = (got.block(i) for i in ("b0", "b1", "b2", "m1"))
    assert (b0.ocr_text, b0.text, b0.model, b0.patches) == ("new0", "typed meanwhile", "m + adapted", 128)
    assert (b1.ocr_text, b1.translation, b1.text) == ("new1", "my translation", None)
    assert b2 == now.block("b2") and m1 == now.block("m1") and got.block("b3") is None
    assert [b.id for b in got.blocks] == [b.id for b in now.blocks]
    # a text typed that the new reading now gives is no longer an edit
    assert edits.take_reading(edits.set_text(asked, "b0", "new0"), read).block("b0").text is None


def test_box_is_clamped_sorted_and_drops_polygon():
    p = edits.set_box(page(), "b0", (120, 60, -5, 10))
    assert p.block("b0").box == (0.0, 10.0, 100.0, 50.0)


def test_add_delete_merge_reorder_renumber():
    p = edits.add_block(page(), Block(id="b1", order=0, kind="manual", box=(0, 0, 5, 5)))
    assert [b.id for b in p.blocks] == ["b0", "b1", "b2", "b1-2"]
    assert [b.order for b in p.blocks] == [1, 2, 3, 4]
    p = edits.delete_blocks(p, ["b0"])
    assert [(b.id, b.order) for b in p.blocks] == [("b1", 1), ("b2", 2), ("b1-2", 3)]
    m = edits.merge_blocks(page(), ["b2", "b0"])
    assert [b.id for b in m.blocks] == ["b0", "b1"]
    assert m.block("b0").ocr_text == "t0 t2" and m.block("b0").box == (0.0, 0.0, 28.0, 20.0)
    r = edits.reorder(page(), ["b2", "b0", "b1"])
    assert [(b.id, b.order) for b in r.blocks] == [("b2", 1), ("b0", 2), ("b1", 3)]
    assert [b.id for b in edits.move_block(page(), "b0", 2).blocks] == ["b1", "b2", "b0"]
    with pytest.raises(KeyError):
        edits.reorder(page(), ["b0"])


def test_settings_round_trip_and_bad_values(tmp_path):
    path = tmp_path / "settings.json"
    s = AppSettings(patches=512, device="cpu").with_recent("/a").with_recent("/b").with_recent("/a")
    save_settings(s, path)
    assert load_settings(path) == s
    assert s.recent_sources == ("/a", "/b")
    path.write_text('{"patches": -3, "device": "tpu", "order": "up", "unknown": 1}', encoding="utf-8")
    loaded = load_settings(path)
    assert (loaded.patches, loaded.device, loaded.order) == (384, "auto", "rtl")
    path.write_text("not json", encoding="utf-8")
    assert load_settings(path) == AppSettings()


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"recent_sources": 5}', "\udcff"])
def test_a_damaged_settings_file_is_kept_aside_and_said(tmp_path, caplog, text):
    import logging
    from dataclasses import replace

    path = tmp_path / "settings.json"
    data = text.encode("utf-8", "surrogateescape")  # the last one is not even UTF-8
    path.write_bytes(data)
    (tmp_path / "settings.json.bad").write_text("an older bad file", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="app.core.config.settings"):
        loaded = load_settings(path)
    assert loaded == AppSettings()
    assert (tmp_path / "settings.json.bad").read_bytes() == data  # the user's file, kept
    assert not path.exists()
    (record,) = [r for r in caplog.records if r.name == "app.core.config.settings"]
    assert record.levelname == "WARNING"
    assert str(path) in record.getMessage() and "settings.json.bad" in record.getMessage()
    save_settings(replace(loaded, patches=512), path)  # the next save writes a good file beside it
    assert load_settings(path).patches == 512 and (tmp_path / "settings.json.bad").read_bytes() == data
