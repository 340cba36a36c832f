"""The layer contracts of pyproject.toml ([tool.importlinter]), checked with import-linter.

The first test runs `lint-imports` on the app as it is: a broken contract fails the suite, with
import-linter's report of the offending import chain. The second proves the contracts bite: on a
copy of app/ with one bad import of each sort (Qt in core, a stage importing another stage, the
model store importing core, translate importing detect, render importing core inside a function,
a top-level package placed in no layer; inside the window: one feature room importing another,
common importing the editor, a room placed in no layer, two modules importing each other; inside
app.core: the document importing the project files, one room of a layer importing another, a
module of app.core in no room) the contracts report each of them.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint_imports(cwd: Path, extra_env: dict | None = None) -> subprocess.CompletedProcess:
    script = Path(sys.executable).with_name("lint-imports")
    cmd = [str(script)] if script.exists() else [sys.executable, "-c",
                                                  "from importlinter.cli import lint_imports_command; "
                                                  "lint_imports_command()"]
    env = {**os.environ, **(extra_env or {})}
    return subprocess.run([*cmd, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True,
                          encoding="utf-8", timeout=300)


def test_the_app_keeps_its_layer_contracts():
    result = _lint_imports(ROOT)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert "Contracts: 8 kept, 0 broken." in report, report


BAD_IMPORTS = {
    "app/core/bad_qt.py": "from PySide6.QtCore import QObject\n",
    "app/detect/bad_sibling.py": "from app.ocr import text\n",
    "app/models/bad_upward.py": "from app.core import document\n",
    "app/translate/bad_stage.py": "from app.detect import order\n",
    "app/render/bad_core.py": "def f():\n    from app.core import document\n",  # deferred imports count
    "app/extras/__init__.py": "",
    # inside app.ui: the rooms of the window
    "app/ui/translate/bad_feature.py": "from app.ui.reading import worker\n",  # a feature imports another
    "app/ui/render/bad_feature.py": "def f():\n    from app.ui.models import status\n",
    "app/ui/common/bad_upward.py": "from app.ui.editor import document_model\n",
    "app/ui/extras.py": "",  # a module of app.ui in no room
    "app/ui/shell/bad_cycle_a.py": "from app.ui.shell import bad_cycle_b\n",  # an import cycle
    "app/ui/shell/bad_cycle_b.py": "from app.ui.shell import bad_cycle_a\n",
    # inside app.core: its rooms (app/core/bad_qt.py above is also a module of app.core in no room)
    "app/core/document/bad_upward.py": "def f():\n    from app.core.project import codec\n",
    "app/core/reading/bad_sibling.py": "from app.core.exports import json_txt\n",  # a room beside it
    # the light document: no torch, even deferred
    "app/core/sources/bad_heavy.py": "def f():\n    import torch\n",
    # ray outside its engine
    "app/commands/bad_ray.py": "import ray\n",
    # the service stays headless and below nothing but the command line
    "app/service/bad_window.py": "def f():\n    from app.ui.shell import main\n",
}


def test_each_kind_of_bad_import_breaks_a_contract(tmp_path):
    copy = tmp_path / "tree"
    shutil.copytree(ROOT / "app", copy / "app", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    before = _lint_imports(copy, {"PYTHONPATH": str(copy)})
    assert before.returncode == 0, before.stdout + before.stderr  # the copy is the app, unbroken
    for rel, text in BAD_IMPORTS.items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_text(text, encoding="utf-8")

    result = _lint_imports(copy, {"PYTHONPATH": str(copy)})
    report = result.stdout + result.stderr
    assert result.returncode != 0, report
    assert "Contracts: 0 kept, 8 broken." in report, report
    for importer, imported in (("app.core.bad_qt", "PySide6"), ("app.detect.bad_sibling", "app.ocr.text"),
                               ("app.models.bad_upward", "app.core.document"),
                               ("app.translate.bad_stage", "app.detect.order"),
                               ("app.render.bad_core", "app.core.document"),
                               ("app.ui.translate.bad_feature", "app.ui.reading.worker"),
                               ("app.ui.render.bad_feature", "app.ui.models.status"),
                               ("app.ui.common.bad_upward", "app.ui.editor.document_model"),
                               ("app.core.document.bad_upward", "app.core.project.codec"),
                               ("app.core.reading.bad_sibling", "app.core.exports.json_txt"),
                               ("app.core.sources.bad_heavy", "torch"), ("app.commands.bad_ray", "ray"),
                               ("app.service.bad_window", "app.ui.shell.main")):
        assert f"{importer} -> {imported}" in report, (importer, report)
    assert "app.extras" in report, report  # exhaustive: a new package must be given a layer
    assert "app.ui.extras" in report, report  # and a new module of the window a room
    assert "app.core.bad_qt" in report.split("Rooms of app.core")[-1], report  # and of app.core too
    assert ".bad_cycle_a -> .bad_cycle_b" in report or ".bad_cycle_b -> .bad_cycle_a" in report, report


def _protocol_members(path: Path, *classes: str) -> set[str]:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    members = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in classes:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    members.add(item.target.id)
    return members


def _window_uses(path: Path) -> set[str]:
    """The attributes a controller reads of its window: `self.window.X`, and `w.X` where `w = self.window`."""
    import ast

    used = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute):
            owner = node.value
            if (isinstance(owner, ast.Attribute) and owner.attr == "window" and isinstance(owner.value, ast.Name)
                    and owner.value.id == "self") or (isinstance(owner, ast.Name) and owner.id == "w"):
                used.add(node.attr)
    return used


def test_feature_controllers_use_only_the_window_interface():
    """The reading and translation controllers talk to the window through EditorWindow (and
    translation's TranslationWindow), never by reaching into its other attributes."""
    ui = ROOT / "app" / "ui"
    editor = _protocol_members(ui / "editor" / "port.py", "EditorWindow")
    assert {"doc", "edit", "show_notice", "closing"} <= editor
    reading = _window_uses(ui / "reading" / "controller.py")
    assert reading and reading <= editor, sorted(reading - editor)
    translation = _window_uses(ui / "translate" / "control.py")
    allowed = editor | _protocol_members(ui / "translate" / "control.py", "TranslationWindow")
    assert translation and translation <= allowed, sorted(translation - allowed)
