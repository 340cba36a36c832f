"""Reading a text file a user made (a glossary, an edited TXT export) in the encodings editors
and spreadsheets save: UTF-8 (with or without a BOM), UTF-16 (with a BOM: Excel's "Unicode
text"), and Shift-JIS (Japanese Windows' default, read as its superset cp932).

A BOM decides; else UTF-8 is tried, then cp932. A file that is none of them raises UserError
naming the file, the byte, and what to do.
"""
from __future__ import annotations

import codecs
import os
from pathlib import Path

from app.errors import UserError

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode_text(raw: bytes, name: str = "<text>", what: str = "file") -> str:
    """`raw` as text (see the module docstring); UserError naming `name`."""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(encoding)
            except UnicodeDecodeError as exc:
                raise UserError(f"{name}: the {what} starts as {encoding.upper()} but byte {exc.start} is not "
                                f"{encoding.upper()} text. Save it as UTF-8 in your editor and try again.") from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        first = exc
    try:
        return raw.decode("cp932")
    except UnicodeDecodeError:
        pass
    raise UserError(f"{name}: the {what} is not UTF-8, UTF-16 or Shift-JIS text (byte {first.start}). Save it as "
                    "UTF-8 in your editor and try again.") from first


def read_text_file(path: str | os.PathLike, what: str = "file") -> str:
    """The text of `path`; UserError naming it when it is missing, unreadable or not text."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise UserError(f"{path}: no such {what}.") from exc
    except IsADirectoryError as exc:
        raise UserError(f"{path}: a folder, not a {what}.") from exc
    except OSError as exc:
        raise UserError(f"{path}: cannot read the {what} ({exc.strerror or exc}).") from exc
    return decode_text(raw, str(path), what)
