"""Versions of the files the app writes, and how a file of another version is read.

Each kind of file (`FileSchema`: the project file, the JSON export, settings.json) carries
`"version"` (the major version, an integer) and `"minor"` (absent = 0). The rules:

- A **minor** step only adds optional keys. Every build reads every minor version of its major
  version, keeps the keys it does not know (`unknown_keys`) and writes them back unchanged, so
  a file saved by a newer build loses nothing when an older one saves it again.
- A **major** step changes or removes something an older build relies on. A file of an older
  major version is moved forward by the schema's migration table, one step at a time, before
  it is read; a file of a newer major version is read as far as this build can, and opened
  read-only (`Opened.read_only` says why): this build never writes over it.
- Migrations also move old shapes within a major version forward (`(1, 0) -> (1, 1)`): each
  step takes the file's data and returns it in the next version's shape.

Plain data only (no Qt, no file access): the readers (app.core.project.files,
app.core.exports.json_read, app.core.config.settings) call `upgrade` on the JSON they loaded.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from app.errors import UserError

Version = tuple[int, int]


@dataclass(frozen=True)
class FileSchema:
    label: str  # "project file", "JSON export", "settings file" (in messages)
    current: Version  # what this build writes
    migrations: Mapping[Version, Callable[[dict], dict]] = field(default_factory=dict)


@dataclass(frozen=True)
class Opened:
    data: dict  # in the current version's shape (migrated) or, for a newer major, as found
    found: Version  # the version the file had
    read_only: str | None = None  # why this build must not write over the file


def version_of(data: dict) -> Version | None:
    """(major, minor) of the file's data, or None when "version" is missing or not an integer."""
    major, minor = data.get("version"), data.get("minor", 0)
    if not _is_int(major) or not _is_int(minor) or minor < 0:
        return None
    return major, minor


def upgrade(data: dict, schema: FileSchema, path: str | Path) -> Opened:
    """`data` moved forward to `schema.current` by its migration table (see the module docstring).
    UserError naming `path` for a missing version, or an old version with no migration."""
    found = version_of(data)
    if found is None:
        raise UserError(f"{path}: the {schema.label} is damaged (its \"version\" is missing or not a whole "
                        "number). Restore it from a backup, or move it away.")
    major = schema.current[0]
    if found[0] > major:
        why = (f"{path} was saved by a newer Hayai Desktop ({schema.label} version {found[0]}.{found[1]}; this "
               f"one writes {major}.{schema.current[1]}), so it is opened read-only: nothing is saved over it. "
               "Update Hayai Desktop to edit it.")
        return Opened(dict(data), found, why)
    version, data = found, dict(data)
    while version < schema.current:
        step = schema.migrations.get(version)
        if step is None:
            if version[0] == major:
                break  # an older minor version: nothing to move, its missing keys have defaults
            raise UserError(f"{path}: {schema.label} version {version[0]}.{version[1]} is too old for this "
                            "Hayai Desktop to read. Open it with an older release and save it again.")
        data = step(data)
        new = version_of(data)
        if new is None or new <= version:
            raise AssertionError(f"migration from {version} did not move the version forward")
        version = new
    return Opened(data, found)


def unknown_keys(data: dict, known: Iterable[str]) -> dict:
    """The keys of `data` this build does not know (kept, and written back as they were)."""
    known = set(known)
    return {k: v for k, v in data.items() if k not in known}


def with_unknown(data: dict, extra: Mapping | None) -> dict:
    """`data` with the kept unknown keys added back (the keys this build writes win)."""
    if not extra:
        return data
    return {**{k: v for k, v in extra.items() if k not in data}, **data}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
