"""Build app/resources/fonts/ from the upstream font files (a development-time tool, run once).

The app ships its own fonts so that it, its tests and the synthetic pages need no system font.
Noto CJK collections (`.ttc`, face 0 = JP) are cut down with fontTools' subsetter to a written
coverage, so that the repository stays small:

- `NotoSansCJKjp-Regular.otf` (the GUI's face, and the synthetic pages'): ASCII and Latin-1,
  Latin Extended-A, general punctuation, all kana (hiragana, katakana, the phonetic extensions,
  half-width katakana), every character of JIS X 0208 (6,355 kanji plus its symbols, Greek and
  Cyrillic), the GB 2312 hanzi (simplified Chinese), the Big5 level-1 hanzi (common traditional
  Chinese), the 11,172 Hangul syllables and the compatibility jamo, CJK symbols and punctuation,
  CJK compatibility forms, vertical forms and the full-width / half-width forms.
- `NotoSansCJKjp-Bold.otf`, `NotoSerifCJKjp-Regular.otf`, `NotoSerifCJKjp-Bold.otf` (the other
  faces the synthetic pages use): the same without Hangul and the Chinese-only hanzi.

Glyph outlines, metrics and the layout features (vertical alternates `vert`/`vrt2` among them)
are kept as they are: a character in the subset renders exactly as with the full font.

Usage (sources from Debian's fonts-noto-cjk and fonts-comic-neue, or the upstream releases):
    python tools/make_fonts.py NOTO_CJK_DIR COMIC_NEUE_DIR [--out app/resources/fonts]
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection


def _double_byte(codec: str, rows: range, cols: range, prefix: bytes = b"", suffix: bytes = b"") -> set[str]:
    out = set()
    for hi in rows:
        for lo in cols:
            try:
                ch = (prefix + bytes([hi, lo]) + suffix).decode(codec)
            except UnicodeDecodeError:
                continue
            if len(ch) == 1:
                out.add(ch)
    return out


def jis_x_0208() -> set[str]:
    """Every character of JIS X 0208 (ISO-2022-JP's two-byte set)."""
    return _double_byte("iso2022_jp", range(0x21, 0x7F), range(0x21, 0x7F), b"\x1b$B", b"\x1b(B")


def gb2312() -> set[str]:
    return _double_byte("gb2312", range(0xA1, 0xF8), range(0xA1, 0xFF))


def big5_level1() -> set[str]:
    """Big5's frequently used hanzi (0xA440-0xC67E, 5,401 characters)."""
    chars = _double_byte("big5", range(0xA4, 0xC7), list(range(0x40, 0x7F)) + list(range(0xA1, 0xFF)))
    return {c for c in chars if 0x4E00 <= ord(c) <= 0x9FFF}


def _ranges(*spans: tuple[int, int]) -> set[str]:
    return {chr(c) for a, b in spans for c in range(a, b + 1)}


COMMON = _ranges(
    (0x20, 0x7E), (0xA0, 0xFF), (0x100, 0x17F),      # ASCII, Latin-1, Latin Extended-A
    (0x2000, 0x206F), (0x2190, 0x21FF), (0x2460, 0x24FF), (0x25A0, 0x25FF), (0x2600, 0x26FF),
    (0x3000, 0x303F), (0x3040, 0x309F), (0x30A0, 0x30FF), (0x31F0, 0x31FF),  # CJK punct, kana
    (0xFE10, 0xFE1F), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF),  # vertical, compatibility, full/half width
)
HANGUL = _ranges((0xAC00, 0xD7A3), (0x3130, 0x318F))

FACES = {  # output name: (source collection stem, with Hangul and Chinese hanzi)
    "NotoSansCJKjp-Regular.otf": ("NotoSansCJK-Regular", True),
    "NotoSansCJKjp-Bold.otf": ("NotoSansCJK-Bold", False),
    "NotoSerifCJKjp-Regular.otf": ("NotoSerifCJK-Regular", False),
    "NotoSerifCJKjp-Bold.otf": ("NotoSerifCJK-Bold", False),
}
COMIC = ("ComicNeue-Regular.otf", "ComicNeue-Bold.otf", "ComicNeue-Italic.otf", "ComicNeue-BoldItalic.otf")


def coverage(wide: bool) -> set[str]:
    chars = COMMON | jis_x_0208()
    if wide:
        chars |= HANGUL | gb2312() | big5_level1()
    return chars


def subset_face(ttc: Path, out: Path, chars: set[str]) -> None:
    font = TTCollection(str(ttc)).fonts[0]  # face 0 of the Noto CJK collections is JP
    options = subset.Options()
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.name_languages = ["*"]
    options.notdef_outline = True
    options.glyph_names = False
    options.hinting = True
    options.desubroutinize = False
    sub = subset.Subsetter(options)
    sub.populate(unicodes=[ord(c) for c in chars])
    sub.subset(font)
    font.save(str(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("noto_dir", type=Path)
    ap.add_argument("comic_dir", type=Path)
    ap.add_argument("--out", type=Path, default=Path("app/resources/fonts"))
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, (stem, wide) in FACES.items():
        src = args.noto_dir / f"{stem}.ttc"
        chars = coverage(wide)
        subset_face(src, args.out / name, chars)
        print(f"{name}: {len(chars)} characters, {(args.out / name).stat().st_size / 1e6:.2f} MB")
    for name in COMIC:
        shutil.copyfile(args.comic_dir / name, args.out / name)
        print(f"{name}: {(args.out / name).stat().st_size / 1e3:.0f} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
