import json


def test_open_folder_lists_pages_and_shows_first(make_window, pages, qtbot):
    w = make_window()
    assert w.session.open_path(pages)
    assert w.page_list.count() == 3
    assert w.current == "page-001.png"
    qtbot.waitUntil(lambda: w.view.has_image(), timeout=10000)
    assert w.view.sceneRect().width() == json.loads((pages / "page-001.json").read_text("utf-8"))["width"]
    qtbot.waitUntil(w.page_list.thumbnails_done, timeout=10000)


def test_unreadable_page_is_marked_and_the_rest_opens(make_window, pages, qtbot):
    (pages / "page-002.png").write_bytes(b"not an image")
    w = make_window()
    assert w.session.open_path(pages)
    qtbot.waitUntil(w.page_list.thumbnails_done, timeout=10000)
    qtbot.waitUntil(lambda: "cannot be read" in w.page_list.item(1).text(), timeout=5000)
    assert "page-002.png" in w.page_list.item(1).toolTip()
    w.show_page("page-002.png")
    qtbot.waitUntil(lambda: w.notice.isVisible() and w.notice.kind == "error", timeout=5000)
    w.show_page("page-003.png")
    qtbot.waitUntil(w.view.has_image, timeout=10000)
