"""The edit journal: every committed edit of a project, appended beside its autosave, so that a
crash between two autosaves loses nothing.

`<data dir>/autosave/<hash>.journal` (paths.autosave_path_for with `.journal`), JSON lines:

    {"journal": "hayai-desktop-edits", "version": 1, "source": path}     # the header
    {"seq": 1, "page": {a page as in the project file}}                     # a page after an edit
    {"seq": 2, "project": {"order", "style", "glossary"}}                   # the project's own fields
    {"seq": 3, "drop_page": name}                                           # a page removed

Each record holds the whole page (or the project's fields) as it is after the edit, so
replaying is idempotent and order is all that matters: the last record of a page wins.

- Writing (`EditJournal.record_*`): the line reaches the operating system at once, in the
  caller's thread (a killed process loses no edit it committed); its fsync runs on the journal's
  own thread (app.atomic.Appender), so the GUI never waits for the disk.
- Folding: after an autosave or a save has written the whole project, `folded()` empties the
  journal (what it held is in that file now). A save also deletes it (`discard`).
- Replaying (`replay`): on the next open, the project (its autosave when newer, else its saved
  file) with the journal's records applied; a torn last line (a crash mid-write) is left out.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
from dataclasses import replace
from pathlib import Path

from app.atomic import Appender, read_lines
from app.core.document.types import Page, Project
from app.errors import UserError

log = logging.getLogger(__name__)
MAGIC = "hayai-desktop-edits"
VERSION = 1


def journal_path_for(source_path: str | os.PathLike) -> Path:
    from app.core.project.paths import autosave_path_for

    return autosave_path_for(source_path).with_suffix(".journal")


class EditJournal:
    """The open journal of one source's project (one writer: the process holding its lock)."""

    def __init__(self, source: str | os.PathLike):
        self.source = str(source)
        self.path = journal_path_for(source)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._log = Appender(self.path)
        self._seq = len(read_lines(self.path))  # records already there (a journal not folded yet)
        if self._seq == 0:
            self._header()

    def _header(self) -> None:
        self._log.append(json.dumps({"journal": MAGIC, "version": VERSION, "source": self.source},
                                    ensure_ascii=False))

    def _append(self, record: dict) -> None:
        self._seq += 1
        try:
            self._log.append(json.dumps({"seq": self._seq, **record}, ensure_ascii=False, allow_nan=False))
        except OSError as exc:
            raise UserError(f"{self.path}: cannot write the edit journal ({exc.strerror or exc}); edits since "
                            "the last autosave may be lost in a crash. Free some disk space.") from exc

    def record_page(self, page: Page) -> None:
        from app.core.project.codec import page_to_dict

        self._append({"page": page_to_dict(page)})

    def record_project(self, project: Project) -> None:
        from app.core.project.codec import project_fields_to_dict

        self._append({"project": project_fields_to_dict(project)})

    def folded(self) -> None:
        """Everything recorded is now in a saved file (autosave or project): start a new journal
        (also when a save deleted this one's file)."""
        self._log.close(delete=True)
        self._seq = 0
        try:
            self._log = Appender(self.path)
            self._header()
        except OSError as exc:
            raise UserError(f"{self.path}: cannot start the edit journal ({exc.strerror or exc}); edits since "
                            "the last autosave may be lost in a crash. Free some disk space.") from exc

    def synced(self, timeout: float | None = None) -> bool:
        return self._log.synced(timeout)

    def close(self, delete: bool = False) -> None:
        self._log.close(delete=delete)


def records(source_path: str | os.PathLike) -> list[dict]:
    """The journal's edit records in order ([] when there is none; lines that cannot be read,
    such as a torn last one, are left out with a warning)."""
    path = journal_path_for(source_path)
    out = []
    for n, line in enumerate(read_lines(path), start=1):
        try:
            record = json.loads(line)
        except ValueError:
            log.warning("%s: line %d is damaged and was left out", path, n)
            continue
        if isinstance(record, dict) and "seq" in record:
            out.append(record)
    return out


def has_edits(source_path: str | os.PathLike) -> bool:
    return bool(records(source_path))


def replay(project: Project, source_path: str | os.PathLike) -> tuple[Project, int]:
    """`project` with the journal's records applied (a new Project); (project, records applied).
    A record that cannot be read is left out with a warning naming the journal."""
    from app.core.project.codec import page_from_dict, project_fields_from_dict

    path = journal_path_for(source_path)
    pages = list(project.pages)
    fields = {}
    applied = 0
    for record in records(source_path):
        try:
            if "page" in record:
                page = page_from_dict(record["page"], path)
                index = next((i for i, p in enumerate(pages) if p.name == page.name), None)
                if index is None:
                    pages.append(page)
                else:
                    pages[index] = page
            elif "project" in record:
                fields.update(project_fields_from_dict(record["project"], path))
            elif "drop_page" in record:
                pages = [p for p in pages if p.name != record["drop_page"]]
            else:
                continue
        except UserError as exc:
            log.warning("%s: edit %s left out (%s)", path, record.get("seq"), exc)
            continue
        applied += 1
    return replace(project, pages=pages, **fields), applied


def discard(source_path: str | os.PathLike) -> None:
    """Delete the journal (after a save, or when the user declines to restore it)."""
    with contextlib.suppress(FileNotFoundError):
        journal_path_for(source_path).unlink()
