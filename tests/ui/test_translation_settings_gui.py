"""Translation settings as a user meets them: the real dialog (Translate > Translation settings)
answered through its own fields and buttons. With the Model field empty, Test connection lists
the loopback server's models (GET /v1/models) to pick from; the API-key hint is shown whole in
both themes and at two font sizes."""
import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from app.ui.translate.settings_dialog import TranslationSettingsDialog


def _answer_dialog(qtbot, steps: list) -> list:
    """Run `steps` (callables taking the dialog) one after another on the active Translation
    settings dialog, each once the previous returned True; what went wrong is collected."""
    errors: list[str] = []
    deadline = time.monotonic() + 20

    def tick():
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, TranslationSettingsDialog):
            QTimer.singleShot(50, tick)
            return
        try:
            assert time.monotonic() < deadline, f"the dialog never got there: {dialog.test_result.text()!r}"
            if steps[0](dialog):
                steps.pop(0)
        except AssertionError as exc:
            errors.append(str(exc) or "assertion failed")
            dialog.reject()
            return
        if steps:
            QTimer.singleShot(50, tick)

    QTimer.singleShot(0, tick)
    return errors


def test_an_empty_model_field_lists_the_servers_models_to_pick_from(make_window, fake_llm, qtbot):
    w = make_window()
    w.update_settings(translation_provider="openai", translation_preset="custom", translation_base_url=fake_llm.base_url,
                      translation_model="")

    def start(d):
        assert d.base_url.text() == fake_llm.base_url and d.model.currentText() == ""
        d.key.setText(fake_llm.key)  # typed, as the hint asks
        d.test_button.click()
        return True

    def listed(d):
        text = d.test_result.text()
        if "Connected" not in text:
            assert "No model" not in text and "--model" not in text, text
            return False
        assert "Choose one of them in the Model box" in text
        assert [d.model.itemText(i) for i in range(d.model.count())] == ["other-model", "test-model"]
        assert d.model.currentText() == ""  # two models: the user picks, nothing is picked for them
        d.model.setCurrentIndex(d.model.findText("test-model"))
        d.accept()
        return True

    errors = _answer_dialog(qtbot, [start, listed])
    accepted = w.translation.open_settings()
    assert not errors and accepted, errors
    assert w.settings.translation_model == "test-model"
    assert [s.path for s in fake_llm.seen if s.path.endswith("/models")]  # asked the server


def test_one_model_on_the_server_is_taken(make_window, fake_llm, qtbot):
    fake_llm.models = ("gemma-3-270m",)
    w = make_window()
    w.update_settings(translation_provider="openai", translation_preset="custom", translation_base_url=fake_llm.base_url,
                      translation_model="")

    def start(d):
        d.key.setText(fake_llm.key)
        d.test_button.click()
        return True

    def listed(d):
        if "Connected" not in d.test_result.text():
            return False
        assert d.model.currentText() == "gemma-3-270m"
        d.accept()
        return True

    errors = _answer_dialog(qtbot, [start, listed])
    accepted = w.translation.open_settings()
    assert not errors and accepted, errors
    assert w.settings.translation_model == "gemma-3-270m"


def test_a_translation_without_a_model_says_so_and_names_the_server(fake_llm):
    import pytest

    from app.translate import make_translator
    from app.translate.base import Segment, TranslationError, TranslatorSettings

    translator = make_translator(TranslatorSettings(provider="openai", base_url=fake_llm.base_url, model=""),
                                 fake_llm.key)
    try:
        assert translator.list_models() == ["other-model", "test-model"]  # listing needs no model
        with pytest.raises(TranslationError) as caught:
            translator.translate_page([Segment("s1", "おはよう")])
    finally:
        translator.close()
    assert caught.value.fatal and "No model chosen" in str(caught.value) and "127.0.0.1" in str(caught.value)
    assert not fake_llm.chats()  # nothing sent


def test_the_key_hint_is_shown_whole_in_both_themes_and_sizes(make_window, qtbot):
    from app.ui.shell.main import apply_theme
    from app.ui.translate.actions import key_state

    app = QApplication.instance()
    w = make_window()
    w.update_settings(translation_provider="openai", translation_preset="custom",
                      translation_base_url="https://llm.example.org/v1")
    font, palette = app.font(), app.palette()
    try:
        for theme in ("light", "dark"):
            apply_theme(app, theme)
            for points in (9, 14):
                big = app.font()
                big.setPointSize(points)
                app.setFont(big)
                dialog = TranslationSettingsDialog(w.settings, key_state, w)
                qtbot.addWidget(dialog)
                dialog.show()
                qtbot.waitExposed(dialog)
                qtbot.wait(50)
                hint = dialog.key_hint
                assert len(hint.text()) > 60  # a sentence long enough to wrap
                need = hint.heightForWidth(hint.width())
                assert hint.height() >= need > hint.fontMetrics().height() * 1.5, (theme, points, hint.height(), need)
                dialog.close()
    finally:
        app.setFont(font)
        app.setPalette(palette)
