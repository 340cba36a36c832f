"""Help > About: what this is, its licence (with its text) and the third-party notices, the
versions that matter in a bug report, the device in use, where settings, projects, models and
logs live, and links."""
from __future__ import annotations

import platform
from html import escape
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
)

from app import notices
from app.ui.common.widgets import breakable

MODEL_URL = "https://huggingface.co/JustANormalTinkerer/hayai-ocr-v2.5-nova"
LIBRARIES = ("torch", "transformers", "ultralytics", "PySide6", "numpy", "opencv-python")


def package_version(name: str) -> str:
    """The installed version of `name`, read from its metadata (torch is not imported for it)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def folders() -> list[tuple[str, Path]]:
    """(what, folder) for the About box: settings, projects and autosaves, models, logs."""
    from app.core.config.settings import config_dir
    from app.core.project.paths import data_dir
    from app.logs import log_dir
    from app.models.store import models_dir

    return [("Settings", config_dir()), ("Projects and autosaves", data_dir()), ("Models", models_dir()),
            ("Logs", log_dir())]


def about_html(device: str) -> str:
    from app import __version__

    path = notices.license_file()
    licence = QUrl.fromLocalFile(str(path)).toString() if path else notices.LICENSE_URL
    versions = ", ".join(f"{name} {package_version(name)}" for name in LIBRARIES)
    rows = "".join(
        f"<li>{what}: <a href='{QUrl.fromLocalFile(str(path)).toString()}'>{escape(breakable(str(path)))}</a>"
        + ("" if path.exists() else " (not created yet)") + "</li>" for what, path in folders())
    return (
        f"<h3>Hayai Desktop {escape(__version__)}</h3>"
        "<p>Reads, transcribes and translates manga pages: a text detector finds the bubbles, the Hayai "
        "OCR model reads them, and you correct, translate and export the text.</p>"
        f"<p>Licence: {notices.LICENSE_NAME} ({notices.LICENSE_SPDX}; <a href='{licence}'>text</a>). It ships "
        "third-party software under its own licences (Third-party licences below), among them ultralytics "
        "(AGPL-3.0) and Qt for Python (LGPL-3.0); the shipped fonts are under the SIL Open Font License 1.1; "
        "each model keeps its own licence (model manager).</p>"
        f"<p>Versions: Python {platform.python_version()}, Qt {qVersion()}, {escape(versions)}.</p>"
        f"<p>Device: {escape(device)}</p>"
        f"<p>Folders:</p><ul>{rows}</ul>"
        f"<p>Links: <a href='{MODEL_URL}'>the Hayai OCR model</a>, "
        "<a href='https://docs.ultralytics.com'>ultralytics (detectors)</a>, "
        "<a href='https://doc.qt.io/qtforpython-6/'>Qt for Python</a>.</p>"
    )


class AboutDialog(QDialog):
    def __init__(self, device: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle("About Hayai Desktop")
        self.label = QLabel(about_html(device))
        self.label.setWordWrap(True)
        self.label.setOpenExternalLinks(True)
        self.label.setMinimumWidth(360)
        self.label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.notices_button = QPushButton("Third-party licences…")
        self.notices_button.setToolTip("Every package the app ships, with its licence text; the fonts and the demo models")
        buttons.addButton(self.notices_button, QDialogButtonBox.ButtonRole.ActionRole)
        self.notices_button.clicked.connect(self.show_notices)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.label)
        lay.addWidget(buttons)
        self.resize(560, self.sizeHint().height())

    def show_notices(self) -> None:
        NoticesDialog(self).exec()


class NoticesDialog(QDialog):
    """The third-party notices (the bundle's THIRD_PARTY_LICENSES, else the installed
    dependencies' licences), read-only, with a find field (Enter: next match)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Third-party licences")
        self.find = QLineEdit()
        self.find.setPlaceholderText("Find (a package or a licence), Enter for the next")
        self.find.returnPressed.connect(self.find_next)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlainText(notices.third_party_notices())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.find)
        lay.addWidget(self.text)
        lay.addWidget(buttons)
        self.resize(760, 560)

    def find_next(self) -> bool:
        """Select the next match of the find field (from the top again after the last)."""
        needle = self.find.text()
        if not needle:
            return False
        if self.text.find(needle):
            return True
        cursor = self.text.textCursor()
        cursor.movePosition(cursor.MoveOperation.Start)
        self.text.setTextCursor(cursor)
        return self.text.find(needle)
