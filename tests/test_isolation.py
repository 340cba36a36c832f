"""A test run never touches the user's machine: tests that store API keys, write settings, the
LLM capability cache, projects and autosaves, run as a user's own `pytest` would (HOME pointing
at a user's folder, a desktop keyring that records what is stored in it, API keys in the
environment), and afterwards that user's home and keyring are as they were."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Tests that store keys (keyring and key file), write settings.json, the LLM capability cache
# (translation runs against the loopback server), projects, autosaves and the edit journal.
INNER = [
    "tests/test_translation_keys.py",
    "tests/test_translate_cli.py::test_the_gui_choice_is_used_when_no_provider_is_given",
    "tests/test_translate_cli.py::test_source_project_is_saved_per_page_and_resumed",
    "tests/test_translate_page_image_memory.py",
    "tests/test_edit_journal.py",
    "tests/ui/test_translation_gui.py::test_a_key_over_plain_http_to_another_machine_is_asked_first",
]


def test_a_test_run_leaves_the_users_home_and_keyring_untouched(tmp_path):
    home = tmp_path / "user"
    (home / ".config").mkdir(parents=True)
    spy = tmp_path / "desktop-keyring.json"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HAYAI_", "XDG_", "HF_", "YOLO_CONFIG", "MPLCONFIG")) or k == "HAYAI_TEST_CACHE"}
    env.update({
        "HOME": str(home), "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
        "PYTHON_KEYRING_BACKEND": "isolation_keyring.DesktopKeyring", "HAYAI_SPY_KEYRING_FILE": str(spy),
        "OPENAI_API_KEY": "sk-users-own-key", "DEEPL_AUTH_KEY": "users-deepl:fx", "QT_QPA_PLATFORM": "offscreen",
    })
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
                          "--basetemp", str(tmp_path / "pytest"), *INNER],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert " passed" in run.stdout and " skipped" not in run.stdout.splitlines()[-1]
    written = sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file())
    assert written == [], f"the test run wrote into the user's home: {written[:20]}"
    assert not spy.exists() or spy.read_text() in ("", "{}"), f"the test run stored in the desktop keyring: {spy.read_text()}"
