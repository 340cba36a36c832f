"""Reading a text file a user made (a glossary, an edited TXT export) in the encodings editors
and spreadsheets save: UTF-8 (with or without a BOM), UTF-16 (with a BOM: Excel's "Unicode
text"), and Shift-JIS (Japanese Windows' default, read as its superset cp932).

A BOM decides; else UTF-8 is tried, then cp932. A file that is none of them raises UserError
naming the file, the byte, and what to do.

`read_json_file` is the one way the app reads a JSON file (a project, an export, a .mokuro
volume, a model's configuration, its own caches): UTF-8 with or without a BOM, and an error that
names the file, says what it should have been, what is wrong with it and what to do.
"""
from __future__ import annotations

import codecs
import json
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


def read_json_file(path: str | os.PathLike, what: str, fix: str = "Correct it in a text editor or remove it.",
                   error: type[UserError] = UserError):
    """The JSON value in `path` (UTF-8, with or without a BOM). A missing, unreadable, non-UTF-8 or
    malformed file raises `error` (a UserError, or a subclass such as ModelError) naming the
    file and `what` it is, then `fix` (what to do). A caller for which the file is optional (a
    cache) catches UserError and goes on without it."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise error(f"{path}: no such {what}. {fix}") from exc
    except IsADirectoryError as exc:
        raise error(f"{path}: a folder, not the {what}. {fix}") from exc
    except UnicodeDecodeError as exc:
        raise error(f"{path}: the {what} is not UTF-8 text (byte {exc.start}). {fix}") from exc
    except OSError as exc:
        raise error(f"{path}: cannot read the {what} ({exc.strerror or exc}). {fix}") from exc
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{path}: the {what} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
                    f". {fix}") from exc
