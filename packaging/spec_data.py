"""What the PyInstaller bundle holds, as plain data: read by hayai-desktop.spec and by the fast
CI check (tests/test_packaging.py), so the test checks exactly what the build uses.

Nothing here imports PyInstaller, torch or Qt: the spec turns these lists into Analysis
arguments (collect_submodules, copy_metadata, collect_data_files), the test checks that every
named file exists, that no path is absolute or points into a site-packages folder, and that
every module name imports in the build environment.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the project root (holds app/; app/resources/ is package data)
APP_NAME = "hayai-desktop"                    # dist/hayai-desktop/hayai-desktop
ENTRY = "packaging/entry.py"                  # relative to ROOT
ICON_DIR = "app/resources/icons"                # optional: hayai-desktop.ico / .icns for Windows / macOS

# Imported by name at run time, which PyInstaller's import scan cannot see:
# - app.cli loads app.commands.* with importlib (every app module is listed by app_modules());
# - transformers resolves `from transformers import Siglip2VisionModel` through its lazy module
#   machinery (importlib on "transformers.models.siglip2.modeling_siglip2").
SUBMODULE_PACKAGES = [
    "transformers.models.siglip2",
    "transformers.models.auto",             # imported by modeling_utils through the lazy module
    "transformers.models.encoder_decoder",
    "tokenizers",
    "safetensors",
    "fontTools.ttLib.tables",                # fontTools loads each table's module by name (the cmap: glyph fallback)
]
HIDDEN_IMPORTS = [
    "transformers.models.siglip2.configuration_siglip2",
    "transformers.models.siglip2.modeling_siglip2",
    "safetensors.torch",
    "torchvision.transforms.v2",
    "PIL.ImageDraw",
    "PIL.ImageFont",
    # photoshopapi (PSD type layers) imports its compiled module from a platform folder in an if:
    # lib64/ in the Linux wheels, lib/ in the macOS and Windows ones
    "photoshopapi",
    "photoshopapi.lib64.photoshopapi" if sys.platform == "linux" else "photoshopapi.lib.photoshopapi",
]

# Distributions whose metadata is read at run time (importlib.metadata.version checks in
# transformers, huggingface_hub, ultralytics, torch). Distribution names, not module names.
METADATA = [
    "transformers", "tokenizers", "safetensors", "huggingface_hub", "torch", "torchvision", "tqdm",
    "regex", "numpy", "packaging", "filelock", "pyyaml", "pillow", "ultralytics", "opencv-python",
    "platformdirs", "rapidfuzz", "requests", "psutil",
]

# Packages whose compiled extensions are loaded by path rather than imported, so the import scan
# misses them: torchvision's `_C_stable.so` (nms, used by ultralytics) and `image_stable.so`.
DYNAMIC_LIB_PACKAGES = ["torchvision"]
DYNAMIC_LIB_PATTERNS = ["*.so", "*.pyd", "*.dylib"]  # PyInstaller's default only matches lib*.so on Linux

# Packages whose non-Python files are needed: ultralytics' cfg/ (model and default yamls),
# pyphen's hyphenation dictionaries (typeset translations).
DATA_PACKAGES = {
    "ultralytics": ["cfg/**/*.yaml"],
    "pyphen": ["dictionaries/*.dic"],
}

# Modules the app never uses. Dropping them keeps the bundle smaller and the build shorter.
EXCLUDES = [
    # torch extras: the compiler stack (triton alone is ~900 MB), test suites, tensorboard
    # (torch.testing._internal stays: torch.utils.checkpoint and torch.distributed import parts of it)
    "triton", "torch.utils.tensorboard", "tensorboard", "torch.utils.benchmark",
    "torch._inductor.fx_passes.serialized_patterns", "functorch.dim",
    # plotting / dataframes / notebooks: not used by ultralytics' predict path (checked by the smoke test)
    "matplotlib", "polars", "pandas", "scipy", "IPython", "jupyter", "notebook", "ipykernel", "tkinter",
    # build and test tooling present in the dev environment
    "pytest", "_pytest", "pytestqt", "PyInstaller", "ruff", "pip",
    # the optional extra [cluster]: only `hayai-desktop batch --ray` uses it (OPTIONAL_IMPORTS)
    "ray",
    # Qt modules the app does not load (it uses QtCore, QtGui, QtWidgets only)
    "PySide6.QtWebEngineCore", "PySide6.QtWebEngineWidgets", "PySide6.QtWebEngineQuick", "PySide6.QtWebChannel",
    "PySide6.QtWebSockets", "PySide6.QtQml", "PySide6.QtQuick", "PySide6.QtQuickWidgets", "PySide6.QtQuick3D",
    "PySide6.Qt3DCore", "PySide6.Qt3DRender", "PySide6.Qt3DInput", "PySide6.Qt3DLogic", "PySide6.Qt3DExtras",
    "PySide6.Qt3DAnimation", "PySide6.QtMultimedia", "PySide6.QtMultimediaWidgets", "PySide6.QtPdf",
    "PySide6.QtPdfWidgets", "PySide6.QtCharts", "PySide6.QtDataVisualization", "PySide6.QtGraphs",
    "PySide6.QtDesigner", "PySide6.QtHelp", "PySide6.QtBluetooth", "PySide6.QtPositioning", "PySide6.QtLocation",
    "PySide6.QtSensors", "PySide6.QtSerialPort", "PySide6.QtSql", "PySide6.QtTest", "PySide6.QtRemoteObjects",
    "PySide6.QtScxml", "PySide6.QtSpatialAudio", "PySide6.QtTextToSpeech", "PySide6.QtNfc", "PySide6.QtHttpServer",
]

# Excluded modules that app code may still import, inside a function and only in these files,
# behind a clear error when they are missing: the bundle runs everything else without them.
OPTIONAL_IMPORTS = {
    "ray": ["app/core/batch/ray_engine.py"],
}

# Qt plugins that PySide6's hooks collect but the app never loads, and the Qt libraries only they
# need (QML/Quick for the virtual keyboard, Pdf for the PDF image format): about 25 MB.
# fnmatch patterns on the file's path in the bundle.
BINARY_EXCLUDES = [
    "*/platforminputcontexts/libqtvirtualkeyboardplugin.*", "*/imageformats/*qpdf.*",
    "*libQt6VirtualKeyboard*", "*libQt6Quick*", "*libQt6Qml*", "*libQt6Pdf*",
    "*Qt6VirtualKeyboard*.dll", "*Qt6Quick*.dll", "*Qt6Qml*.dll", "*Qt6Pdf*.dll",
]

# Data files PySide6's hook collects that the app never reads: Qt's own translations (.qm, 7 MB
# for 99 files), loaded only through a QTranslator, which the app (English only) never installs.
DATA_EXCLUDES = ["PySide6/Qt/translations/*"]

RESOURCE_DIR = "app/resources"               # fonts, demo models, sample pages: package data of `app`
# Files under app/ that are not shipped (sources of generated files). The notes (README.md) are:
# the fonts' one says where each face comes from and under which licence.
RESOURCE_SKIP_SUFFIXES = {".pyc", ".xcf", ".psd"}


def keep_binary(dest: str) -> bool:
    """False for a bundle path matched by BINARY_EXCLUDES (`PySide6/Qt/lib/libQt6Qml.so.6`)."""
    from fnmatch import fnmatch

    dest = dest.replace("\\", "/")
    return not any(fnmatch(dest, pattern) or fnmatch("/" + dest, pattern) for pattern in BINARY_EXCLUDES)


def keep_data(dest: str) -> bool:
    """False for a bundle path matched by DATA_EXCLUDES (`PySide6/Qt/translations/qt_de.qm`)."""
    from fnmatch import fnmatch

    return not any(fnmatch(dest.replace("\\", "/"), pattern) for pattern in DATA_EXCLUDES)


def app_modules(root: Path = ROOT) -> list[str]:
    """Every module of the `app` package, dotted (`app.commands.ocr`), found by walking app/."""
    names = []
    for path in sorted((root / "app").rglob("*.py")):
        rel = path.relative_to(root).with_suffix("")
        parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
        names.append(".".join(parts))
    return names


def package_datas(root: Path = ROOT) -> list[tuple[str, str]]:
    """(source file, destination folder in the bundle) for each non-Python file of the app package:
    app/resources/ (fonts, demo models, samples) and data beside the code (the export's JSON
    schema). The same files are the wheel's package data (pyproject.toml). Source paths are
    relative to `root` (the spec passes absolute ones built from SPECPATH). Model weights are not
    bundled apart from the small demo models in app/resources/demo."""
    out = []
    for path in sorted((root / "app").rglob("*")):
        if (path.is_file() and path.suffix not in {".py"} and path.suffix.lower() not in RESOURCE_SKIP_SUFFIXES
                and "__pycache__" not in path.parts):
            rel = path.relative_to(root)
            out.append((rel.as_posix(), rel.parent.as_posix()))
    return out


def resource_datas(root: Path = ROOT) -> list[tuple[str, str]]:
    """The entries of package_datas() under app/resources/ (the smoke test checks each is in the bundle)."""
    return [(src, dest) for src, dest in package_datas(root) if src.startswith(RESOURCE_DIR + "/")]


def icon(root: Path = ROOT, platform: str = "linux") -> str | None:
    """The platform icon file relative to root (`.ico` Windows, `.icns` macOS), None when absent."""
    suffix = {"win32": ".ico", "darwin": ".icns"}.get(platform)
    if suffix is None:
        return None
    path = root / ICON_DIR / f"{APP_NAME}{suffix}"
    return path.relative_to(root).as_posix() if path.is_file() else None
