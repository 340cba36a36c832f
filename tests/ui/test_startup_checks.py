"""Start-up on Linux without the xcb libraries, the names the desktop sees, the fast exit."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.ui.shell import xcb_check

ROOT = Path(__file__).resolve().parents[2]


def test_missing_xcb_library_names_the_packages():
    missing = {"libxcb-cursor.so.0", "libxkbcommon-x11.so.0"}
    line = xcb_check.check({"DISPLAY": ":0"}, load=lambda name: name not in missing)
    assert "\n" not in line
    assert "libxcb-cursor.so.0" in line and "libxkbcommon-x11.so.0" in line
    assert "sudo apt install libxcb-cursor0 libxkbcommon-x11-0" in line  # Debian / Ubuntu
    assert "sudo dnf install libxkbcommon-x11 xcb-util-cursor" in line  # Fedora
    assert xcb_check.check({"DISPLAY": ":0"}, load=lambda name: True) == ""


def test_only_where_qt_takes_its_xcb_plugin():
    nothing = lambda name: False  # noqa: E731 - every library missing
    assert xcb_check.check({"QT_QPA_PLATFORM": "offscreen"}, load=nothing) == ""
    assert xcb_check.check({"WAYLAND_DISPLAY": "wayland-0"}, load=nothing) == ""
    assert xcb_check.check({"QT_QPA_PLATFORM": "xcb", "WAYLAND_DISPLAY": "wayland-0"}, load=nothing)
    assert not xcb_check.uses_xcb({}, platform="win32")
    assert not xcb_check.uses_xcb({}, platform="darwin")


@pytest.mark.skipif(shutil.which("ldconfig") is None and not Path("/sbin/ldconfig").exists(),
                    reason="needs ldconfig (the system's library cache) to know what is installed")
def test_real_lookup_finds_the_installed_libraries():
    """The real lookup against the machine's own library cache (`ldconfig -p`): missing are
    exactly the listed libraries the cache does not have (none on a desktop with Qt's xcb
    libraries, some on a minimal machine)."""
    assert xcb_check.can_load("libc.so.6")
    assert not xcb_check.can_load("libhayai-no-such-library.so.7")
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    cache = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, check=True).stdout
    listed = {line.split()[0] for line in cache.splitlines()[1:] if line.strip()}
    assert sorted(xcb_check.missing_libraries()) == sorted(n for n in xcb_check.XCB_LIBRARIES if n not in listed)


@pytest.mark.skipif(shutil.which("readelf") is None, reason="needs readelf (binutils)")
def test_the_list_covers_what_the_xcb_plugin_links():
    import PySide6

    qt = Path(PySide6.__file__).parent / "Qt"
    needed = set()
    for lib in (qt / "plugins" / "platforms" / "libqxcb.so", qt / "lib" / "libQt6XcbQpa.so.6"):
        out = subprocess.run(["readelf", "-d", str(lib)], capture_output=True, text=True, check=True).stdout
        needed |= {line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line}
    system = {n for n in needed if not n.startswith(("libQt6", "libc.so", "libm.so", "libstdc++", "libgcc_s"))}
    assert system and system <= set(xcb_check.XCB_LIBRARIES), system - set(xcb_check.XCB_LIBRARIES)


def test_the_app_exits_with_one_line_before_creating_the_window(tmp_path):
    code = ("import sys; import app.ui.shell.xcb_check as x; x.can_load = lambda n: n != 'libxcb-cursor.so.0';"
            "from app.cli import main; rc = main([]);"
            "import PySide6.QtWidgets as w; print('APP', w.QApplication.instance()); sys.exit(rc)")
    env = {"DISPLAY": ":99", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "HAYAI_DESKTOP_CONFIG_DIR": str(tmp_path / "config")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 3, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "libxcb-cursor0" in lines[0] and "xcb-util-cursor" in lines[0], out.stderr
    assert "APP None" in out.stdout  # no QApplication was made


def test_application_names(qapp):
    from app.ui.shell.main import configure_application

    configure_application(qapp)
    assert qapp.applicationName() == "hayai-desktop"
    assert qapp.desktopFileName() == "hayai-desktop"
    assert qapp.applicationDisplayName() == "Hayai Desktop"
    desktop = (ROOT / "packaging" / "linux" / "hayai-desktop.desktop").read_text(encoding="utf-8")
    assert "StartupWMClass=hayai-desktop" in desktop and "Exec=hayai-desktop" in desktop


def test_exit_now_runs_exit_handlers_and_flushes():
    code = ("import atexit, sys, torch; from app.cli import exit_now;"
            "atexit.register(lambda: print('handler ran', flush=True));"
            "print('written', end=''); sys.stderr.write('err'); exit_now(5)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 5
    assert out.stdout == "writtenhandler ran\n" and out.stderr == "err"


def test_program_entry_keeps_exit_codes(tmp_path):
    for args, rc in ((["--version"], 0), (["eval", "--no-such-option"], 2), (["models", "list"], 0)):
        out = subprocess.run([sys.executable, "-m", "app", *args], cwd=ROOT, capture_output=True, text=True,
                             timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                               "HAYAI_MODELS_DIR": str(tmp_path / "models")})
        assert out.returncode == rc, (args, out.stderr)
    assert out.stdout.strip()  # models list printed before the fast exit
