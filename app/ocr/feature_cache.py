"""The vision tower's features of the crops adapting looked at, remembered between runs (no Qt).

Adapting (app.ocr.adapt) runs the frozen tower once per crop; on the real-size model on a 2-core
CPU that is about a third of a run (0.3 s a crop). A series is taught again and again as its
volumes are corrected, and every time most of the crops are the ones of the last time: their
features are the same numbers. So they are kept here, one file a crop, under a key made of what
decides them: the crop's pixels, the model's identity (the sha256 of its weights), the patch
budget, the precision they were computed in, the device type and the torch version. The values
are stored in bfloat16 where that holds them exactly, else in float32 as computed, so a
remembered crop gives bit for bit what computing it again would.

It is a cache, never a source: a file that cannot be read is computed again (and removed), a
file that cannot be written (a full disk, a read-only folder) is skipped, and when the folder
holds more than its limit the crops used longest ago are removed. The folder is
`$HAYAI_FEATURE_CACHE` or the user's cache folder (platformdirs) / "adapt-features"; its limit
`$HAYAI_FEATURE_CACHE_MB` megabytes (default 2048; 0 turns remembering off). It holds numbers
computed from the user's pages, not the pages or their text; deleting the folder loses nothing
but time.
"""
from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where it is used: the window asks `default_cache()` without it
    import torch
    from PIL import Image

FORMAT = "hayai-adapt-features/1"
DEFAULT_LIMIT_MB = 2048
log = logging.getLogger(__name__)


def default_folder() -> Path:
    from app.models.places import user_folder

    return user_folder("HAYAI_FEATURE_CACHE", "cache", "adapt-features")


def limit_bytes() -> int:
    raw = os.environ.get("HAYAI_FEATURE_CACHE_MB", "").strip()
    try:
        mb = float(raw) if raw else DEFAULT_LIMIT_MB
    except ValueError:
        log.warning("HAYAI_FEATURE_CACHE_MB=%r is not a number of megabytes; using %d", raw, DEFAULT_LIMIT_MB)
        mb = DEFAULT_LIMIT_MB
    return max(0, int(mb * 1024 * 1024))


class FeatureCache:
    """`get(key)` -> (features, patch grid) or None; `put(key, features, grid)`; `trim()` after a
    run. `key(identity, image)`: `identity` is what the model and the reading decide (see
    `identity`)."""

    def __init__(self, folder: str | os.PathLike, limit: int | None = None):
        self.folder = Path(folder)
        self.limit = limit_bytes() if limit is None else limit
        self.hits = 0
        self.stored = 0

    @property
    def enabled(self) -> bool:
        return self.limit > 0

    @staticmethod
    def key(identity: str, image: Image.Image) -> str:
        h = hashlib.sha256(f"{FORMAT}\n{identity}\n{image.mode}\n{image.size}\n".encode())
        h.update(image.tobytes())
        return h.hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.safetensors"

    def get(self, key: str) -> tuple[torch.Tensor, tuple[int, int]] | None:
        if not self.enabled:
            return None
        path = self._path(key)
        if not path.is_file():
            return None
        from safetensors import SafetensorError, safe_open

        try:
            with safe_open(str(path), framework="pt") as f:
                meta = f.metadata() or {}
                feats = f.get_tensor("feats")
            shape = (int(meta["rows"]), int(meta["cols"]))
            if meta.get("format") != FORMAT or meta.get("key") != key or feats.dim() != 2:
                raise ValueError("not this crop's features")
        except (OSError, SafetensorError, KeyError, ValueError) as exc:
            log.warning("%s: remembered features unreadable (%s); computing them again", path, exc)
            path.unlink(missing_ok=True)
            return None
        try:
            os.utime(path)  # used now: trimmed last
        except OSError:
            pass
        self.hits += 1
        return feats.float(), shape

    def put(self, key: str, feats: torch.Tensor, shape: tuple[int, int], dtype: torch.dtype | None = None) -> None:
        if not self.enabled:
            return
        import torch

        dtype = dtype or torch.float32
        from safetensors.torch import save

        from app.atomic import atomic_open

        path = self._path(key)
        stored = feats.detach().to("cpu", dtype).contiguous()
        if dtype != torch.float32 and not torch.equal(stored.float(), feats.detach().cpu().float()):
            stored = feats.detach().cpu().float().contiguous()  # not exact in `dtype`: kept as computed
        meta = {"format": FORMAT, "key": key, "rows": str(shape[0]), "cols": str(shape[1])}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            data = save({"feats": stored}, metadata=meta)
            with atomic_open(path, binary=True) as f:
                f.write(data)
            self.stored += 1
        except OSError as exc:  # a cache: the run goes on without remembering this crop
            log.warning("%s: cannot remember the features (%s)", path, exc.strerror or exc)

    def trim(self) -> int:
        """Remove the files used longest ago until the folder holds at most 80 % of its limit ->
        bytes removed (nothing when under the limit)."""
        if not self.folder.is_dir():
            return 0
        files = []
        for sub in self.folder.iterdir():
            if sub.is_dir():
                for p in sub.glob("*.safetensors"):
                    try:
                        st = p.stat()
                    except OSError:
                        continue
                    files.append((st.st_mtime, st.st_size, p))
        total = sum(size for _, size, _ in files)
        if total <= self.limit:
            return 0
        removed = 0
        for _, size, p in sorted(files):
            if total - removed <= 0.8 * self.limit:
                break
            try:
                p.unlink()
                removed += size
            except OSError:
                pass
        return removed


def identity(model_sha: str, patches: int, amp: torch.dtype | None, device: torch.device,
             dtype: torch.dtype | None = None) -> str:
    """What, beside the crop, decides its features: the weights, the budget, the precision (the
    weights' dtype and autocast's), the device type, the torch version."""
    import torch

    return (f"{model_sha}|patches={patches}|weights={dtype or torch.float32}|amp={amp}|device={device.type}"
            f"|torch={torch.__version__}")


def default_cache() -> FeatureCache | None:
    """The user's feature cache, or None when remembering is turned off."""
    cache = FeatureCache(default_folder())
    return cache if cache.enabled else None
