"""File > Export > For mokuro readers / Reader page, and a .mokuro volume opened in the window:
the GUI writes what `hayai-desktop export` writes (app.core.exports.mokuro), keeps the series' UUID in
the project, and opens a mokuro volume with its blocks."""
import json

from app.core.exports import mokuro
from app.core.project.files import load_project, save_project
from app.core.project.paths import find_project_file
from tests.mokuro_data import copy_demo_pages, demo_project


def _open_demo(make_window, tmp_path, qtbot):
    src = copy_demo_pages(tmp_path / "Series" / "vol1")
    save_project(demo_project(src))
    w = make_window()
    assert w.session.open_path(src)
    qtbot.waitUntil(lambda: w.view.has_image(), timeout=10000)
    return w, src


def test_export_for_mokuro_readers_is_the_cli_export_and_keeps_the_series_uuid(make_window, tmp_path, qtbot):
    w, src = _open_demo(make_window, tmp_path, qtbot)
    exporter = w.reader_exporter
    labels = [a.text() for a in w.export_menu.actions()]
    assert "For mokuro readers (.mokuro + pages + reader page)…" in labels and "Reader page (one HTML file)…" in labels
    out = tmp_path / "library" / "Series"
    with qtbot.waitSignal(exporter.finished, timeout=60000) as sig:
        exporter.start("mokuro", str(out))
    assert sig.args == ["done"]
    from PySide6.QtWidgets import QProgressDialog

    # the progress dialog is gone once the export ends (it does not block the window)
    qtbot.waitUntil(lambda: not any(d.isVisible() for d in w.findChildren(QProgressDialog)), timeout=5000)
    assert exporter.dialog is None
    data = json.loads((out / "vol1.mokuro").read_text(encoding="utf-8"))
    assert (out / "vol1.html").is_file() and len(list((out / "vol1").iterdir())) == 4
    assert "Exported vol1.mokuro and 4 page(s) and vol1.html" in w.status_label.text()
    # the series' UUID is in the open project and, nothing else being unsaved, in its file
    assert w.doc.project.series_uuid == data["title_uuid"]
    assert load_project(find_project_file(src)).series_uuid == data["title_uuid"]
    assert not w.is_dirty()
    # what the window exported is what the command / library function writes for the saved project
    ref = mokuro.export_mokuro(load_project(find_project_file(src)), tmp_path / "ref" / "Series")
    assert json.loads(ref.mokuro.read_text(encoding="utf-8")) == data
    # the reader page alone, one file
    with qtbot.waitSignal(exporter.finished, timeout=60000) as sig:
        exporter.start("reader", str(tmp_path / "one.html"))
    assert sig.args == ["done"]
    assert (tmp_path / "one.html").read_text(encoding="utf-8").count('src="data:image/png;base64,') == 4
    assert "Exported the reader page of 4 page(s)" in w.status_label.text()


def test_a_mokuro_volume_opens_in_the_window(make_window, tmp_path, qtbot):
    src = copy_demo_pages(tmp_path / "pages" / "vol1")
    volume = mokuro.export_mokuro(demo_project(src), tmp_path / "Series", reader_page=False)
    w = make_window()
    assert w.session.open_path(volume.mokuro)  # the .mokuro file itself
    qtbot.waitUntil(lambda: w.view.has_image(), timeout=10000)
    assert w.doc.source == str((tmp_path / "Series" / "vol1").resolve())
    assert w.settings.recent_sources[0] == w.doc.source  # the page folder: its autosave, its project
    want = demo_project(src)
    assert [p.name for p in w.doc.project.pages] == [p.name for p in want.pages]
    for page, expected in zip(w.doc.project.pages, want.pages, strict=True):
        assert [(b.display_text, b.box, b.vertical, b.translation) for b in page.blocks] == \
               [(b.display_text, b.box, b.vertical, b.translation) for b in expected.blocks]
    assert w.doc.project.series_uuid == json.loads(volume.mokuro.read_text(encoding="utf-8"))["title_uuid"]
    # a folder holding several volumes says which to open
    mokuro.export_mokuro(demo_project(src), tmp_path / "Series", volume="vol2", reader_page=False)
    assert not w.session.open_path(tmp_path / "Series")
    assert "holds 2 mokuro volumes" in w.notice.label.text()
