"""The window translating against a loopback server that answers "The" for every line (what a
small model did on a real volume): nothing counted, the blocks flagged and asked for again by
the next run, the story memory untouched, the notice naming the pages and blocks, and Check
consistency listing every one of them."""
from dataclasses import replace

from app.core.config import api_keys
from app.core.document.types import Block

LINES = {"page-001.png": ["このまちにはふるいとしょかんがある。", "わたしはまいにちそこへいく。"],
         "page-002.png": ["きょうもあめがふっている。", "ともだちがえきでまっているよ。"],
         "page-003.png": ["でも、かさをわすれてしまった。", "はい"]}


def test_a_run_answered_the_everywhere_is_not_taken(make_window, pages, fake_llm, qtbot, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_llm.key)
    api_keys.tie_env_key("openai", fake_llm.base_url)
    fake_llm.default = "oracle"
    fake_llm.oracle = {t: "The" for lines in LINES.values() for t in lines} | {"はい": "Yes"}
    w = make_window()
    w.session.open_path(pages)
    for name, lines in LINES.items():
        blocks = tuple(Block(id=f"b{i + 1}", order=i + 1, kind="bubble", box=(20 + 100 * i, 30, 90 + 100 * i, 200),
                             vertical=True, ocr_text=t) for i, t in enumerate(lines))
        w.edit(lambda p, b=blocks: replace(p, blocks=b, processed=True), "read", page=name)
    w.update_settings(translation_provider="openai", translation_preset="custom", translation_base_url=fake_llm.base_url,
                      translation_model="test-model", translation_target="en")
    memory = w.doc.project.memory
    with qtbot.waitSignal(w.translation.run_finished, timeout=30000):
        assert w.translation.translate_all()
    flagged = [(name, b) for name in LINES for b in w.doc.page(name).blocks if b.display_text != "はい"]
    assert all(b.looks_degenerate and not b.translation and b.needs_translation for _n, b in flagged)
    assert w.doc.page("page-003.png").blocks[1].translation == "Yes"  # an honest short answer is kept
    assert w.doc.project.memory == memory  # what the degenerate answers proposed is not the story
    assert "Translated: 1 block(s)" in w.translation.status.text()
    notice = w.notice.label.text().replace("\u200b", "")
    assert w.notice.isVisible() and "Some blocks were not translated: 5 on 3 page(s)" in notice
    for where in ("page 1 (page-001.png): blocks 1, 2 (looks degenerate", "page 2 (page-002.png): blocks 1, 2 (looks "
                  "degenerate", "page 3 (page-003.png): block 1 (looks degenerate"):
        assert where in notice, notice
    # the block panel says why the machine's answer is not used
    w.show_page("page-001.png")
    w.view.select_block("b1")
    w.view._on_selection_changed()
    assert w.panel.current_id == "b1" and "looks degenerate: not used" in w.panel.machine.text()
    # Check consistency lists every flagged block
    check = w.translation.series.check_panel
    with qtbot.waitSignal(check.checked, timeout=60000):
        w.translation.series.open_check()
    rows = {(check.table.item(r, 0).text(), check.table.item(r, 1).text()) for r in range(check.table.rowCount())}
    for name, b in flagged:
        assert (f"{name} #{b.order}", "looks degenerate") in rows
