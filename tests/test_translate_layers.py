"""app/translate sits beside app/ocr, app/detect and app/render: it imports none of them, nor
app/core, app/ui, app/commands or Qt (only app.models and app.errors from the app)."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = ("app.core", "app.ui", "app.commands", "app.ocr", "app.detect", "app.render", "PySide6", "app.cli")


def imported_modules(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):  # also imports deferred inside functions
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def test_translate_imports_no_sibling_nor_upper_layer():
    files = sorted((ROOT / "app" / "translate").glob("*.py"))
    assert len(files) >= 7
    bad = [(f.name, m) for f in files for m in imported_modules(f)
           if any(m == x or m.startswith(x + ".") for x in FORBIDDEN)]
    assert bad == []


def test_the_check_sees_a_forbidden_import(tmp_path):
    probe = tmp_path / "x.py"
    probe.write_text("def f():\n    from app.core.document import Page\n", encoding="utf-8")
    assert "app.core.document" in list(imported_modules(probe))
