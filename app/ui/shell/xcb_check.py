"""Before the QApplication exists on Linux/X11: are the system libraries Qt's xcb plugin needs
installed? Without them Qt aborts with a message about "no Qt platform plugin"; this check names
the packages to install instead (Debian/Ubuntu and Fedora names) in one line.

No Qt import here (it runs before Qt is loaded). The library lookup is injectable for tests:
`missing_libraries(load=...)`.
"""
from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Callable

# The system libraries PySide6's xcb platform plugin (libqxcb.so and libQt6XcbQpa.so.6) links
# against: soname -> (Debian/Ubuntu package, Fedora package). tests/ui/test_startup_and_layers.py
# checks this list against the plugin's own ELF entries.
XCB_LIBRARIES: dict[str, tuple[str, str]] = {
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2"),
}


def can_load(soname: str) -> bool:
    """Can the dynamic loader find and load `soname`? (It loads it, as Qt would a moment later.)"""
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def uses_xcb(environ=None, platform: str | None = None) -> bool:
    """Will Qt start with its xcb (X11) plugin? On Linux when QT_QPA_PLATFORM is unset or xcb,
    and not in a Wayland session (where Qt takes its wayland plugin first)."""
    environ = os.environ if environ is None else environ
    if not (platform or sys.platform).startswith("linux"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    if chosen:
        return chosen == "xcb"
    return not (environ.get("WAYLAND_DISPLAY") or environ.get("XDG_SESSION_TYPE", "").lower() == "wayland")


def missing_libraries(load: Callable[[str], bool] | None = None) -> list[str]:
    """The sonames of XCB_LIBRARIES that `load` (default `can_load`) cannot load."""
    load = load or can_load
    return [name for name in XCB_LIBRARIES if not load(name)]


def install_hint(missing: list[str]) -> str:
    """One line: what is missing and the packages that bring it, for Debian/Ubuntu and Fedora."""
    debian = sorted({XCB_LIBRARIES[m][0] for m in missing})
    fedora = sorted({XCB_LIBRARIES[m][1] for m in missing})
    return (f"hayai-desktop: cannot start the window: Qt's X11 (xcb) support needs {', '.join(missing)}, "
            f"not installed. Install them: Debian/Ubuntu: sudo apt install {' '.join(debian)}; "
            f"Fedora: sudo dnf install {' '.join(fedora)}.")


def check(environ=None, load: Callable[[str], bool] | None = None) -> str:
    """"" when the window can start, else the one line to print before exiting."""
    if not uses_xcb(environ):
        return ""
    missing = missing_libraries(load)
    return install_hint(missing) if missing else ""
