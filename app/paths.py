"""Where the app's bundled read-only files live, from a source checkout and from a frozen build.

    resource_path("samples", "page_0000.png") -> <root>/resources/samples/page_0000.png

<root> is the project root in a source checkout (the folder holding `app/`) and the bundle's
data folder (`sys._MEIPASS`, e.g. `dist/hayai-desktop/_internal`) in a PyInstaller build, which
receives `resources/` (see hayai-desktop.spec). User data (models, settings) never goes here.
"""
from __future__ import annotations

import sys
from pathlib import Path


def is_frozen() -> bool:
    """True inside a PyInstaller bundle."""
    return bool(getattr(sys, "frozen", False)) and hasattr(sys, "_MEIPASS")


def app_root() -> Path:
    """The folder that holds `app/` and `resources/` (the bundle's data folder when frozen)."""
    if is_frozen():
        return Path(sys._MEIPASS)
    return Path(__file__).resolve().parent.parent


def resource_path(*parts: str) -> Path:
    """`resources/<parts...>` under `app_root()`; the path may not exist (optional resources)."""
    return app_root().joinpath("resources", *parts)
