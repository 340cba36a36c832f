"""Pages marked "check the order" through the real window: the demo models read synthetic pages,
the pages whose order the layout rules guessed are marked in the page list and the Script view
(filterable), their numbers are drawn large, F8 steps through them, a renumbering by hand clears
the mark (the hand order stays), and the mark is kept in the project file."""
from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.ui.editor.page_list import CHECK_MARK, NAME_ROLE
from app.ui.script.model import ORDER_CHECK


def _read_all(w, qtbot, names, timeout=180000):
    with qtbot.waitSignal(w.run_finished, timeout=timeout) as blocker:
        w.run_pages(names)
    return blocker.args[0]


def _row_text(w, name: str) -> str:
    lst = w.page_list
    return next(lst.item(r).text() for r in range(lst.count()) if lst.item(r).data(NAME_ROLE) == name)


def test_pages_to_check_are_marked_stepped_through_and_cleared_by_hand(make_window, pages, qtbot, tmp_path):
    w = make_window()
    w.session.open_path(pages)
    qtbot.waitUntil(w.view.has_image, timeout=10000)
    names = w.doc.page_names()
    assert _read_all(w, qtbot, names) == "done"
    marked = [n for n in names if w.doc.page(n).order_check]
    unmarked = [n for n in names if n not in marked]
    # the classic synthetic pages scatter a panel's bubbles: most are marked, not all
    assert marked and unmarked, [w.doc.page(n).order_check for n in names]

    # the page list
    for n in names:
        assert (CHECK_MARK in _row_text(w, n)) == (n in marked), n

    # the Script view, filtered to the marked pages: exactly their blocks
    view = w.script
    view.status_box.setCurrentIndex(view.status_box.findData(ORDER_CHECK))
    shown = {view.proxy.index(r, 0).data(Qt.ItemDataRole.UserRole + 2)[0] for r in range(view.proxy.rowCount())}
    assert shown == set(marked)
    assert view.proxy.rowCount() == sum(len(w.doc.page(n).blocks) for n in marked)

    # F8 goes to the next marked page, round the volume; its numbers are large, the note says why
    w.show_page(unmarked[0])
    w.view.setFocus()
    QTest.keyClick(w.view, Qt.Key.Key_F8)
    after = names[names.index(unmarked[0]) + 1:] + names[:names.index(unmarked[0]) + 1]
    first = next(n for n in after if n in marked)
    assert w.current == first
    assert all(item.badge.prominent and item.badge.isVisible() for item in w.view._items.values())
    qtbot.waitUntil(w.order_checks.note.isVisible, timeout=10000)  # once the page's image is shown
    assert w.doc.page(first).order_check in w.order_checks.note.text()
    # the note shares the status bar with the status line: both show part of their text
    assert w.status_label.width() >= 0.8 * w.order_checks.note.width() > 0  # was 115 against 559 px
    QTest.keyClick(w.view, Qt.Key.Key_F8, Qt.KeyboardModifier.ShiftModifier)  # and back
    before = [n for n in reversed(names[:names.index(first)] + names[names.index(first) + 1:]) if n in marked]
    assert w.current == (before[0] if before else first)
    w.show_page(unmarked[0])
    assert not any(item.badge.prominent for item in w.view._items.values())
    qtbot.waitUntil(lambda: not w.order_checks.note.isVisible(), timeout=10000)

    # renumbering by hand clears the mark, everywhere; the hand order stays
    w.show_page(first)
    ids = [b.id for b in w.doc.page(first).blocks]
    by_hand = [ids[-1], *ids[1:-1], ids[0]]
    w.panel.reorder_requested.emit(by_hand)
    page = w.doc.page(first)
    assert page.order_check is None and page.order_by_hand and [b.id for b in page.blocks] == by_hand
    assert CHECK_MARK not in _row_text(w, first)
    assert not w.order_checks.note.isVisible()
    assert first not in {view.proxy.index(r, 0).data(Qt.ItemDataRole.UserRole + 2)[0]
                         for r in range(view.proxy.rowCount())}
    assert not any(item.badge.prominent for item in w.view._items.values())
    # undo brings the mark back, redo clears it again
    w.undo_stack.undo()
    assert w.doc.page(first).order_check and CHECK_MARK in _row_text(w, first)
    w.undo_stack.redo()
    assert w.doc.page(first).order_check is None

    # kept in the project file, and when the volume is opened again
    assert w.slots.action_save()
    saved = json.loads((pages / ".hayai-project.json").read_text(encoding="utf-8"))
    assert {p["name"] for p in saved["pages"] if p.get("order_check")} == set(marked) - {first}
    w2 = make_window()
    w2.session.open_path(pages)
    qtbot.waitUntil(w2.view.has_image, timeout=10000)
    assert [n for n in names if w2.doc.page(n).order_check] == [n for n in marked if n != first]
    assert w2.doc.page(first).order_by_hand and [b.id for b in w2.doc.page(first).blocks] == by_hand
