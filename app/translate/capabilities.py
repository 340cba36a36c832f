"""What an OpenAI-compatible server + model accepts, found once and remembered.

The first request of a run finds it out (a 400 / 422 makes the backend try the next response
format, then leave out `temperature`, ...); what worked is saved in a small JSON file (the
settings folder's `llm-capabilities.json`), keyed by the server's URL and the model, so later
runs start with what works. Plain data and one file: no Qt, no app.core.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from app.atomic import atomic_write_json
from app.errors import UserError
from app.textfile import read_json_file

log = logging.getLogger(__name__)
FORMATS = ("schema", "json", "off")


@dataclass(frozen=True)
class Capabilities:
    """format: the response_format the server takes (schema | json | off); temperature: it
    accepts `temperature`; stream: it streams; max_tokens_param: the name of the answer limit
    (max_tokens, or max_completion_tokens for OpenAI's reasoning models); images: the model
    takes image parts ("" = not known yet, "yes", "no")."""

    format: str = "schema"
    temperature: bool = True
    stream: bool = True
    max_tokens_param: str = "max_tokens"
    images: str = ""


def key_for(server: str, model: str) -> str:
    return f"{server.rstrip('/')}|{model}"


class CapabilityStore:
    """Capabilities per server + model in `path` (None: kept in memory only)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else None
        self._lock = threading.Lock()
        self._data: dict[str, dict] = {}
        if self.path is not None and self.path.is_file():
            try:
                data = read_json_file(self.path, "cache of the servers' capabilities",
                                      "The servers' capabilities are found again.")
                self._data = {str(k): v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}
            except UserError as exc:
                log.warning("%s", exc)

    def get(self, server: str, model: str, default: Capabilities | None = None) -> Capabilities | None:
        raw = self._data.get(key_for(server, model))
        if raw is None:
            return default
        known = {f.name for f in fields(Capabilities)}
        caps = replace(default or Capabilities(), **{k: v for k, v in raw.items() if k in known})
        if caps.format not in FORMATS:
            caps = replace(caps, format="schema")
        return caps

    def put(self, server: str, model: str, caps: Capabilities) -> None:
        key = key_for(server, model)
        with self._lock:
            if self._data.get(key) == asdict(caps):
                return
            self._data[key] = asdict(caps)
            if self.path is None:
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_json(self.path, self._data, indent=2, sort_keys=True)
            except OSError as exc:
                log.warning("could not save what %s accepts to %s: %s", server, self.path, exc)


def describe_change(old: Capabilities, new: Capabilities) -> str:
    """What differs from `old` in `new`, as name=value pairs (for the log)."""
    changed = [f"{k}={getattr(new, k)}" for k in ("format", "temperature", "stream", "max_tokens_param")
               if getattr(old, k) != getattr(new, k)]
    return ", ".join(changed)
