"""A keyring backend standing for the user's desktop keyring in tests/test_isolation.py: chosen
with PYTHON_KEYRING_BACKEND, it keeps what is stored in the JSON file $HAYAI_SPY_KEYRING_FILE,
so the outer test sees whether an inner test run stored anything there."""
from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend


class DesktopKeyring(KeyringBackend):
    priority = 5

    def _file(self) -> Path:
        return Path(os.environ["HAYAI_SPY_KEYRING_FILE"])

    def _items(self) -> dict:
        try:
            return json.loads(self._file().read_text())
        except FileNotFoundError:
            return {}

    def get_password(self, service, username):
        return self._items().get(f"{service}/{username}")

    def set_password(self, service, username, password):
        items = self._items()
        items[f"{service}/{username}"] = password
        self._file().write_text(json.dumps(items))

    def delete_password(self, service, username):
        items = self._items()
        items.pop(f"{service}/{username}", None)
        self._file().write_text(json.dumps(items))
