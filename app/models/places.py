"""Where models live and where they come from, read from the environment at call time: the app's
model folder, the Hugging Face cache, the Hub endpoint, offline mode. No Qt, no torch."""
from __future__ import annotations

import os
from pathlib import Path

DEFAULT_ENDPOINT = "https://huggingface.co"


def models_dir() -> Path:
    """The app's model directory: `$HAYAI_MODELS_DIR`, else platformdirs' user data dir / "models"."""
    override = os.environ.get("HAYAI_MODELS_DIR")
    if override:
        return Path(override).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("hayai-desktop", appauthor=False)) / "models"


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
