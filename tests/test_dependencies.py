"""Every third-party module the app imports is declared in pyproject.toml's dependencies (not only
installed because another package pulls it in)."""
from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")

ROOT = Path(__file__).resolve().parents[1]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _imported_top_level_modules() -> dict[str, str]:
    """Top-level module -> one file of app/ importing it (stdlib and app itself left out)."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top != "app" and top not in sys.stdlib_module_names:
                    found.setdefault(top, str(path.relative_to(ROOT)))
    return found


def _names(requirements) -> set[str]:
    return {_norm(re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0]) for d in requirements}


def test_every_imported_package_is_declared():
    """In [project] dependencies, or, for the optional imports the bundle leaves out
    (packaging/spec_data.OPTIONAL_IMPORTS: ray for `batch --ray`), in a user-facing extra."""
    sys.path.insert(0, str(ROOT / "packaging"))
    import spec_data  # as tests/test_packaging.py reads it

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = _names(project["dependencies"])
    extras = _names(r for name, reqs in project.get("optional-dependencies", {}).items() if name != "dev"
                    for r in reqs)
    providers = packages_distributions()
    missing = []
    for module, where in sorted(_imported_top_level_modules().items()):
        dists = {_norm(d) for d in providers.get(module, [])}
        known = declared | (extras if module in spec_data.OPTIONAL_IMPORTS else set())
        if not (dists & known or _norm(module) in known):  # PySide6 is split into several wheels
            missing.append(f"{module} (imported by {where}; installed by {sorted(dists) or 'nothing'})")
    assert not missing, "declare in pyproject.toml [project] dependencies: " + "; ".join(missing)
