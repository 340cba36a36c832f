"""The service's safety model: a bearer token on every request, paths only under the allowed
roots, request bodies bounded.

- The token is random (`secrets.token_urlsafe`), made on first start and kept in the settings
  folder (`api-token`, readable by the user only), or in `--token-file`. It is compared in
  constant time.
- Every path a caller names (a volume to open, an export's output) is resolved (symlinks and
  `..` followed) and must lie under one of the roots given with `--root`; anything else,
  including a path in another platform's form (`C:\\...`, `\\\\server\\share`), is refused
  (`OutsideRoots`, HTTP 403). A relative path is taken under the first root.
"""
from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from app.errors import UserError

TOKEN_FILE = "api-token"
MAX_BODY = 1 << 20  # bytes of one request body (a block's text is a few hundred)
_FOREIGN = re.compile(r"^(?:[A-Za-z]:|[\\/]{2}|\\)")  # a drive, a UNC share, a backslash root


class OutsideRoots(UserError):
    """A path outside the allowed roots (HTTP 403)."""


def default_token_file() -> Path:
    from app.core.config.settings import config_dir

    return Path(config_dir()) / TOKEN_FILE


def load_or_make_token(path: str | os.PathLike | None = None) -> tuple[str, bool]:
    """(token, made now). The file holds the token on its first line; a missing or empty file
    gets a new one, written readable by the user only."""
    from app.atomic import atomic_write_text

    file = Path(path) if path is not None else default_token_file()
    try:
        token = file.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        token = ""
    except OSError as exc:
        raise UserError(f"{file}: cannot read the API token ({exc.strerror or exc}).") from exc
    if token:
        return token, False
    token = secrets.token_urlsafe(32)
    file.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(file, token + "\n", mode=0o600)
    return token, True


def token_matches(given: str | None, token: str) -> bool:
    return given is not None and secrets.compare_digest(given.encode(), token.encode())


class Roots:
    """The folders a caller may name paths under (resolved once)."""

    def __init__(self, roots):
        self.roots = [Path(r).expanduser().resolve() for r in roots]
        for root in self.roots:
            if not root.is_dir():
                raise UserError(f"--root {root}: no such folder.")

    def resolve(self, path: str) -> Path:
        """`path` resolved (symlinks, `..`), when it lies under a root; else OutsideRoots."""
        if not self.roots:
            raise OutsideRoots("the server was started without --root: no path can be opened.")
        text = str(path)
        if not text or "\0" in text or _FOREIGN.match(text):
            raise OutsideRoots(f"{text!r}: not a path under the server's roots.")
        p = Path(text).expanduser()
        if not p.is_absolute():
            p = self.roots[0] / p
        resolved = p.resolve()
        if not any(resolved == r or resolved.is_relative_to(r) for r in self.roots):
            raise OutsideRoots(f"{text}: outside the folders this server may read and write "
                               f"({', '.join(map(str, self.roots))}). Start it with --root for that folder.")
        return resolved
