"""The script as CSV / TSV in the window: File menu items, import as one undoable step."""
from app.core.exports.script_table import export_script
from app.core.project.codec import project_to_dict
from tests.ui.test_editing import add_blocks


def _content(project) -> dict:
    """The project file's content without the moment it was written (two calls can straddle a second)."""
    d = project_to_dict(project)
    d.pop("saved_at", None)
    return d



def _menu_texts(menu) -> list[str]:
    out = []
    for action in menu.actions():
        out.append(action.text())
        if action.menu():
            out += _menu_texts(action.menu())
    return out


def test_file_menu_offers_the_script(make_window):
    w = make_window()
    file_menu = w.menuBar().actions()[0].menu()
    texts = _menu_texts(file_menu)
    assert "Script as CSV…" in texts and "Script as TSV…" in texts and "Script from CSV / TSV…" in texts


def test_script_import_is_one_undo_step_and_reports_rows(make_window, pages, tmp_path):
    w = make_window()
    w.session.open_path(pages)
    add_blocks(w, "page-001.png", 2)
    add_blocks(w, "page-002.png", 1)
    before = _content(w.doc.project)
    path = export_script(w.doc.project, tmp_path / "s.csv")
    path.write_text("page,block_id,translation\n1,b0,First\n2,b0,Second\n2,b5,Lost\n", encoding="utf-8")
    depth = w.undo_stack.count()
    changed, warnings = w.session.import_script_from(path)
    assert changed == 2 and len(warnings) == 1 and "b5" in warnings[0]
    assert w.doc.page("page-001.png").block("b0").translation == "First"
    assert w.doc.page("page-002.png").block("b0").translation == "Second"
    assert w.undo_stack.count() == depth + 1
    w.undo_stack.undo()
    assert _content(w.doc.project) == before
