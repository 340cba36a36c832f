from app.ui import session


def test_open_folder_lists_pages_and_shows_first(make_window, pages, qtbot):
    w = make_window()
    assert session.open_path(w, pages)
    assert w.page_list.count() == 3
    assert w.current == "page-001.png"
    qtbot.waitUntil(lambda: w.view.has_image(), timeout=10000)
    assert w.view.sceneRect().width() == 480
    qtbot.waitUntil(w.page_list.thumbnails_done, timeout=10000)
