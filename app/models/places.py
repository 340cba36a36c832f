"""Where models live and where they come from, read from the environment at call time: the app's
model folder, the Hugging Face cache, the Hub endpoint, offline mode. No Qt, no torch."""
from __future__ import annotations

import os
from pathlib import Path

DEFAULT_ENDPOINT = "https://huggingface.co"


def user_folder(env: str, kind: str, name: str) -> Path:
    """`$env` when set, else the app's platformdirs user folder of `kind` ("data", "cache") / `name`."""
    override = os.environ.get(env)
    if override:
        return Path(override).expanduser()
    import platformdirs

    base = {"data": platformdirs.user_data_dir, "cache": platformdirs.user_cache_dir}[kind]
    return Path(base("hayai-desktop", appauthor=False)) / name


def models_dir() -> Path:
    """The app's model directory: `$HAYAI_MODELS_DIR`, else platformdirs' user data dir / "models"."""
    return user_folder("HAYAI_MODELS_DIR", "data", "models")


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache, read from the environment at call time."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def hf_endpoint() -> str:
    """`$HF_ENDPOINT` (read now, not at import) or https://huggingface.co, without a trailing slash."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def is_offline() -> bool:
    """True when `HF_HUB_OFFLINE` is set to 1/true/yes/on now (or was when huggingface_hub loaded)."""
    value = os.environ.get("HF_HUB_OFFLINE", "").strip().upper()
    if value in ("1", "ON", "YES", "TRUE"):
        return True
    if value in ("0", "OFF", "NO", "FALSE"):
        return False
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)
