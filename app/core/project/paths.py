"""Where a source's project files go: the project file beside the pages (or in the data dir when
that folder is not writable or is part of the app's installation), the autosave in the data dir.
The data dir is platformdirs' user data dir for "hayai-desktop", or $HAYAI_DATA_DIR when set."""
from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

FOLDER_PROJECT_NAME = ".hayai-project.json"
FILE_PROJECT_SUFFIX = ".hayai.json"


def data_dir() -> Path:
    """The app's per-user data folder ($HAYAI_DATA_DIR overrides it, e.g. in tests)."""
    override = os.environ.get("HAYAI_DATA_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_data_dir("hayai-desktop", appauthor=False))


def _abs(source_path: str | os.PathLike) -> Path:
    return Path(os.path.abspath(os.fspath(source_path)))


def source_key(source_path: str | os.PathLike) -> str:
    """A stable 20-hex-digit key for a source: sha256 of its normalised absolute path."""
    normalised = os.path.normcase(str(_abs(source_path)))
    return hashlib.sha256(normalised.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def _beside_path(source: Path) -> Path:
    if source.is_dir():
        return source / FOLDER_PROJECT_NAME
    return source.with_name(source.name + FILE_PROJECT_SUFFIX)


def _fallback_path(source: Path) -> Path:
    return data_dir() / "projects" / f"{source_key(source)}.json"


def _writable(folder: Path) -> bool:
    """True when a file can really be created in `folder` (os.access lies for root, ACLs, RO mounts)."""
    probe = folder / f".hayai-write-test-{os.getpid()}"
    try:
        with open(probe, "x"):
            pass
    except OSError:
        return False
    with contextlib.suppress(OSError):
        probe.unlink()
    return True


def in_installation(path: str | os.PathLike) -> bool:
    """Does `path` lie inside the app's own files (app.paths.app_root(): the checkout or the bundle)?"""
    from app.paths import app_root

    try:
        _abs(path).resolve().relative_to(app_root().resolve())
    except ValueError:
        return False
    return True


def project_path_for(source_path: str | os.PathLike) -> Path:
    """Where the project of this folder/archive is saved: beside the pages when writable and not
    part of the app's installation, else in the data dir."""
    source = _abs(source_path)
    beside = _beside_path(source)
    if in_installation(source) or not _writable(beside.parent):
        return _fallback_path(source)
    return beside


def find_project_file(source_path: str | os.PathLike) -> Path | None:
    """The saved project file of this source (beside it or in the data dir; newest wins)."""
    source = _abs(source_path)
    found = [p for p in (_beside_path(source), _fallback_path(source)) if p.is_file()]
    if not found:
        return None
    return max(found, key=lambda p: p.stat().st_mtime_ns)


def autosave_path_for(source_path: str | os.PathLike) -> Path:
    """Where background autosaves of this source's project go (always in the data dir)."""
    return data_dir() / "autosave" / f"{source_key(source_path)}.json"


