"""Error messages for the window: the layers below word their errors for the command line
("Download it with: hayai-desktop models download nova"); in the window the user gets the action
instead, a button that opens the model manager on that model.

`for_gui(message)` rewrites the terminal commands of a message into what to do in the window and
says which model it is about (None when none).
"""
from __future__ import annotations

import re

_CMD = r"`?hayai-desktop models download (?P<name>[A-Za-z0-9._\-]+)(?: --trust-unpinned)?`?"
_RULES = (
    (re.compile(r"[Dd]ownload it with: " + _CMD), "Download it in the model manager"),
    (re.compile(r"[Dd]ownload a model with " + _CMD + r" or pass --model DIR"),
     "Download a model in the model manager, or choose a model folder (Models menu)"),
    (re.compile(r"download (?:one|a model)(?: with|:) " + _CMD), "download one in the model manager"),
    (re.compile(r"\(" + _CMD + r"\)"), "(in the model manager)"),
    (re.compile(_CMD), "the model manager"),
    (re.compile(r",? or pass --model(?: DIR)?"), ", or choose one in the window's settings"),
)
MANAGER = "model manager"


def for_gui(message: str) -> tuple[str, str | None]:
    """(message without terminal commands, the manifest name of the model it is about or None)."""
    found = re.search(_CMD, message)
    model = _manifest_name(found.group("name")) if found else None
    for pattern, replacement in _RULES:
        message = pattern.sub(replacement, message)
    if found and message and message[-1] not in ".!?)":
        message += "."
    return message, model


def mentions_manager(message: str) -> bool:
    return MANAGER in message.lower()


def _manifest_name(name: str) -> str | None:
    from app.errors import UserError
    from app.models import store

    try:
        return store.get_entry(name).name
    except UserError:
        return None
