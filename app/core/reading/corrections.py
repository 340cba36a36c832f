"""What the user's corrections teach the OCR: the training data of a series or a volume, and
the adapting run the window and `hayai-desktop adapt` share (app.ocr.adapt does the learning).

- A **correction** is a block whose text the user changed (`Block.text`, the model's own text
  kept in `Block.ocr_text`).
- A **confirmation** is a block on a page the user marked checked (`Page.checked`) whose text
  was left as read: what the model already reads right, and must keep reading right.
- The crop is taken as the reading takes it (`app.detect.blocks.crop`, the same padding) and
  read at the block's patch budget.

A series' data are the corrections of all its volumes: the volumes with a saved project in the
series' folder (where its `.hayai-series.json` is) or up to two folders below it, the places a
volume finds its series file from. A volume without a series keeps its own.

Where the adapter goes (a file the user owns; deleting it undoes the adapting):
`hayai-ocr-adapter.safetensors` in the series' folder, or beside the volume's project file
(`<project file>.ocr-adapter.safetensors`). `find_adapter(source)` finds a volume's: its own
first, else the first in the folder holding the volume and up to two folders above it.
Teaching again keeps the adapter it replaces as `….previous.safetensors` beside it;
`step_back(adapter)` makes the two change places (the window's Series > Go back to the adapter
before this one, `hayai-desktop adapt TARGET --step-back`).

`run_adapt` trains with rehearsal: the texts of the blocks read and left alone (else the
training corrections' own) drawn as clean crops in the app's faces (app.render.specimen) are
trained on beside the corrections, and a quarter of them checks that plain print is not
forgotten (app.ocr.adapt). `look_ahead` looks at the crops a teaching would look at ahead of
it (their features remembered in the user's cache, app.ocr.feature_cache), so that the teaching
itself starts training at once.
"""
from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.atomic import replace_durably
from app.core.document.types import Project
from app.core.project.files import load_project, open_project
from app.core.project.paths import find_project_file
from app.errors import UserError

ADAPTER_FILE = "hayai-ocr-adapter.safetensors"  # a series' adapter: the one place its name is decided
PROJECT_ADAPTER_SUFFIX = ".ocr-adapter.safetensors"
SERIES_FILE = ".hayai-series.json"  # the series file's name (app.core.translation.series, a room above this one)
LEVELS = 2  # folders between a series' folder and the folder holding a volume
ARCHIVES = (".cbz", ".zip")


@dataclass(frozen=True)
class Correction:
    volume: str  # the source's path
    page: str
    block: str
    box: tuple[float, float, float, float]
    text: str  # what the block says (the user's text, or the confirmed reading)
    read: str  # what the model read
    patches: int | None
    confirmation: bool = False


def corrections_of(project: Project) -> list[Correction]:
    """The corrections and confirmations of one volume, in page and reading order."""
    out = []
    for page in project.pages:
        if page.error:
            continue
        for b in page.blocks:
            if b.edited and b.text and b.text.strip():
                out.append(Correction(project.source, page.name, b.id, b.box, b.text, b.ocr_text, b.patches))
            elif page.checked and not b.edited and b.display_text.strip():
                out.append(Correction(project.source, page.name, b.id, b.box, b.display_text, b.ocr_text,
                                      b.patches, confirmation=True))
    return out


@dataclass
class Target:
    """What is adapted: its volumes' projects, its name, and where its adapter goes."""

    name: str
    projects: list[Project]
    adapter_path: Path


def _is_series_file(path: Path) -> bool:
    if path.name == SERIES_FILE:
        return True
    try:
        return json.loads(path.read_text(encoding="utf-8-sig")).get("format") == "hayai-desktop-series"
    except (OSError, ValueError, AttributeError):
        return False


def _is_project_file(path: Path) -> bool:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("format") == "hayai-desktop-project"
    except (OSError, ValueError, AttributeError):
        return False


def _volumes_in(folder: Path, depth: int) -> list[Path]:
    """Sources with a saved project in `folder` and up to `depth` folders below (a volume's own
    folder is not searched further)."""
    found = []
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return found
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_file() and entry.suffix.lower() in ARCHIVES:
            if find_project_file(entry) is not None:
                found.append(entry)
        elif entry.is_dir():
            if find_project_file(entry) is not None:
                found.append(entry)
            elif depth > 0:
                found += _volumes_in(entry, depth - 1)
    return found


def _project_of(source: Path) -> Project:
    return open_project(source)


def resolve_target(path: str | os.PathLike) -> Target:
    """A series file or its folder, a project file, or a volume (folder or archive) -> Target.
    UserError when it holds no saved project."""
    path = Path(os.path.abspath(os.fspath(path)))
    if not path.exists():
        raise UserError(f"{path}: no such file or folder. Give a series file, a series folder, a project file "
                        "or a volume.")
    if path.is_file() and path.suffix.lower() == ".json":
        if _is_series_file(path):
            return _series_target(path.parent)
        if _is_project_file(path):
            project = load_project(path)
            return Target(Path(project.source).name, [project], path.with_name(path.name + PROJECT_ADAPTER_SUFFIX))
        raise UserError(f"{path}: neither a series file nor a project file.")
    project_file = find_project_file(path)
    if project_file is not None:
        return Target(path.stem if path.is_file() else path.name, [_project_of(path)],
                      project_file.with_name(project_file.name + PROJECT_ADAPTER_SUFFIX))
    if path.is_dir():
        return _series_target(path)
    raise UserError(f"{path}: this volume has no saved project yet: open it, read it and correct some blocks "
                    "first.")


def _series_target(folder: Path) -> Target:
    volumes = _volumes_in(folder, LEVELS)
    if not volumes:
        raise UserError(f"{folder}: no volume with a saved project here or up to {LEVELS} folders below. Open the "
                        "series' volumes, correct some blocks and save.")
    return Target(folder.name, [_project_of(v) for v in volumes], folder / ADAPTER_FILE)


def find_adapter(source: str | os.PathLike) -> Path | None:
    """The adapter a volume reads with: its own (beside its project file), else the first one in
    the folder holding the volume or up to LEVELS folders above; None when there is none."""
    source = Path(os.path.abspath(os.fspath(source)))
    project_file = find_project_file(source)
    if project_file is not None:
        own = project_file.with_name(project_file.name + PROJECT_ADAPTER_SUFFIX)
        if own.is_file():
            return own
    folder = source.parent
    for _ in range(LEVELS + 1):
        if (folder / ADAPTER_FILE).is_file():
            return folder / ADAPTER_FILE
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def plain_texts_of(projects: list[Project]) -> list[str]:
    """The texts of the blocks that are neither corrections nor confirmations (read, not
    touched), once each, in page order: what rehearsal draws in the app's faces."""
    out: dict[str, None] = {}
    for project in projects:
        for page in project.pages:
            if page.error or page.checked:
                continue
            for b in page.blocks:
                if not b.edited and b.display_text.strip():
                    out.setdefault(b.display_text.strip(), None)
    return list(out)


def samples_of(projects: list[Project], default_patches: int = 384,
               cancel: Callable[[], bool] | None = None) -> tuple[list, int]:
    """The corrections and confirmations of the projects as app.ocr.adapt samples (crops taken as
    the reading takes them) -> (samples, the patch budget most of them were read at). Pages that
    cannot be opened any more are left out (logged)."""
    import logging

    from app.core.sources.source import open_source
    from app.detect.blocks import crop
    from app.errors import Cancelled
    from app.ocr.adapt import Sample

    log = logging.getLogger(__name__)
    samples, budgets = [], Counter()
    for project in projects:
        found = corrections_of(project)
        if not found:
            continue
        by_page: dict[str, list[Correction]] = {}
        for c in found:
            by_page.setdefault(c.page, []).append(c)
        try:
            opened = open_source(project.source)
        except UserError as exc:
            log.warning("%s: left out of adapting (%s)", project.source, exc)
            continue
        with opened:
            for name, items in by_page.items():
                if cancel is not None and cancel():
                    raise Cancelled("adapting cancelled")
                try:
                    image = opened.load(name)
                except (UserError, OSError) as exc:
                    log.warning("%s: left out of adapting (%s)", opened.describe(name), exc)
                    continue
                for c in items:
                    samples.append(Sample(crop(image, c.box), c.text, f"{c.volume}\n{c.page}", c.confirmation,
                                          c.volume))
                    budgets[c.patches or default_patches] += 1
    patches = budgets.most_common(1)[0][0] if budgets else default_patches
    return samples, patches


def run_adapt(target_path, recognizer, settings=None, out: str | os.PathLike | None = None,
              progress=None, cancel=None, train: bool = True, stop=None):
    """Adapt `recognizer` to the corrections of a series or volume (`resolve_target`); the adapter
    is written to `out` (default: the target's place) only when the guard keeps it ->
    (app.ocr.adapt.AdaptResult, the adapter's path or None). `stop`: app.ocr.adapt.adapt's (training
    ends there and the best epoch so far is kept)."""
    from dataclasses import replace

    from app.ocr.adapt import AdaptSettings, adapt
    from app.ocr.adapt_weigh import weigh_against_previous
    from app.ocr.feature_cache import default_cache
    from app.render.specimen import specimens

    target = resolve_target(target_path)
    settings = settings or AdaptSettings()
    samples, patches = samples_of(target.projects, settings.patches, cancel)
    if not any(not s.confirmation for s in samples):
        raise UserError(f"{target.name}: no corrections yet. Correct the text of some blocks (and mark pages "
                        "checked), save, then teach the OCR.")
    cache = default_cache()  # the crops looked at in an earlier teaching are not looked at again
    try:
        result = adapt(recognizer, samples, replace(settings, patches=patches), name=target.name, progress=progress,
                       cancel=cancel, train=train, specimens=specimens, plain_texts=plain_texts_of(target.projects),
                       stop=stop, feature_cache=cache)
    finally:
        if cache is not None:
            cache.trim()
    result.volumes = len({s.volume for s in samples if not s.confirmation})
    dest = Path(out) if out else target.adapter_path
    previous = _comparable(dest, recognizer) if result.adapter is not None else None
    if previous is not None:
        if progress is not None:
            progress("comparing", 0, 2)  # the held-out corrections read with the adapter there and the new one
        weigh_against_previous(recognizer, result, previous, patches, settings.max_new_tokens)
        if progress is not None:
            progress("comparing", 2, 2)
    path = None
    if result.adapter is not None:
        result.adapter.report["volumes"] = result.volumes
        if not dest.is_file():
            path = result.adapter.save(dest)
        else:  # one step back stays possible: the adapter replaced is kept beside it. The new one is
            # written whole first, so a full disk leaves the adapter there and the one before it as they were
            incoming = dest.with_name(f".{dest.name}.incoming")
            try:
                result.adapter.save(incoming)
            except UserError as exc:
                incoming.unlink(missing_ok=True)
                raise UserError(str(exc).replace(str(incoming), str(dest))) from exc
            backup = previous_path(dest)
            moved = False
            try:
                replace_durably(dest, backup)
                moved = True
                replace_durably(incoming, dest)
            except OSError as exc:
                if moved and not dest.exists():
                    replace_durably(backup, dest)
                incoming.unlink(missing_ok=True)
                raise UserError(f"{dest}: cannot keep the adapter there as {backup.name} before replacing it "
                                f"({exc.strerror or exc}). Free some disk space or choose another place with "
                                "--out.") from exc
            result.adapter.path = path = dest
            result.replaced = str(backup)
    return result, path


def look_ahead(target_path, recognizer, settings=None, cancel=None, progress=None) -> int:
    """Look now at the crops `run_adapt` on the same target would look at, and leave their
    features in the user's feature cache (app.ocr.feature_cache), so that teaching later finds
    them there; the window does it in the background after a save -> how many crops were
    looked at now. Nothing to learn from yet, or remembering turned off: 0."""
    from dataclasses import replace

    from app.ocr.adapt import AdaptSettings
    from app.ocr.adapt_crops import look_ahead as look
    from app.ocr.feature_cache import default_cache
    from app.render.specimen import specimens

    cache = default_cache()
    if cache is None:
        return 0
    target = resolve_target(target_path)
    settings = settings or AdaptSettings()
    samples, patches = samples_of(target.projects, settings.patches, cancel)
    if not any(not s.confirmation for s in samples):
        return 0
    try:
        return look(recognizer, samples, replace(settings, patches=patches), specimens=specimens,
                    plain_texts=plain_texts_of(target.projects), feature_cache=cache, cancel=cancel,
                    progress=progress)
    finally:
        cache.trim()


def previous_path(adapter_path: Path) -> Path:
    """Where the adapter a new one replaced is kept (hayai-ocr-adapter.previous.safetensors)."""
    name = adapter_path.name
    stem = name[:-len(".safetensors")] if name.endswith(".safetensors") else name
    return adapter_path.with_name(f"{stem}.previous.safetensors")


def step_back(adapter_path: str | os.PathLike) -> Path:
    """Go one step back: the adapter at `adapter_path` and the one it replaced (`previous_path`)
    change places, so the one before is read with again and the newer one is kept as the previous
    (the same step again goes forward) -> the previous file's path, now holding the newer one (or
    gone when no adapter was there: a user who deleted it to undo gets the one before back).
    A damaged previous file is named and nothing moves."""
    from app.ocr.adapter import Adapter

    adapter_path = Path(adapter_path)
    back = previous_path(adapter_path)
    if not back.is_file():
        raise UserError(f"{adapter_path}: there is no adapter before this one ({back.name} is not beside it): "
                        "nothing to go back to.")
    Adapter.load(back)  # a file that cannot be read with is not put in place
    aside = adapter_path.with_name(f".{adapter_path.name}.stepping-back")
    moved = False
    try:
        if adapter_path.is_file():
            replace_durably(adapter_path, aside)
            moved = True
        replace_durably(back, adapter_path)
        if moved:
            replace_durably(aside, back)
    except OSError as exc:
        if moved and not adapter_path.exists():
            replace_durably(aside, adapter_path)
        raise UserError(f"{adapter_path}: cannot change places with {back.name} ({exc.strerror or exc}); both stay "
                        "as they were.") from exc
    return back


def _comparable(path: Path, recognizer):
    """The adapter at `path` when it can be weighed against a new one: readable and made for the
    recognizer's model; else None (a new adapter then replaces it, kept as previous_path)."""
    import logging

    from app.errors import ModelError
    from app.ocr.adapter import Adapter, model_sha256

    if not path.is_file() or recognizer.folder is None:
        return None
    try:
        previous = Adapter.load(path)
        previous.check_base(model_sha256(recognizer.folder), recognizer.base_name)
    except (UserError, ModelError) as exc:
        logging.getLogger(__name__).info("%s: not weighed against the new adapter (%s)", path, exc)
        return None
    return previous
