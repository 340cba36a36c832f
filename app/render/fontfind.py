"""Which font file a style's `font` names: the app's own faces, an installed font, or a file.

    resolve_font("", script)    the app's face for the script: Comic Neue (Latin), Noto Sans CJK
    resolve_font("comic-bold")  a shipped role (app.fonts.SHIPPED)
    resolve_font("DejaVu Sans") an installed font by family name (or "Family Style"), any case
    resolve_font("/x/y.ttf")    a font file

Installed fonts are found by scanning the usual font folders of Linux, macOS and Windows (and
$HAYAI_FONT_DIRS, separated by os.pathsep) once per process and reading each file's names with
FreeType. Nothing depends on them: the defaults are the shipped files.
"""
from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

from PIL import ImageFont

from app.errors import UserError
from app.fonts import SHIPPED, font_file

FONT_SUFFIXES = (".ttf", ".otf", ".ttc", ".otc")


def _font_dirs() -> list[Path]:
    home = Path.home()
    dirs = [Path(p) for p in os.environ.get("HAYAI_FONT_DIRS", "").split(os.pathsep) if p]
    if sys.platform == "win32":
        windir = Path(os.environ.get("WINDIR", r"C:\Windows"))
        dirs += [windir / "Fonts", Path(os.environ.get("LOCALAPPDATA", home)) / "Microsoft" / "Windows" / "Fonts"]
    elif sys.platform == "darwin":
        dirs += [Path("/System/Library/Fonts"), Path("/Library/Fonts"), home / "Library" / "Fonts"]
    else:
        data_home = Path(os.environ.get("XDG_DATA_HOME", home / ".local" / "share"))
        dirs += [Path("/usr/share/fonts"), Path("/usr/local/share/fonts"), data_home / "fonts", home / ".fonts"]
    return dirs


def installed_fonts() -> dict[str, Path]:
    """Lower-cased "family" and "family style" -> font file, for every readable installed font
    (regular styles win the bare family name). Scanned once per process."""
    return _scan()[0]


@functools.lru_cache(maxsize=1)
def _scan() -> tuple[dict[str, Path], tuple[str, ...]]:
    found: dict[str, Path] = {}
    families: set[str] = set()
    regular: set[str] = set()
    for folder in _font_dirs():
        if not folder.is_dir():
            continue
        for root, _dirs, files in os.walk(folder):
            for name in sorted(files):
                if not name.lower().endswith(FONT_SUFFIXES):
                    continue
                path = Path(root) / name
                try:
                    family, style = ImageFont.truetype(str(path), 12).getname()
                except OSError:
                    continue  # not a font FreeType can read: skip it
                family, style = (family or "").strip(), (style or "").strip()
                if not family:
                    continue
                families.add(family)
                found.setdefault(f"{family} {style}".lower(), path)
                key = family.lower()
                if style.lower() in ("regular", "book", "normal", "roman"):
                    if key not in regular:
                        found[key] = path
                        regular.add(key)
                else:
                    found.setdefault(key, path)
    return found, tuple(sorted(families, key=str.lower))


@functools.lru_cache(maxsize=1)
def installed_files() -> tuple[Path, ...]:
    """Every font file in the font folders, in the order the per-glyph fallback tries them: the
    folders in order ($HAYAI_FONT_DIRS first), upright regular-weight files before bold, italic
    and oblique ones, then by path. Listed once per process, nothing opened."""
    styled = ("bold", "italic", "oblique", "light", "thin", "black", "condensed", "mono")
    out: list[tuple[int, bool, str, Path]] = []
    for rank, folder in enumerate(_font_dirs()):
        if not folder.is_dir():
            continue
        for root, _dirs, files in os.walk(folder):
            out += [(rank, any(w in n.lower() for w in styled), str(Path(root) / n), Path(root) / n)
                    for n in files if n.lower().endswith(FONT_SUFFIXES)]
    return tuple(p for *_key, p in sorted(out, key=lambda t: t[:3]))


def family_names() -> list[str]:
    """Names a user can pick: the shipped roles, then installed families (sorted)."""
    return list(SHIPPED) + list(_scan()[1])


def default_role(cjk: bool) -> str:
    return "cjk" if cjk else "comic"



def resolve_font(name: str, cjk: bool = False) -> Path:
    """The font file for a style's `font` value (see the module doc). `cjk` picks the default
    face when `name` is empty. UserError when nothing matches."""
    name = (name or "").strip()
    if not name:
        return font_file(default_role(cjk))
    if name in SHIPPED:
        return font_file(name)
    path = Path(name).expanduser()
    if path.suffix.lower() in FONT_SUFFIXES or os.sep in name or "/" in name:
        if path.is_file():
            return path
        raise UserError(f"font file {name} does not exist; pick an existing .ttf/.otf file or a font name")
    shipped = {"comic neue": "comic", "comic neue bold": "comic-bold", "comic neue italic": "comic-italic",
               "noto sans cjk jp": "cjk", "noto sans cjk jp bold": "cjk-bold",
               "noto serif cjk jp": "cjk-serif"}
    key = name.lower()
    if key in shipped:
        return font_file(shipped[key])
    hit = installed_fonts().get(key)
    if hit is not None:
        return hit
    raise UserError(f"no font named {name!r} is installed; use a font file path, an installed family "
                    f"name, or one of the app's faces: {', '.join(SHIPPED)}")
