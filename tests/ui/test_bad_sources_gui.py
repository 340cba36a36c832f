"""The window opens volumes full of bad pages (tests/bad_sources.py): every page is listed, a
bad one says what is wrong naming its file when shown, the good ones show, nothing crashes."""
from __future__ import annotations

from tests.bad_sources import bad_archive, bad_folder


def _text(w) -> str:
    return w.notice.label.text().replace("\u200b", "")


def _shown(w, qtbot, name: str, error: str | None) -> None:
    w.show_page(name)
    if error is None:
        qtbot.waitUntil(w.view.has_image, timeout=30000)
        return
    base = name.rsplit("/", 1)[-1]
    qtbot.waitUntil(lambda: w.notice.isVisible() and base in _text(w), timeout=30000)
    assert error.lower() in _text(w).lower(), _text(w)


def test_the_window_opens_bad_volumes_page_by_page(make_window, tmp_path, qtbot):
    folder, in_folder = bad_folder(tmp_path / "in")
    archive, in_archive = bad_archive(tmp_path / "in", absolute_member=str(tmp_path / "escaped" / "abs.png"))
    w = make_window()
    for source, expected in ((folder, in_folder), (archive, in_archive)):
        assert w.session.open_path(source)
        assert sorted(w.doc.page_names()) == sorted(expected)
        assert w.page_list.count() == len(expected)
        for name, error in expected.items():
            _shown(w, qtbot, name, error)
        qtbot.waitUntil(w.page_list.thumbnails_done, timeout=30000)
        marked = {w.page_list.item(i).data(0x0100): w.page_list.item(i).text() for i in range(w.page_list.count())}
        assert all("cannot be read" in marked[n] for n, e in expected.items() if e is not None), marked
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "x.png").exists()
