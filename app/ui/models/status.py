"""What models are installed, for the banner and the toolbar combos (no hashing: cheap enough
for the GUI thread; the worker verifies checksums when it loads a model)."""
from __future__ import annotations

from pathlib import Path

from app.models.manifest import DEFAULTS
from app.paths import resource_path

DEFAULT_MODEL = DEFAULTS["ocr"]  # what the banner offers to download
NOVA_SIZE_FALLBACK = "about 620 MB"  # the manifest has no byte count for Nova; v2 is 623 MB


DEMO_LABEL = "demo: synthetic text only"  # how the bundled demo models are named wherever they are offered


def demo_models() -> dict[str, Path]:
    """The bundled demo models (app/resources/demo) by kind, "ocr" (a folder) and "detector"
    (a .pt file); a kind absent from this installation is left out."""
    demo = resource_path("demo")
    if not demo.is_dir():
        return {}
    out = {}
    model = next((p.parent for p in sorted(demo.glob("**/config.json"))), None)
    detector = next(iter(sorted(demo.glob("**/*.pt"))), None)
    if model is not None:
        out["ocr"] = model
    if detector is not None:
        out["detector"] = detector
    return out


def is_demo(spec: str) -> bool:
    """`spec` (a setting's model or detector) is one of the bundled demo models."""
    if not spec or not ("/" in spec or "\\" in spec):
        return False
    try:
        path = Path(spec).expanduser().resolve()
    except OSError:
        return False
    return any(path == p.resolve() for p in demo_models().values())


def _store():
    try:
        from app.models import store
    except ImportError:
        return None
    return store


def _installed(spec: str, kind: str) -> bool:
    if not spec:
        return False
    store = _store()
    if store is not None and store._is_bare_name(spec):
        try:
            return store.locate(spec) is not None
        except Exception:  # noqa: BLE001 - an unknown name is simply not installed
            return False
    path = Path(spec).expanduser()
    return path.is_dir() if kind == "ocr" else path.is_file()


def missing_models(model: str, detector: str) -> list[str]:
    """Labels of what is missing: "OCR model", "Text detector"."""
    out = []
    if not _installed(model, "ocr"):
        out.append("OCR model")
    if not _installed(detector, "detector"):
        out.append("Text detector")
    return out


def _choices(kind: str, current: str) -> list[tuple[str, str]]:
    store = _store()
    out: list[tuple[str, str]] = []
    if store is not None:
        installed = store.installed_models()
        for name, entry in store.MODELS.items():
            if entry.kind == kind and name in installed:
                out.append((name, name))
    demo = demo_models().get(kind)
    if demo is not None:  # a first-class choice, named for what it reads
        out.append((f"{demo.stem if kind == 'detector' else demo.name} ({DEMO_LABEL})",
                    current if is_demo(current) else str(demo)))
    if current and current not in [s for _, s in out]:
        label = Path(current).name if ("/" in current or "\\" in current) else current
        if not _installed(current, kind):
            label += " (not installed)"
        out.insert(0, (label, current))
    return out


def model_choices(current: str) -> list[tuple[str, str]]:
    return _choices("ocr", current)


def detector_choices(current: str) -> list[tuple[str, str]]:
    return _choices("detector", current)


def human_size(n: int | None) -> str:
    if n is None:
        return "size unknown"
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def default_model_size_text() -> str:
    store = _store()
    size = None
    if store is not None and DEFAULT_MODEL in store.MODELS:
        size = store.MODELS[DEFAULT_MODEL].size
    return human_size(size) if size else NOVA_SIZE_FALLBACK
