"""Start-up helpers that need no window: where the resources are, the demo's files, the settings
a start-up (plain, `--demo`, `--model`, `--detector`) opens with.

Imports no window code (no Qt at all), so the window's modules and the demo can use it without an
import cycle."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.paths import resource_path

DEMO_PATCHES = 256  # the demo recognizer was trained at 128-384 patches and reads best at 256
DEMO_SETTINGS_FILE = "demo-settings.json"  # beside settings.json


def demo_paths() -> tuple[Path | None, Path | None, Path | None]:
    """(samples folder, demo OCR model folder, demo detector .pt), each None when absent."""
    samples = resource_path("samples")
    demo = resource_path("demo")
    model = next((p.parent for p in sorted(demo.glob("**/config.json"))), None) if demo.is_dir() else None
    detector = next(iter(sorted(demo.glob("**/*.pt"))), None) if demo.is_dir() else None
    return (samples if samples.is_dir() else None), model, detector


def startup_settings(args):
    """(settings, settings file or None for the user's settings.json, path to open) for `args`.

    `--demo` opens app/resources/samples with the demo models and keeps its own settings file
    (DEMO_SETTINGS_FILE), so the demo's models and budget never replace the user's own choices;
    the demo recognizer reads best at DEMO_PATCHES. --model / --detector win over both.
    FileNotFoundError when the demo's files are not in this installation.
    """
    from app.core.config.settings import config_dir, load_settings

    settings = load_settings()
    settings_file = None
    path = getattr(args, "path", None)
    if getattr(args, "demo", False):
        samples, model, detector = demo_paths()
        if samples is None or model is None or detector is None:
            raise FileNotFoundError(f"the demo needs the sample pages ({resource_path('samples')}) and the demo "
                                    f"models ({resource_path('demo')}); they are not in this installation.")
        path = path or str(samples)
        settings_file = config_dir() / DEMO_SETTINGS_FILE
        settings = load_settings(settings_file) if settings_file.is_file() else replace(settings, patches=DEMO_PATCHES)
        settings = replace(settings, model=str(model), detector=str(detector))
    if getattr(args, "model", None):
        settings = replace(settings, model=args.model)
    if getattr(args, "detector", None):
        settings = replace(settings, detector=args.detector)
    return settings, settings_file, path
