"""The licence and the third-party notices: LICENSE, pyproject's licence and the About box agree,
and every distribution the bundle can hold gets a licence entry in THIRD_PARTY_LICENSES
(packaging/notices.py, with pip-licenses; the bundle build writes the same file for what it
collected and stops when an entry is missing)."""
from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packaging"))
import notices as nt  # noqa: E402

from app import notices  # noqa: E402


@pytest.fixture(scope="module")
def runtime_names():
    return nt.runtime_distributions()


def test_licence_file_pyproject_and_app_agree():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("GNU AFFERO GENERAL PUBLIC LICENSE") and "Version 3, 19 November 2007" in text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == notices.LICENSE_SPDX == "AGPL-3.0-or-later"
    assert project["license-files"] == ["LICENSE"]
    assert notices.license_file() == ROOT / "LICENSE"


def test_every_runtime_distribution_has_a_licence_entry(runtime_names):
    """Every installed distribution the app needs at run time (a superset of what the bundle
    holds) has its licence named and its text, from its own files or TEXT_FALLBACK."""
    keys = {nt._key(n) for n in runtime_names}
    assert {"ultralytics", "pyside6", "torch", "photoshopapi", "psd-tools", "pyinstaller"} <= keys
    items = nt.entries(runtime_names)
    assert [e["name"] for e in items] == runtime_names
    assert nt.missing(items) == []
    by_key = {nt._key(e["name"]): e for e in items}
    assert "AGPL" in by_key["ultralytics"]["license"] and "GNU AFFERO" in by_key["ultralytics"]["text"]
    assert "LGPL-3.0" in by_key["pyside6"]["license"] and "GNU LESSER GENERAL PUBLIC LICENSE" in by_key["pyside6"]["text"]
    assert "NVIDIA Corporation" in by_key.get("nvidia-ml-py", {"text": "NVIDIA Corporation"})["text"]


def test_missing_entry_is_reported():
    """A distribution without a licence text (a fake name pip-licenses does not know) is listed."""
    items = nt.entries(["ultralytics", "no-such-distribution-here"])
    assert nt.missing(items) == ["no-such-distribution-here"]


def test_fallbacks_are_only_for_wheels_without_licence_files():
    """TEXT_FALLBACK stays small: a distribution that starts shipping its licence file drops out."""
    for name in nt.TEXT_FALLBACK:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        assert notices.license_files(dist) == [], f"{name} ships its licence now: drop its TEXT_FALLBACK"


def test_notices_file_holds_the_app_python_fonts_and_demo_terms(tmp_path, runtime_names):
    out = tmp_path / "THIRD_PARTY_LICENSES"
    assert nt.write_notices(out, runtime_names) == []
    text = out.read_text(encoding="utf-8")
    assert text.startswith("Hayai Desktop ") and "AGPL-3.0-or-later" in text.splitlines()[0]
    for name in runtime_names:
        assert f"\n  {metadata.distribution(name).metadata['Name']} " in text, name
    assert "PYTHON SOFTWARE FOUNDATION LICENSE" in text.upper()
    for path in [*sorted((ROOT / "app/resources/fonts").glob("LICENSE-*.txt")), ROOT / "app/resources/demo/TERMS.txt"]:
        assert path.read_text(encoding="utf-8").splitlines()[0] in text, path.name
    assert "SIL OPEN FONT LICENSE Version 1.1" in text


def test_bundled_distributions_maps_files_to_their_owner(tmp_path):
    import importlib.util

    torch_init = importlib.util.find_spec("torch").origin  # found, not imported
    stray = tmp_path / "libsomething.so"
    stray.write_bytes(b"")
    names, orphans = nt.bundled_distributions([torch_init, str(stray)])
    assert names == ["pyinstaller", "torch"]
    assert orphans == [str(stray)]


def test_about_notices_outside_the_bundle_list_the_dependencies():
    text = notices.third_party_notices()
    assert "ultralytics " in text and "AGPL" in text
    assert "SIL OPEN FONT LICENSE" in text and "Demo models of Hayai Desktop" in text
    assert notices.bundled_notices_file() is None  # not frozen
    assert nt.NOTICES_NAME == notices.NOTICES_FILE


def test_a_distribution_pip_licenses_cannot_see_is_read_from_its_metadata(tmp_path, monkeypatch):
    """A vendored distribution (on sys.path only in the spec's process, as setuptools/_vendor's
    are) still gets its licence and text, read with importlib.metadata."""
    info = tmp_path / "vendored_thing-1.2.dist-info"
    (info / "licenses").mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: vendored-thing\nVersion: 1.2\n"
                                   "License-Expression: MIT\n", encoding="utf-8")
    (info / "licenses" / "LICENSE").write_text("MIT License\n\nCopyright (c) the vendored thing\n", encoding="utf-8")
    (info / "RECORD").write_text("vendored_thing-1.2.dist-info/METADATA,,\n"
                                 "vendored_thing-1.2.dist-info/licenses/LICENSE,,\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    (item,) = nt.entries(["vendored-thing"])
    assert (item["version"], item["license"]) == ("1.2", "MIT") and "the vendored thing" in item["text"]
    assert nt.missing([item]) == []
