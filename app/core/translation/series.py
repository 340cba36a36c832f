"""The series file: what the volumes of one series share.

`.hayai-series.json` holds the series' glossary, story memory, translation memory (approved
translations with their source, app.core.translation.translation_memory) and default lettering style. It is found beside
the volume (in the folder that holds the volume's folder or archive) or in a folder up to two
levels above that, or chosen by the user (`--series FILE`, the GUI's Translate menu).

- A new volume (its project has an empty glossary and story memory) starts with all the
  series knows: `start_volume`.
- What a volume learns (memory, glossary, approved translations, its style when it has one of
  its own) is written back with `learn_from`, which reads the file again under a lock
  (`<file>.lock`, filelock) and merges, so two volumes saving at once lose nothing.

File format (JSON, UTF-8; versions as app.core.project.versioning: minor steps add optional keys, kept
when unknown):
    {"format": "hayai-desktop-series", "version": 1, "minor": 0, "app_version": str,
     "glossary": [{"source", "target", "note"}],
     "memory": {"characters": [...], "terms": [...], "summary"} (as the project file's),
     "tm": [{"source", "target"}, ...] (oldest first),
     "style": {lettering style} | null}
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from filelock import FileLock, Timeout

from app.atomic import atomic_write_text
from app.core.document.types import Project
from app.core.project.versioning import FileSchema, unknown_keys, upgrade, with_unknown
from app.core.translation.translation_memory import TranslationMemory, approved_pairs
from app.errors import UserError
from app.render.style import TextStyle, style_from_dict, style_to_dict
from app.translate import glossary as glossaries
from app.translate.base import GlossaryEntry
from app.translate.memory import StoryMemory, memory_from_dict, memory_to_dict

SERIES_FILE = ".hayai-series.json"
FORMAT = "hayai-desktop-series"
SERIES_SCHEMA = FileSchema("series file", (1, 0))
LEVELS_ABOVE = 2  # folders above the one holding the volume that are searched
_KEYS = ("format", "version", "minor", "app_version", "glossary", "memory", "tm", "style")
LOCK_TIMEOUT = 10.0


@dataclass
class Series:
    path: Path
    glossary: list[GlossaryEntry] = field(default_factory=list)
    memory: StoryMemory = field(default_factory=StoryMemory)
    tm: list[tuple[str, str]] = field(default_factory=list)
    style: TextStyle | None = None
    extra: dict = field(default_factory=dict, repr=False)
    read_only: str | None = None  # a file of a newer major version: never written over

    def translation_memory(self) -> TranslationMemory:
        return TranslationMemory(self.tm)


def find_series_file(source: str | os.PathLike) -> Path | None:
    """The series file of a volume (a folder, an archive, an image or a JSON export): beside
    it, else up to LEVELS_ABOVE folders higher; None when there is none."""
    folder = Path(os.path.abspath(source)).parent
    for _ in range(LEVELS_ABOVE + 1):
        candidate = folder / SERIES_FILE
        if candidate.is_file():
            return candidate
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def series_path_for(source: str | os.PathLike) -> Path:
    """Where a new series file for this volume goes: beside it (in its series folder)."""
    return Path(os.path.abspath(source)).parent / SERIES_FILE


def load_series(path: str | os.PathLike) -> Series:
    """The series file at `path`; a missing file is an empty series (written on first save).
    UserError naming the file when it is damaged."""
    path = Path(path)
    if path.is_dir():
        path = path / SERIES_FILE
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return Series(path)
    except OSError as exc:
        raise UserError(f"{path}: cannot read the series file ({exc.strerror or exc}).") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise UserError(f"{path}: the series file is damaged ({exc}). Restore it from a backup, or move it away "
                        "to start a new one.") from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise UserError(f"{path}: not a Hayai Desktop series file (expected \"format\": \"{FORMAT}\"). Choose "
                        f"another file, or move this one away.")
    opened = upgrade(data, SERIES_SCHEMA, path)
    data = opened.data
    try:
        glossary = [GlossaryEntry(str(g["source"]), str(g.get("target") or ""), str(g.get("note") or ""))
                    for g in data.get("glossary") or [] if isinstance(g, dict) and str(g.get("source") or "").strip()]
        tm = [(str(t["source"]), str(t["target"])) for t in data.get("tm") or []
              if isinstance(t, dict) and isinstance(t.get("source"), str) and isinstance(t.get("target"), str)]
        style = style_from_dict(data["style"]) if isinstance(data.get("style"), dict) else None
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"{path}: the series file is damaged ({exc}). Restore it from a backup, or move it "
                        "away.") from exc
    return Series(path, glossary, memory_from_dict(data.get("memory")), tm, style,
                  unknown_keys(data, _KEYS), opened.read_only)


def save_series(series: Series) -> Path:
    """Write the series file atomically (UserError when it cannot be written or is read-only)."""
    from app import __version__

    if series.read_only:
        raise UserError(series.read_only)
    data = with_unknown({
        "format": FORMAT, "version": SERIES_SCHEMA.current[0], "minor": SERIES_SCHEMA.current[1],
        "app_version": __version__,
        "glossary": [{"source": g.source, "target": g.target, "note": g.note} for g in series.glossary],
        "memory": memory_to_dict(series.memory),
        "tm": [{"source": s, "target": t} for s, t in series.tm],
        "style": style_to_dict(series.style) if series.style is not None else None,
    }, series.extra)
    try:
        series.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(series.path, json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    except OSError as exc:
        raise UserError(f"{series.path}: cannot save the series file ({exc.strerror or exc}). Free some disk "
                        "space or check the folder's permissions; the previous file is intact.") from exc
    return series.path


def is_new_volume(project: Project) -> bool:
    """A volume that knows nothing yet: no glossary and an empty story memory."""
    return not project.glossary and project.memory.empty


def start_volume(project: Project, series: Series) -> bool:
    """Give a new volume (`is_new_volume`) all the series knows: its glossary, its story memory
    and, when the project still has the default style, the series' style. `project` is changed
    in place; True when anything was taken. The translation memory stays in the series (the
    stage reads it from there)."""
    if not is_new_volume(project):
        return False
    took = False
    if series.glossary:
        project.glossary = list(series.glossary)
        took = True
    if not series.memory.empty:
        project.memory = series.memory
        took = True
    if series.style is not None and project.style == TextStyle() and series.style != project.style:
        project.style = series.style
        took = True
    return took


def merged_with(series: Series, project: Project) -> Series:
    """The series with what `project` learned: its glossary entries (the volume's win for a
    term both have), its story memory (the user's entries win, then the volume's), its approved
    translations, and its style when it is not the default one."""
    glossary = glossaries.merge(project.glossary, series.glossary)
    memory = project.memory.with_user_entries(series.memory) if not project.memory.empty else series.memory
    tm = TranslationMemory(series.tm)
    tm.add_all(approved_pairs(project.pages))
    style = project.style if project.style != TextStyle() else series.style
    return replace(series, glossary=glossary, memory=memory, tm=tm.pairs(), style=style)


def learn_from(path: str | os.PathLike, project: Project) -> Series:
    """Write what `project` learned into the series file at `path` (read again under its lock,
    merged, written atomically); returns the series as saved."""
    path = Path(path)
    lock = FileLock(str(path.with_name(path.name + ".lock")))
    try:
        lock.acquire(timeout=LOCK_TIMEOUT)
    except Timeout as exc:
        raise UserError(f"{path}: the series file is being written by another program for more than "
                        f"{LOCK_TIMEOUT:.0f} s; try again when it is done.") from exc
    try:
        series = merged_with(load_series(path), project)
        save_series(series)
        return series
    finally:
        lock.release()
