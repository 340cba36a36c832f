"""The demo models as a first-class choice, used as a new user does: listed in the toolbar's
boxes and the model manager as "demo: synthetic text only", a notice that stays while they
read pages that are not the samples, and a failed read's message ("… is not installed") that
goes once the demo models are chosen and read."""
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.models.manifest import DEFAULTS
from app.ui.models import status as model_status
from app.ui.models.manager import ModelManagerDialog

NOVA, DETECTOR = DEFAULTS["ocr"], DEFAULTS["detector"]


def _choose(combo, label_part: str) -> None:
    """Pick the entry whose label holds `label_part`, as a click in the box does."""
    index = next(i for i in range(combo.count()) if label_part in combo.itemText(i))
    combo.setCurrentIndex(index)
    combo.activated.emit(index)


def test_demo_models_are_listed_chosen_and_clear_the_missing_message(make_window, pages, qtbot):
    w = make_window(model=NOVA, detector=DETECTOR)  # a new user: nothing downloaded
    w.session.open_path(pages)
    assert "not installed" in w.banner.label.text()
    labels = [w.act.model.itemText(i) for i in range(w.act.model.count())]
    assert f"hayai-demo-ocr ({model_status.DEMO_LABEL})" in labels
    assert "not installed" in w.act.model.toolTip()  # the whole label of the choice now
    # reading with the uninstalled Nova fails and says so
    with qtbot.waitSignal(w.run_finished, timeout=60000):
        w.slots.action_run_all()
    assert w.notice.isVisible() and "not installed" in w.notice.label.text()
    _choose(w.act.model, model_status.DEMO_LABEL)
    _choose(w.act.detector, model_status.DEMO_LABEL)
    assert model_status.is_demo(w.settings.model) and model_status.is_demo(w.settings.detector)
    # the missing-model messages went with their cause; the demo notice stays while they read
    assert not w.notice.isVisible()
    assert "not installed" not in w.banner.label.text()
    assert "These pages are not the samples" in w.banner.label.text()
    assert w.banner.isVisible() and not w.banner.close_button.isVisibleTo(w)
    with qtbot.waitSignal(w.run_finished, timeout=120000) as done:
        w.run_pages(w.doc.page_names())
    assert done.args == ["done"] and not w.notice.isVisible()
    assert "These pages are not the samples" in w.banner.label.text()


def test_the_model_manager_offers_the_demo_models(make_window, qtbot):
    w = make_window(model=NOVA, detector=DETECTOR)
    seen = []

    def use_both():
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, ModelManagerDialog):
            QTimer.singleShot(50, use_both)
            return
        rows = {dialog.table.item(r, 0).text(): [dialog.table.item(r, c).text() for c in range(5)]
                for r in range(dialog.table.rowCount())}
        seen.append(rows)
        for name in ("hayai-demo-ocr", "hayai-demo-detector"):
            dialog.select(name)
            if dialog.buttons["use"].isEnabled() and not dialog.buttons["remove"].isEnabled():
                dialog.buttons["use"].click()
        dialog.accept()

    QTimer.singleShot(0, use_both)
    w.models.open_manager()
    rows = seen[0]
    assert model_status.DEMO_LABEL in rows["hayai-demo-ocr"][1] and rows["hayai-demo-ocr"][3] == "bundled"
    assert model_status.DEMO_LABEL in rows["hayai-demo-detector"][1]
    assert model_status.is_demo(w.settings.model) and model_status.is_demo(w.settings.detector)
    assert "Demo models" in w.banner.label.text() and "not installed" not in w.banner.label.text()
