"""Fast checks of the PyInstaller build description (the full build is packaging/smoke_test.sh).

The spec takes its lists from packaging/spec_data.py; these tests check them without importing
PyInstaller, torch or Qt: the spec is valid Python that uses those lists, every file it names
exists under the project root (relative paths, nothing from a site-packages folder), every hidden
import and data package resolves in this environment, and the app never imports what the build
excludes.
"""
from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packaging"))
import spec_data as sd  # noqa: E402

SPEC = ROOT / "hayai-desktop.spec"


def _module_file(name: str) -> Path | None:
    """The file of dotted module `name`, found on disk without importing it (or its parents)."""
    top, *rest = name.split(".")
    spec = importlib.util.find_spec(top)  # a top-level find does not import anything
    if spec is None:
        return None
    if not rest:
        return Path(spec.origin) if spec.origin and spec.origin != "built-in" else Path(top)
    folders = [Path(p) for p in (spec.submodule_search_locations or [])]
    for i, part in enumerate(rest):
        last = i == len(rest) - 1
        found = None
        for folder in folders:
            if (folder / part / "__init__.py").is_file() or (not last and (folder / part).is_dir()):
                found = folder / part  # a package, or a folder inside one (a namespace: photoshopapi/lib64)
                break
            if last and ((folder / f"{part}.py").is_file() or list(folder.glob(f"{part}.*.so"))
                         or list(folder.glob(f"{part}.*.pyd"))):
                return folder / part
        if found is None:
            return None
        folders = [found]
    return folders[0] / "__init__.py"


def test_spec_is_valid_python_and_uses_spec_data():
    tree = ast.parse(SPEC.read_text(encoding="utf-8"), filename=str(SPEC))
    source = SPEC.read_text(encoding="utf-8")
    assert "SPECPATH" in source and "site-packages" not in source and "/work/" not in source
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "sd"}
    assert {"ENTRY", "APP_NAME", "EXCLUDES", "METADATA", "HIDDEN_IMPORTS", "SUBMODULE_PACKAGES",
            "DATA_PACKAGES", "DYNAMIC_LIB_PACKAGES", "package_datas", "app_modules"} <= used
    calls = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert {"Analysis", "PYZ", "EXE", "COLLECT"} <= calls


def test_entry_point_exists_and_runs_the_cli():
    entry = ROOT / sd.ENTRY
    assert entry.is_file()
    assert "from app.cli import entry" in entry.read_text(encoding="utf-8")  # main(), then the fast exit
    assert sd.APP_NAME == "hayai-desktop"


def test_data_files_exist_and_are_relative():
    datas = sd.package_datas(ROOT)
    assert any(src.endswith("/export_schema.json") for src, _ in datas)  # read at run time by the JSON export
    assert set(sd.resource_datas(ROOT)) <= set(datas) and sd.resource_datas(ROOT)
    for src, dest in datas:
        assert not Path(src).is_absolute() and "site-packages" not in src, src
        assert (ROOT / src).is_file(), f"{src}: named by the spec but missing"
        assert not Path(dest).is_absolute() and ".." not in Path(dest).parts
        assert Path(src).parent.as_posix() == dest  # same layout in the bundle as in the checkout
        assert not src.endswith((".py", ".pyc"))
    if (ROOT / "app" / "resources").is_dir():
        shipped = {src for src, _ in datas}
        for path in (ROOT / "app" / "resources").rglob("*"):
            if path.is_file() and path.suffix.lower() not in sd.RESOURCE_SKIP_SUFFIXES:
                assert path.relative_to(ROOT).as_posix() in shipped


def test_every_app_module_is_a_hidden_import():
    """app.cli loads subcommands by name, so every app module must be listed explicitly."""
    modules = sd.app_modules(ROOT)
    assert "app" in modules and "app.cli" in modules and "app.paths" in modules
    from app import cli

    for module in cli.SUBCOMMANDS.values():
        if (ROOT / (module.replace(".", "/") + ".py")).is_file():
            assert module in modules
    for module in modules:
        assert not module.startswith("tests")
        assert _module_file(module) is not None, module


@pytest.mark.parametrize("name", sd.HIDDEN_IMPORTS + sd.SUBMODULE_PACKAGES + list(sd.DATA_PACKAGES)
                         + sd.DYNAMIC_LIB_PACKAGES)
def test_hidden_imports_resolve(name):
    assert _module_file(name) is not None, f"{name}: listed in packaging/spec_data.py but not installed"


def test_metadata_distributions_are_installed():
    for dist in sd.METADATA:
        assert importlib.metadata.version(dist), dist


def test_dynamic_lib_packages_hold_libraries():
    for package in sd.DYNAMIC_LIB_PACKAGES:
        folder = _module_file(package).parent
        assert [p for pattern in sd.DYNAMIC_LIB_PATTERNS for p in folder.glob(pattern)], package


def test_binary_excludes_drop_unused_qt_only():
    for dest in ["PySide6/Qt/lib/libQt6Qml.so.6", "libQt6Quick.so.6", "PySide6/Qt/lib/libQt6Pdf.so.6",
                 "PySide6/Qt/plugins/imageformats/libqpdf.so", "PySide6\\Qt6Quick.dll",
                 "PySide6/Qt/plugins/platforminputcontexts/libqtvirtualkeyboardplugin.so"]:
        assert not sd.keep_binary(dest), dest
    for dest in ["PySide6/Qt/lib/libQt6Widgets.so.6", "PySide6/Qt/lib/libQt6Gui.so.6", "PySide6/Qt/lib/libQt6Svg.so.6",
                 "PySide6/Qt/plugins/platforms/libqoffscreen.so", "PySide6/Qt/plugins/platforms/libqxcb.so",
                 "PySide6/Qt/plugins/imageformats/libqjpeg.so", "torch/lib/libtorch_cpu.so",
                 "torchvision/_C_stable.so", "nvidia/cudnn/lib/libcudnn_ops.so.9"]:
        assert sd.keep_binary(dest), dest


def test_data_excludes_drop_qt_translations_only():
    assert not sd.keep_data("PySide6/Qt/translations/qt_de.qm")
    assert not sd.keep_data("PySide6\\Qt\\translations\\qtbase_ja.qm")
    for dest in ["app/resources/fonts/NotoSansCJKjp-Regular.otf", "ultralytics/cfg/default.yaml",
                 "pyphen/dictionaries/hyph_en_US.dic", "PySide6/Qt/plugins/platforms/libqxcb.so"]:
        assert sd.keep_data(dest), dest


def test_data_package_patterns_match_files():
    for package, patterns in sd.DATA_PACKAGES.items():
        folder = _module_file(package).parent
        for pattern in patterns:
            assert list(folder.glob(pattern)), f"{package}: {pattern} matches nothing"


def _imports(tree):
    """(module name, at module level?) for each absolute import in a parsed file."""
    top = {id(node) for node in tree.body}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        for name in names:
            yield name, id(node) in top


def test_app_never_imports_an_excluded_module():
    """Excluded modules are never imported, but for the optional ones (ray): inside a function,
    in the files spec_data.OPTIONAL_IMPORTS names."""
    excluded = set(sd.EXCLUDES)
    assert set(sd.OPTIONAL_IMPORTS) <= excluded
    for path in (ROOT / "app").rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        for name, module_level in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            parts = name.split(".")
            for hit in {".".join(parts[:i]) for i in range(1, len(parts) + 1)} & excluded:
                allowed = rel in sd.OPTIONAL_IMPORTS.get(hit, []) and not module_level
                assert allowed, f"{rel} imports {name}, which hayai-desktop.spec excludes"
    assert not excluded & set(sd.HIDDEN_IMPORTS + sd.SUBMODULE_PACKAGES)


def test_resource_path_from_source_and_frozen(monkeypatch, tmp_path):
    from app import paths

    assert paths.resource_path("samples") == ROOT / "app" / "resources" / "samples"
    assert not paths.is_frozen()
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(tmp_path), raising=False)
    assert paths.is_frozen()
    assert paths.resource_path("demo", "x.pt") == tmp_path / "app" / "resources" / "demo" / "x.pt"


def test_smoke_script_is_valid_bash_and_wired_to_make():
    script = ROOT / "packaging" / "smoke_test.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    assert "packaging/smoke_test.sh" in (ROOT / "Makefile").read_text(encoding="utf-8")
