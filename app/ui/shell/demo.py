"""The demo from inside the app: Help > Open the demo pages switches the window to the sample
pages and the demo models with the demo's own settings file (as `hayai-desktop --demo` does);
opening any other volume switches back to the user's own settings, keeping the models read with
in the demo where the user's own are not installed. The user's settings file is never written by
the demo (the volume opened after it writes it, with the models it kept)."""
from __future__ import annotations

from argparse import Namespace
from pathlib import Path

from app.ui.shell.startup import demo_paths, startup_settings


def samples_folder() -> Path | None:
    return demo_paths()[0]


def open_demo(w, open_path) -> bool:
    """Open the sample pages with the demo models, `open_path(path)` (the session's) opening
    them; False when they are not installed or the user kept the open volume (unsaved changes,
    Cancel)."""
    try:
        settings, settings_file, path = startup_settings(Namespace(demo=True))
    except FileNotFoundError as exc:
        w.show_notice("error", f"The demo is not in this installation: {exc}")
        return False
    keep = None if w.demo else (w.settings, w.settings_path)
    _switch(w, settings, settings_file, demo=True)
    if not open_path(path):
        if keep is not None:
            _switch(w, *keep, demo=False)
        return False
    if keep is not None:
        w.user_settings = keep
    return True


def leave_for(w, path) -> None:
    """Called as volume `path` opens: back to the user's settings unless it is the demo's."""
    samples = samples_folder()
    if not w.demo or (samples is not None and Path(path).resolve() == samples.resolve()):
        return
    from app.core.config.settings import load_settings

    settings, settings_file = w.user_settings or (load_settings(), None)
    _switch(w, _keep_models(w.settings, settings), settings_file, demo=False)


def _keep_models(in_use, own):
    """The user's settings `own`, with the models read with in the demo kept where the user's
    own are not installed (or were chosen during the demo): going back to an uninstalled Nova
    left the user with nothing that reads, though the demo's models were there and chosen."""
    from dataclasses import replace

    from app.ui.models import status as model_status

    missing = model_status.missing_models(own.model, own.detector)  # of the user's own
    changes = {}
    for field, label in (("model", "OCR model"), ("detector", "Text detector")):
        used = getattr(in_use, field)
        if used != getattr(own, field) and (label in missing or not model_status.is_demo(used)):
            changes[field] = used
    return replace(own, **changes) if changes else own


def _switch(w, settings, settings_file, demo: bool) -> None:
    w.switch_settings(settings, settings_file, demo)
