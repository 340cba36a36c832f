"""The Translation settings dialog: backend, preset, base URL, model, key, languages, context
pages, glossary file, and "Test connection" (lists the server's models).

Nothing is sent anywhere until the user presses Test connection or runs a translation with a
backend chosen here. The key is stored with `keyring` (or, where none works, in a file only the
user can read: the dialog says which); it never goes into settings.json.
"""
from __future__ import annotations

import os
from dataclasses import replace

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.translate.languages import LANGUAGES
from app.translate.presets import PRESETS, PRESETS_BY_NAME, preset_for_url

BACKENDS = (("openai", "OpenAI-compatible server (hosted or local LLM)"), ("deepl", "DeepL"),
            ("offline", "Offline: MarianMT on this computer (Japanese/Korean/Chinese to English)"))


class FittedLabel(QLabel):
    """A word-wrapped label that keeps the height its text needs at its width. In a form a
    wrapped QLabel got one line's height (a dialog's layout sizes itself without asking a
    label its height for its width), so the API-key hint was cut mid-sentence."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWordWrap(True)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt override
        super().setText(text)
        self._fit()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt override
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        need = self.heightForWidth(max(1, self.width()))
        if need > 0 and need != self.minimumHeight():
            self.setMinimumHeight(need)


class TranslationSettingsDialog(QDialog):
    """Edits the translation fields of AppSettings; `values()` are the new fields and
    `typed_key()` the key typed (None = unchanged). `test_requested` is wired by the window."""

    def __init__(self, settings, key_state, parent=None):
        """key_state(provider, base_url) -> str: where the key comes from now (for the hint)."""
        super().__init__(parent)
        self.setWindowTitle("Translation settings")
        self._key_state = key_state
        self._build_server_fields()
        self._build_language_fields()
        self._build_request_fields()
        self._build_glossary_and_test()
        self._lay_out()
        self._load(settings)
        self.backend.currentIndexChanged.connect(lambda _i: self._update())
        self.preset.activated.connect(lambda _i: self._apply_preset())
        self.base_url.editingFinished.connect(self._update)

    # -- the fields --------------------------------------------------------------------------
    def _build_server_fields(self) -> None:
        """Backend, preset, base URL, model, API key and where it comes from."""
        self.backend = QComboBox()
        for key, label in BACKENDS:
            self.backend.addItem(label, key)
        self.preset = QComboBox()
        for p in PRESETS:
            self.preset.addItem(p.label, p.name)
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("https://… /v1")
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.setMinimumContentsLength(24)
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_hint = FittedLabel()
        # an environment key goes to its provider's own servers only, unless tied here to this URL
        self.tie_env = QCheckBox()
        self.tie_env.toggled.connect(lambda _on: self._update_hint())

    def _build_language_fields(self) -> None:
        """From (or Detect) and To: the known languages; To also takes any code typed."""
        self.source = QComboBox()
        self.source.addItem("Detect", "")
        self.target = QComboBox()
        self.target.setEditable(True)
        for code, name in LANGUAGES.items():
            self.source.addItem(f"{name} ({code})", code)
            self.target.addItem(f"{name} ({code})", code)

    def _build_request_fields(self) -> None:
        """What each request carries and how long it may take: context pages, the two timeouts,
        the page image, the story memory."""
        self.context = QSpinBox()
        self.context.setRange(0, 20)
        self.context.setSuffix(" page(s)")
        self.context.setToolTip("Previous pages sent with each page so that names and tone carry over")
        self.timeout = QSpinBox()
        self.timeout.setRange(1, 3600)
        self.timeout.setSuffix(" s")
        self.timeout.setToolTip("The longest wait for the next part of the answer (answers are streamed)")
        self.total_timeout = QSpinBox()
        self.total_timeout.setRange(0, 24 * 3600)
        self.total_timeout.setSuffix(" s")
        self.total_timeout.setSpecialValueText("Automatic (10 min local, 3 min hosted)")
        self.total_timeout.setToolTip("The limit for a whole answer; 0 = 10 minutes for a local server, 3 for a "
                                      "hosted one")
        self.page_image = QComboBox()
        for label, value in (("When the model takes images", "auto"), ("Always", "on"), ("Never", "off")):
            self.page_image.addItem(label, value)
        self.page_image.setToolTip("Send the page image with each block's box numbered, so that the model sees who "
                                   "speaks (found on the first request; a model that refuses images gets text only)")
        self.memory = QCheckBox("Keep a story memory (characters, terms, summary)")
        self.memory.setToolTip("Sent with each page and updated from the model's answers; Translate > Story memory "
                               "shows and edits it")

    def _build_glossary_and_test(self) -> None:
        """The glossary file with Browse…; Test connection and its result."""
        self.glossary_file = QLineEdit()
        self.glossary_file.setPlaceholderText("optional: TSV, 'a -> b # note' lines or JSON")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_glossary)
        self.glossary_row = QWidget()
        row = QHBoxLayout(self.glossary_row)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.glossary_file, 1)
        row.addWidget(browse)
        self.test_button = QPushButton("Test connection")
        self.test_result = FittedLabel()
        self.test_result.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

    def _lay_out(self) -> None:
        """The form, the test row, OK / Cancel."""
        form = self.form = QFormLayout()
        for label, widget in (("Backend", self.backend), ("Preset", self.preset), ("Base URL", self.base_url),
                              ("Model", self.model), ("API key", self.key), ("", self.key_hint),
                              ("", self.tie_env), ("From", self.source), ("To", self.target),
                              ("Context", self.context), ("Timeout", self.timeout),
                              ("Whole answer", self.total_timeout), ("Send the page image", self.page_image),
                              ("", self.memory), ("Glossary file", self.glossary_row)):
            form.addRow(label, widget)
        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addLayout(test_row)
        lay.addWidget(buttons)
        self.resize(620, 0)

    # -- values ------------------------------------------------------------------------------
    def _load(self, s) -> None:
        provider = s.translation_provider or "openai"
        self.backend.setCurrentIndex(max(0, self.backend.findData(provider)))
        preset = s.translation_preset or (preset_for_url(s.translation_base_url).name if s.translation_base_url
                                          else "openai")
        self.preset.setCurrentIndex(max(0, self.preset.findData(preset)))
        self.base_url.setText(s.translation_base_url or (PRESETS_BY_NAME[preset].base_url if provider == "openai"
                                                         else ""))
        self.model.setEditText(s.translation_model or (PRESETS_BY_NAME[preset].model if provider == "openai" else ""))
        self.source.setCurrentIndex(max(0, self.source.findData(s.translation_source)))
        i = self.target.findData(s.translation_target)
        if i >= 0:
            self.target.setCurrentIndex(i)
        else:
            self.target.setEditText(s.translation_target)
        self.context.setValue(s.translation_context_pages)
        self.timeout.setValue(int(round(s.translation_timeout)))
        self.page_image.setCurrentIndex(max(0, self.page_image.findData(s.translation_page_image)))
        self.memory.setChecked(bool(s.translation_memory))
        self.total_timeout.setValue(int(round(s.translation_total_timeout)))
        self.glossary_file.setText(s.translation_glossary_file)
        self._update()

    def values(self) -> dict:
        """The AppSettings translation fields as set in the dialog."""
        target = self.target.currentData() if self.target.currentText() == self.target.itemText(
            self.target.currentIndex()) else self.target.currentText().strip()
        return {
            "translation_provider": self.backend.currentData(),
            "translation_preset": self.preset.currentData() if self.backend.currentData() == "openai" else "",
            "translation_base_url": self.base_url.text().strip(),
            "translation_model": self.model.currentText().strip(),
            "translation_source": self.source.currentData(),
            "translation_target": target or "en",
            "translation_context_pages": self.context.value(),
            "translation_timeout": float(self.timeout.value()),
            "translation_page_image": self.page_image.currentData(),
            "translation_memory": self.memory.isChecked(),
            "translation_total_timeout": float(self.total_timeout.value()),
            "translation_glossary_file": self.glossary_file.text().strip(),
        }

    def typed_key(self) -> str | None:
        """The key typed in the field (None when the field was left empty: keep the stored one)."""
        return self.key.text().strip() or None

    def translator_settings(self):
        """TranslatorSettings for "Test connection" with what the dialog shows now."""
        from app.core.config.settings import AppSettings
        from app.core.translation.run import translator_settings_from

        return translator_settings_from(replace(AppSettings(), **self.values()))

    # -- behaviour ---------------------------------------------------------------------------
    def _apply_preset(self) -> None:
        preset = PRESETS_BY_NAME[self.preset.currentData()]
        if preset.base_url:
            self.base_url.setText(preset.base_url)
        self.model.clear()
        self.model.setEditText(preset.model)
        self._update()

    def _update(self) -> None:
        provider = self.backend.currentData()
        openai = provider == "openai"
        for widget in (self.preset, self.model):
            widget.setEnabled(openai or (widget is self.model and provider == "offline"))
        self.base_url.setEnabled(provider != "offline")
        self.base_url.setPlaceholderText("https://… /v1" if openai else "default: DeepL's own server")
        self.key.setEnabled(provider != "offline" and not (openai and PRESETS_BY_NAME.get(
            self.preset.currentData(), PRESETS[0]).local))
        self.model.lineEdit().setPlaceholderText("" if openai else "default: the store's model for the languages")
        from app.core.config import api_keys

        url = self.base_url.text().strip()
        var = api_keys.env_var_for(provider, url) if provider != "offline" else ""
        own = bool(var) and api_keys.is_own_host(var, provider, url)
        self.tie_env.setVisible(bool(var) and bool(os.environ.get(var, "").strip()) and not own)
        self.tie_env.setText(f"Send ${var} to this server too")
        self.tie_env.blockSignals(True)
        self.tie_env.setChecked(bool(var) and not own and api_keys.env_key_allowed(provider, url))
        self.tie_env.blockSignals(False)
        self._update_hint()

    def _update_hint(self) -> None:
        provider = self.backend.currentData()
        if self.tie_env.isVisible() and self.tie_env.isChecked():
            self.key_hint.setText(f"Using the key in {self.tie_env.text().split()[1]} for this server.")
            return
        self.key_hint.setText(self._key_state(provider, self.base_url.text().strip()) if provider != "offline"
                              else "No key: the model runs on this computer (download it in the model manager).")

    def tied_env(self) -> bool | None:
        """Tie the environment key to this URL (True), untie it (False), or not offered (None)."""
        return self.tie_env.isChecked() if self.tie_env.isVisibleTo(self) else None

    def _browse_glossary(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Glossary file", self.glossary_file.text(),
                                              "Glossaries (*.tsv *.txt *.json);;All files (*)")
        if path:
            self.glossary_file.setText(path)

    def show_models(self, models: list[str]) -> None:
        """Test connection succeeded: list what the server offers, offer them in the model box."""
        current = self.model.currentText().strip()
        openai = self.backend.currentData() == "openai"
        pick = ""
        if openai:
            self.model.clear()
            self.model.addItems(models)
            if not current and len(models) == 1:
                current = models[0]  # the one model a local server serves: nothing to choose
            self.model.setEditText(current)
            if not current and models:  # the box lists them: the user picks one
                pick = "<br><b>Choose one of them in the Model box.</b>"
                self.model.setFocus()
                self.model.lineEdit().setPlaceholderText("choose one of the server's models")
        shown = ", ".join(models[:12]) + (f" … ({len(models)} in all)" if len(models) > 12 else "")
        missing = (f"<br><b>{current!r} is not among them.</b>" if openai and current and current not in models
                   else "")
        self.test_result.setText(f"<span style='color:#1a7f37'>Connected.</span> {shown}{missing}{pick}")

    def show_error(self, message: str) -> None:
        from html import escape

        self.test_result.setText(f"<span style='color:#b42318'>{escape(message)}</span>")
