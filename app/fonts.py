"""The fonts the app ships in `app/resources/fonts/` (no Qt): what each file is for, and where it is.

The app, the synthetic pages and the typesetter use these files by path, so nothing depends on
the fonts installed on the machine. Coverage and licences: `app/resources/fonts/README.md`.

    font_file("cjk") -> <root>/resources/fonts/NotoSansCJKjp-Regular.otf
"""
from __future__ import annotations

from pathlib import Path

from app.paths import resource_path

# role -> file name. "cjk" is the face the GUI draws transcriptions with (Japanese, Chinese,
# Korean, Latin); the other CJK faces are the synthetic pages'; "comic" is the Latin lettering
# face for typeset translations.
SHIPPED = {
    "cjk": "NotoSansCJKjp-Regular.otf",
    "cjk-bold": "NotoSansCJKjp-Bold.otf",
    "cjk-serif": "NotoSerifCJKjp-Regular.otf",
    "cjk-serif-bold": "NotoSerifCJKjp-Bold.otf",
    "comic": "ComicNeue-Regular.otf",
    "comic-bold": "ComicNeue-Bold.otf",
    "comic-italic": "ComicNeue-Italic.otf",
    "comic-bold-italic": "ComicNeue-BoldItalic.otf",
}
# Family names inside those files (what Qt and fontconfig call them).
CJK_FAMILY = "Noto Sans CJK JP"


def font_dir() -> Path:
    return resource_path("fonts")


def font_file(role: str) -> Path:
    """The shipped file for `role` (a key of SHIPPED). FileNotFoundError names the file when the
    installation lacks it (a damaged install: reinstall)."""
    try:
        name = SHIPPED[role]
    except KeyError:
        raise KeyError(f"unknown font role {role!r}; known: {', '.join(SHIPPED)}") from None
    path = font_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"the app's font {path} is missing; this installation is incomplete, reinstall it")
    return path


def shipped_files() -> list[Path]:
    """Every shipped font file that is present, in SHIPPED order."""
    return [p for p in (font_dir() / n for n in SHIPPED.values()) if p.is_file()]
