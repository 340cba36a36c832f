"""Help > About: what this is, its licence, the versions that matter in a bug report, the device
in use, where settings, projects, models and logs live, and links."""
from __future__ import annotations

import platform
from html import escape
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout

from app.ui.common.widgets import breakable

LICENSE_URL = "https://www.apache.org/licenses/LICENSE-2.0"
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
    from app.core.project_io import data_dir
    from app.core.settings import config_dir
    from app.logs import log_dir
    from app.models.store import models_dir

    return [("Settings", config_dir()), ("Projects and autosaves", data_dir()), ("Models", models_dir()),
            ("Logs", log_dir())]


def about_html(device: str) -> str:
    from app import __version__

    versions = ", ".join(f"{name} {package_version(name)}" for name in LIBRARIES)
    rows = "".join(
        f"<li>{what}: <a href='{QUrl.fromLocalFile(str(path)).toString()}'>{escape(breakable(str(path)))}</a>"
        + ("" if path.exists() else " (not created yet)") + "</li>" for what, path in folders())
    return (
        f"<h3>Hayai Desktop {escape(__version__)}</h3>"
        "<p>Reads, transcribes and translates manga pages: a text detector finds the bubbles, the Hayai "
        "OCR model reads them, and you correct, translate and export the text.</p>"
        f"<p>Licence: Apache License 2.0 (<a href='{LICENSE_URL}'>text</a>). The shipped fonts are under the "
        "SIL Open Font License 1.1; each model keeps its own licence (model manager).</p>"
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
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.label)
        lay.addWidget(buttons)
        self.resize(560, self.sizeHint().height())
