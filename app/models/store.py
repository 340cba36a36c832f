"""The model store: a manifest of published models, where they live, downloads, verification.

Manifest: `MODELS` maps a name to a frozen `ModelEntry` (Hub repo, pinned revision, files with
sha256 and size in bytes when known, kind). `ALIASES` maps short names; `DEFAULTS` names the
model of each kind used when none is chosen (`default_model(kind)`). The store reads these as
data: it knows no model family, only kinds, files and hashes.
Tests and tools may add entries (`MODELS[entry.name] = entry`); every function also accepts a
`ModelEntry` directly.

Resolution (`resolve_model`), first hit wins:
  1. an explicit path: an existing folder, or file (a single-file model); a bare manifest name
     or alias is a name even if a folder of that name exists in the working directory (write
     "./NAME" for the folder);
  2. the app's model directory, `models_dir() / NAME` (platformdirs user data dir, or
     `$HAYAI_MODELS_DIR`), all files present;
  3. the Hugging Face cache (`$HF_HUB_CACHE`, `$HF_HOME/hub`, ~/.cache/huggingface/hub) at the
     pinned revision, all files present.
A model is found only when all its files are present; then every file's sha256 is checked
against the pin (hashes are remembered per path, size and mtime in `models_dir()/.sha256.json`,
so a 600 MB file is hashed once, not at every start). Missing -> ModelError with the exact
command to run: `hayai-desktop models download NAME`.

Trust policy for files without a pinned sha256 (whose hashes are not known to this project yet;
such a file may be a pickle, which runs code when loaded):
  - `download(..., trust_unpinned=False)` refuses them; with `trust_unpinned=True` (CLI:
    `--trust-unpinned`) the file is fetched, checked against the Hub's own sha256 ETag when it
    has one, and its sha256 is recorded in `models_dir()/.trusted.json` (trust on first use);
  - `resolve_model` loads an unpinned file only when it matches such a recorded hash, or when
    the caller passes `trust_unpinned=True` (which records the hash it sees);
  - a file the user picks explicitly by path is the user's choice and is returned as is.
Pinned files never need trust: their bytes are checked against the manifest before use.

Downloads honour `HF_ENDPOINT` and `HF_HUB_OFFLINE` read at call time (huggingface_hub itself
reads them once at import), fetch only the manifest's files (never `*.py`), report byte
progress, cancel between chunks and resume with HTTP Range (see `app.models.fetch`).
No Qt, no torch.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from app.errors import Cancelled, ModelError
from app.models.integrity import (  # noqa: F401  (re-exported: file_sha256; tests use the side-file helpers)
    CancelFn,
    ProgressFn,
    _copy_file,
    _expected_sha,
    _read_json,
    _remember_hash,
    _sha256_file,
    _trust,
    _trusted_path,
    _write_json,
    file_sha256,
)
from app.models.manifest import (  # noqa: F401  (re-exported)
    ALIASES,
    DEFAULTS,
    KIND_LABELS,
    KINDS,
    MODELS,
    ModelEntry,
    ModelFile,
)
from app.models.places import DEFAULT_ENDPOINT, hf_cache_dir, hf_endpoint, is_offline, models_dir  # noqa: F401


def get_entry(name: str | ModelEntry) -> ModelEntry:
    """The manifest entry for a name or alias (a ModelEntry is returned unchanged)."""
    if isinstance(name, ModelEntry):
        return name
    entry = MODELS.get(ALIASES.get(name, name))
    if entry is None:  # a Hub repo id names its entry too
        entry = next((e for e in MODELS.values() if e.repo_id == name), None)
    if entry is None:
        known = ", ".join(sorted(MODELS)) + "; aliases: " + ", ".join(sorted(ALIASES))
        raise ModelError(f"unknown model {name!r}. Known models: {known}.")
    return entry


def default_model(kind: str) -> str | None:
    """The manifest's default model of `kind` (one of KINDS), or None when it names none."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    name = DEFAULTS.get(kind)
    return name if name in MODELS and MODELS[name].kind == kind else None


def download_command(entry: ModelEntry) -> str:
    """The command a user runs to fetch `entry`."""
    flag = "" if entry.pinned else " --trust-unpinned"
    return f"hayai-desktop models download {entry.name}{flag}"


PICKLE_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".pkl")


def _unpinned_risk(entry: ModelEntry) -> str:
    """Why an unpinned model is not used blindly, for the messages."""
    if any(f.name.endswith(PICKLE_SUFFIXES) for f in entry.files):
        return " and its file is a pickle that can run code when loaded"
    return " (its published files could not be checked by this app yet)"


def _store_path(entry: ModelEntry) -> Path:
    return models_dir() / entry.name


def _result_path(entry: ModelEntry, folder: Path) -> Path:
    """A single-file model resolves to its file, the others to their folder."""
    return folder / entry.files[0].name if entry.single_file else folder


# ------------------------------------------------------------------------------- resolution
def _hf_cache_folder(entry: ModelEntry) -> Path | None:
    """The HF cache snapshot folder holding all of `entry`'s files at a pinned revision, or None."""
    from huggingface_hub import try_to_load_from_cache

    cache = hf_cache_dir()
    if not cache.is_dir():
        return None
    for rev in (entry.revision, *entry.also_revisions):
        paths = [try_to_load_from_cache(entry.repo_id, f.name, cache_dir=cache, revision=rev)
                 for f in entry.files]
        if all(isinstance(p, str) for p in paths):
            return Path(paths[0]).parent  # type: ignore[arg-type]
    return None


def locate(name: str | ModelEntry) -> tuple[Path, str] | None:
    """Where `name` is installed, without hashing: (folder, "app" | "hf-cache") or None."""
    entry = get_entry(name)
    store = _store_path(entry)
    if all((store / f.name).is_file() for f in entry.files):
        return store, "app"
    folder = _hf_cache_folder(entry)
    return (folder, "hf-cache") if folder is not None else None


def _check_files(entry: ModelEntry, folder: Path, where: str, trust_unpinned: bool) -> None:
    """Raise ModelError unless every file of `entry` in `folder` matches its pinned/trusted sha256.

    A bad file in the app store is deleted (it will be fetched again); the HF cache is left alone.
    """
    for f in entry.files:
        path = folder / f.name
        want = _expected_sha(entry, f)
        if want is None and not trust_unpinned:
            raise ModelError(
                f"{path}: {entry.name} has no pinned sha256{_unpinned_risk(entry)}, so it is not loaded "
                f"unverified. If you trust {entry.repo_id}, run: {download_command(entry)} (or choose the "
                "file explicitly by its path)."
            )
        got = file_sha256(path)
        if want is None:
            _trust(entry, f, got)
            continue
        if got != want:
            if where == "app":
                path.unlink(missing_ok=True)
                raise ModelError(f"{path} is corrupt (sha256 {got}, expected {want}); the bad file was "
                                 f"deleted. Run: {download_command(entry)}")
            raise ModelError(f"{path} in the Hugging Face cache is corrupt (sha256 {got}, expected {want}). "
                             f"Delete it, or run: {download_command(entry)}")


def _is_bare_name(text: str) -> bool:
    """A manifest name, alias or Hub repo id (these win over a same-named folder in the cwd)."""
    if text in MODELS or text in ALIASES:
        return True
    return any(e.repo_id == text for e in MODELS.values())


def resolve_model(name_or_path: str | os.PathLike | ModelEntry, *, trust_unpinned: bool = False) -> Path:
    """Path of a usable model: its folder, or its file for a single-file model.

    Order: an existing explicit path (returned as is: the user chose it), then the app store,
    then the Hugging Face cache at the pinned revision; files are sha256-checked (see module doc).
    Raises ModelError naming what is missing and the `hayai-desktop models download` command.
    """
    if isinstance(name_or_path, ModelEntry):
        entry = name_or_path
    else:
        text = os.fspath(name_or_path)
        if not _is_bare_name(text):
            path = Path(text).expanduser()
            if path.exists():
                return path.resolve()
            raise ModelError(f"{text!r} is neither an existing model folder or file nor a known model name "
                             f"({', '.join(sorted(MODELS))}; aliases {', '.join(sorted(ALIASES))}). Pass an existing "
                             "folder, or download a model: `hayai-desktop models download NAME` "
                             "(`hayai-desktop models list` shows them).")
        entry = get_entry(text)
    found = locate(entry)
    if found is None:
        store = _store_path(entry)
        partial = [f.name for f in entry.files if (store / f.name).is_file()]
        state = f"incomplete in {store} (has {', '.join(partial)})" if partial else f"not in {store}"
        raise ModelError(f"model {entry.name} is not installed ({state}, nor in the Hugging Face cache "
                         f"{hf_cache_dir()}). Download it with: {download_command(entry)}")
    folder, where = found
    _check_files(entry, folder, where, trust_unpinned)
    return _result_path(entry, folder)


def installed_models() -> dict[str, tuple[Path, str]]:
    """Manifest names found on disk -> (path as resolve_model returns it, "app" | "hf-cache"). No hashing."""
    out = {}
    for name, entry in MODELS.items():
        found = locate(entry)
        if found is not None:
            out[name] = (_result_path(entry, found[0]), found[1])
    return out


def verify(name: str | ModelEntry, progress: ProgressFn | None = None,
           cancel: CancelFn | None = None) -> list[tuple[str, bool, str]]:
    """Re-hash every file of an installed model: [(file name, ok, reason)], no cache, nothing deleted.

    progress(file, bytes hashed, file size) as it reads; cancel() -> True raises Cancelled.
    Raises ModelError when the model is not installed at all.
    """
    entry = get_entry(name)
    found = locate(entry)
    if found is None:
        raise ModelError(f"model {entry.name} is not installed. Download it with: {download_command(entry)}")
    folder = found[0]
    rows = []
    for f in entry.files:
        path = folder / f.name
        if not path.is_file():
            rows.append((f.name, False, f"missing from {folder}"))
            continue
        got = _sha256_file(path, progress, cancel)
        want = _expected_sha(entry, f)
        if want is None:
            rows.append((f.name, False, f"no pinned sha256 and not trusted yet (sha256 {got})"))
        elif got == want:
            how = "pinned" if f.sha256 else "recorded when you trusted it"
            rows.append((f.name, True, f"sha256 matches the {how} hash"))
        else:
            rows.append((f.name, False, f"sha256 mismatch: {got}, expected {want} ({path})"))
    return rows


def remove(name: str | ModelEntry) -> bool:
    """Delete a model from the app store (never from the HF cache) and forget any trust given to its
    unpinned files. True if a folder was removed."""
    entry = get_entry(name)
    store = _store_path(entry)
    trusted = _read_json(_trusted_path())
    keys = [f"{entry.repo_id}/{f.name}" for f in entry.files if f"{entry.repo_id}/{f.name}" in trusted]
    if keys:  # trust went with the removed copy: a new download needs --trust-unpinned again
        _write_json(_trusted_path(), {k: v for k, v in trusted.items() if k not in keys})
    if not store.exists():
        return False
    shutil.rmtree(store)
    return True


def import_folder(path: str | os.PathLike, name: str | ModelEntry, progress: ProgressFn | None = None,
                  cancel: CancelFn | None = None) -> Path:
    """Copy a local model folder (or the file of a single-file model) into the store as model `name`.

    The folder must hold every manifest file; pinned files must match their sha256 (an unpinned
    file is trusted: the user chose it). Returns what resolve_model will return.
    progress(file, bytes done, total) while checking and copying; cancel() -> True raises
    Cancelled and leaves the store as it was.
    """
    entry = get_entry(name)
    src = Path(path).expanduser()
    src_folder = src.parent if (entry.single_file and src.is_file()) else src
    if not src_folder.is_dir():
        raise ModelError(f"{src}: not a folder; cannot import it as {entry.name}.")
    if entry.single_file and src.is_file():
        files = {entry.files[0].name: src}
    else:
        files = {f.name: src_folder / f.name for f in entry.files}
    missing = [n for n, p in files.items() if not p.is_file()]
    if missing:
        raise ModelError(f"{src_folder} lacks {', '.join(missing)}; it is not a complete {entry.name} folder.")
    store = _store_path(entry)
    staging = Path(tempfile.mkdtemp(dir=_ensure(models_dir()), prefix=f".import-{entry.name}-"))
    shas = {}
    try:
        for f in entry.files:  # copy and hash in one read; a pinned file must match before the swap
            shas[f.name] = got = _copy_file(files[f.name], staging / f.name, progress, cancel)
            if f.sha256 and got != f.sha256:
                raise ModelError(f"{files[f.name]}: sha256 {got} does not match {entry.name}'s pinned "
                                 f"{f.sha256}; not imported.")
        if cancel is not None and cancel():
            raise Cancelled(f"import of {entry.name} cancelled")
        if store.exists():
            shutil.rmtree(store)
        os.replace(staging, store)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for f in entry.files:
        _remember_hash(store / f.name, shas[f.name])
        if not f.sha256:
            _trust(entry, f, shas[f.name])
    return _result_path(entry, store)


def _link_or_copy(src: Path, dest: Path) -> None:
    """`dest` becomes `src`'s bytes without a second copy where the file system allows: a hard
    link, else a symbolic link to the resolved blob, else a copy."""
    src = src.resolve()  # the HF cache's snapshot entries are links to blobs
    dest.unlink(missing_ok=True)
    try:
        os.link(src, dest)
        return
    except OSError:
        pass
    try:
        os.symlink(src, dest)
        return
    except OSError:
        shutil.copyfile(src, dest)


def _ensure(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# -------------------------------------------------------------------------------- downloads
def download(
    name: str | ModelEntry,
    progress: ProgressFn | None = None,
    cancel: CancelFn | None = None,
    *,
    trust_unpinned: bool = False,
) -> Path:
    """Fetch a model's files into `models_dir()/NAME` at its pinned revision; return resolve's path.

    Files already in the store with the right sha256 are kept. A model complete and verified in
    the HF cache is used there in place (its path is returned, nothing is copied); single
    verified files from the cache are hard-linked (else symlinked) into the store; the rest come from `$HF_ENDPOINT` (byte progress
    progress(file, bytes_done, bytes_total), cancel() -> True raises Cancelled leaving a
    `.part` file that the next call resumes). A sha256 mismatch deletes the file and raises
    ModelError. With HF_HUB_OFFLINE set, a model that is not complete locally raises ModelError.
    """
    from app.models.fetch import fetch_file

    entry = get_entry(name)
    if not entry.pinned and not trust_unpinned:
        raise ModelError(f"{entry.name} ({entry.repo_id}) has no pinned sha256{_unpinned_risk(entry)}. "
                         f"Download it only if you trust that repository: {download_command(entry)}")
    store = _ensure(_store_path(entry))
    todo = []
    for f in entry.files:
        dest = store / f.name
        want = _expected_sha(entry, f)
        if dest.is_file() and (want is None or file_sha256(dest) == want):
            if want is None:
                _trust(entry, f, file_sha256(dest))
            size = dest.stat().st_size
            if progress:
                progress(f.name, size, size)
            continue
        dest.unlink(missing_ok=True)
        todo.append(f)
    if todo:
        cached = _hf_cache_folder(entry)
        usable = [f for f in todo if cached is not None and _expected_sha(entry, f) is not None
                  and file_sha256(cached / f.name) == _expected_sha(entry, f)]
        if cached is not None and len(usable) == len(entry.files):
            # the whole model is in the Hugging Face cache, verified: use it in place, no second copy
            if not any(store.iterdir()):
                store.rmdir()
            for f in entry.files:
                size = (cached / f.name).stat().st_size
                if progress:
                    progress(f.name, size, size)
            return _result_path(entry, cached)
        for f in usable:  # some files here, the rest in the cache: link them (no copy where possible)
            _link_or_copy(cached / f.name, store / f.name)
            _remember_hash(store / f.name, _expected_sha(entry, f))
            size = (store / f.name).stat().st_size
            if progress:
                progress(f.name, size, size)
            todo.remove(f)
    if todo and is_offline():
        raise ModelError(f"model {entry.name} is not installed (missing {', '.join(f.name for f in todo)} in "
                         f"{store}) and offline mode is on (HF_HUB_OFFLINE). Unset HF_HUB_OFFLINE and run: "
                         f"{download_command(entry)}")
    endpoint = hf_endpoint()
    for f in todo:
        result = fetch_file(
            repo_id=entry.repo_id, revision=entry.revision, filename=f.name, dest=store / f.name,
            endpoint=endpoint, expected_sha256=_expected_sha(entry, f), expected_size=f.size,
            progress=progress, cancel=cancel, require_sha256=False,
        )
        _remember_hash(result.path, result.sha256)
        if _expected_sha(entry, f) is None:
            _trust(entry, f, result.sha256)
    return _result_path(entry, store)
