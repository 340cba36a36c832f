"""The app's user settings: a typed dataclass, stored as JSON in the user's config folder.

No Qt here. The GUI reads and writes these through `app.ui.shell.preferences`; window geometry alone
lives in QSettings. `HAYAI_DESKTOP_CONFIG_DIR` overrides the folder (tests, portable installs).

The file carries "version" (major) and "minor" (app.core.project.versioning). Keys this build does not
know (a newer build's settings) are kept in `AppSettings.extra` and written back; a file of a
newer major version is read as far as it can be and never written over (`read_only`).
"""
from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from app.atomic import atomic_write_json
from app.core.project.versioning import FileSchema, upgrade
from app.errors import UserError
from app.models.manifest import DEFAULTS
from app.ocr import PRECISIONS

PATCH_BUDGETS = (256, 384, 512)
DEVICES = ("auto", "cuda", "mps", "cpu")
ORDERS = ("rtl", "ltr")
OVERLAYS = ("text", "boxes", "none")  # text = boxes + transcriptions
OVERLAY_SOURCES = ("text", "translation")
INPAINT_ENGINES = ("auto", "opencv", "lama")
MAX_RECENT = 10
TRANSLATION_PROVIDERS = ("", "openai", "deepl", "offline")
SETTINGS_SCHEMA = FileSchema("settings file", (1, 0))  # files without "version" are 1.0

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AppSettings:
    model: str = DEFAULTS["ocr"]  # model name known to the store, or a folder path
    detector: str = DEFAULTS["detector"]  # detector name (model store) or .pt path
    device: str = "auto"  # one of DEVICES
    precision: str = "auto"  # one of app.ocr.PRECISIONS (auto: per device, app.ocr.precision)
    patches: int = 384  # patch budget per crop (any positive value; 256/384/512 offered)
    order: str = "rtl"  # reading order for new detections
    overlay: str = "text"  # what the canvas draws over blocks
    overlay_source: str = "text"  # draw the transcription or the translation
    recent_sources: tuple[str, ...] = field(default_factory=tuple)
    last_dir: str = ""  # folder of the last open dialog
    export_dir: str = ""  # folder of the last export (the export dialogs start there)
    inpaint: str = "auto"  # text removal engine of the page views and exports (INPAINT_ENGINES)
    # machine translation ("" provider = none chosen yet: nothing is sent anywhere)
    translation_provider: str = ""  # openai | deepl | offline
    translation_preset: str = ""  # app.translate.presets name (openai provider)
    translation_base_url: str = ""
    translation_model: str = ""
    translation_source: str = ""  # "" = detect
    translation_target: str = "en"
    translation_context_pages: int = 2
    translation_glossary_file: str = ""  # optional glossary file used with the project's own
    translation_timeout: float = 60.0  # seconds without a chunk from the server
    translation_total_timeout: float = 0.0  # seconds for a whole answer (0 = 600 local, 180 hosted)
    translation_page_image: str = "auto"  # send the page image: auto (when the model takes images) | on | off
    translation_memory: bool = True  # the story memory: sent with each page, updated from the answers
    # keys of settings.json this build does not know (a newer build's): kept and written back
    extra: dict = field(default_factory=dict, compare=False, repr=False)
    # why settings.json must not be written over (a newer major version), else ""
    read_only: str = field(default="", compare=False)

    def with_recent(self, path: str) -> AppSettings:
        """A copy with `path` first in the recent sources (no duplicates, at most MAX_RECENT)."""
        rest = [p for p in self.recent_sources if p != path]
        return replace(self, recent_sources=tuple([path, *rest][:MAX_RECENT]))

    def validated(self) -> AppSettings:
        """A copy with every out-of-range value reset to its default."""
        d = AppSettings()
        return replace(
            self,
            device=self.device if self.device in DEVICES else d.device,
            precision=self.precision if self.precision in PRECISIONS else d.precision,
            patches=self.patches if isinstance(self.patches, int) and 16 <= self.patches <= 4096 else d.patches,
            order=self.order if self.order in ORDERS else d.order,
            overlay=self.overlay if self.overlay in OVERLAYS else d.overlay,
            overlay_source=self.overlay_source if self.overlay_source in OVERLAY_SOURCES else d.overlay_source,
            recent_sources=tuple(str(p) for p in self.recent_sources)[:MAX_RECENT],
            inpaint=self.inpaint if self.inpaint in INPAINT_ENGINES else d.inpaint,
            translation_provider=(self.translation_provider if self.translation_provider in TRANSLATION_PROVIDERS
                                  else d.translation_provider),
            translation_target=self.translation_target or d.translation_target,
            translation_context_pages=(self.translation_context_pages if isinstance(self.translation_context_pages, int)
                                       and 0 <= self.translation_context_pages <= 20 else d.translation_context_pages),
            translation_page_image=(self.translation_page_image if self.translation_page_image in ("auto", "on", "off")
                                    else d.translation_page_image),
            translation_memory=bool(self.translation_memory),
            translation_timeout=(float(self.translation_timeout) if isinstance(self.translation_timeout, (int, float))
                                 and 1 <= self.translation_timeout <= 3600 else d.translation_timeout),
            translation_total_timeout=(float(self.translation_total_timeout)
                                       if isinstance(self.translation_total_timeout, (int, float))
                                       and 0 <= self.translation_total_timeout <= 24 * 3600
                                       else d.translation_total_timeout),
        )


def config_dir() -> Path:
    """The folder holding settings.json (created on save)."""
    override = os.environ.get("HAYAI_DESKTOP_CONFIG_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_config_dir("hayai-desktop", appauthor=False))


def settings_path() -> Path:
    return config_dir() / "settings.json"


def load_settings(path: Path | None = None) -> AppSettings:
    """Read settings; never raises. A missing file gives the defaults. A file that cannot be read
    as settings (not JSON, not an object, wrong types) is moved aside to `settings.json.bad`
    (replacing an older one), a warning says so, and the defaults are used: the next save writes
    a good file without destroying the user's old one."""
    path = path or settings_path()
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return AppSettings()
    except (OSError, UnicodeDecodeError) as exc:
        return _set_aside(path, exc)
    try:
        raw = json.loads(text)
    except ValueError as exc:
        return _set_aside(path, exc)
    if not isinstance(raw, dict):
        return _set_aside(path, ValueError(f"a JSON {type(raw).__name__}, not an object"))
    raw = {"version": 1, **raw}  # written before settings had a version: 1.0
    try:
        opened = upgrade(raw, SETTINGS_SCHEMA, path)
    except UserError as exc:
        return _set_aside(path, exc)
    if opened.read_only:
        log.warning("%s", opened.read_only)
    known = {f.name for f in fields(AppSettings)} - {"extra", "read_only"}
    values = {k: v for k, v in opened.data.items() if k in known}
    extra = {k: v for k, v in opened.data.items() if k not in known and k not in ("version", "minor")}
    try:
        if "recent_sources" in values:
            values["recent_sources"] = tuple(values["recent_sources"] or ())
        return replace(AppSettings(**values).validated(), extra=extra, read_only=opened.read_only or "")
    except (TypeError, ValueError) as exc:
        if opened.read_only:  # a newer build's file: never moved aside nor written over
            return AppSettings(extra=extra, read_only=opened.read_only)
        return _set_aside(path, exc)


def _set_aside(path: Path, why: BaseException) -> AppSettings:
    bad = path.with_name(path.name + ".bad")
    try:
        os.replace(path, bad)
    except OSError as exc:
        log.warning("Settings were reset to the defaults: %s could not be read (%s) nor moved aside (%s); "
                    "it will be replaced when a setting changes.", path, why, exc.strerror or exc)
    else:
        log.warning("Settings were reset to the defaults: %s could not be read (%s); it was kept as %s.",
                    path, why, bad)
    return AppSettings()


def save_settings(settings: AppSettings, path: Path | None = None) -> None:
    """Write settings atomically (app.atomic: temp file, fsync, os.replace), with the unknown keys
    they were read with. Settings read from a newer major version's file are not written (the
    warning was given when they were read)."""
    if settings.read_only:
        return
    path = path or settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = asdict(settings)
    del data["extra"], data["read_only"]
    data["recent_sources"] = list(settings.recent_sources)
    data = {"version": SETTINGS_SCHEMA.current[0], "minor": SETTINGS_SCHEMA.current[1],
            **{k: v for k, v in settings.extra.items() if k not in data}, **data}
    atomic_write_json(path, data, indent=2)


def export_folder(settings: AppSettings, source: str) -> Path:
    """Where an export dialog starts: the folder of the last export; else beside the open
    volume (the folder holding it); else, for the demo's pages inside the app's installation
    or when there is no volume, the user's documents folder."""
    import platformdirs

    from app.core.project.paths import in_installation

    if settings.export_dir and Path(settings.export_dir).is_dir():
        return Path(settings.export_dir)
    if source and not in_installation(source) and Path(source).parent.is_dir():
        return Path(source).parent
    documents = Path(platformdirs.user_documents_dir())
    return documents if documents.is_dir() else Path.home()
