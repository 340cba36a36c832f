"""Where the app's bundled read-only files live: `app/resources/` (fonts, demo models, sample
pages), package data of the `app` package, so a source checkout, an editable install, a wheel
install and a PyInstaller build all find them beside the code.

    resource_path("samples", "page_0000.png") -> <app package>/resources/samples/page_0000.png

<app package> is the folder of `app/__init__.py`: the checkout's app/, site-packages/app in a
wheel install (pyproject.toml's package-data), and `sys._MEIPASS/app` in a PyInstaller build
(packaging/spec_data.py's package_datas copies app/'s non-Python files there). User data (models,
settings) never goes here.
"""
from __future__ import annotations

import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def is_frozen() -> bool:
    """True inside a PyInstaller bundle."""
    return bool(getattr(sys, "frozen", False)) and hasattr(sys, "_MEIPASS")


def app_root() -> Path:
    """The app's installation: the folder that holds the `app` package (the checkout, or the
    site-packages folder of a wheel install), the bundle's data folder when frozen."""
    if is_frozen():
        return Path(sys._MEIPASS)
    return PACKAGE_DIR.parent


def package_dir() -> Path:
    """The `app` package's folder (`<bundle data folder>/app` when frozen)."""
    return app_root() / "app" if is_frozen() else PACKAGE_DIR


def resource_path(*parts: str) -> Path:
    """`app/resources/<parts...>`; the path may not exist (optional resources)."""
    return package_dir().joinpath("resources", *parts)
