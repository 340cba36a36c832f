"""THIRD_PARTY_LICENSES of the bundle, written at build time (hayai-desktop.spec) from the
installed distributions' metadata with pip-licenses.

    python packaging/notices.py OUT     the notices for every runtime dependency (pyproject.toml's)

The spec calls `write_notices` with the distributions whose files PyInstaller collected
(`bundled_distributions`), plus PyInstaller (its bootloader and runtime hooks are in the bundle),
and stops the build when one of them has no licence entry. Each entry is the distribution's
name, version, licence (pip-licenses `--from=mixed`: License-Expression, else the classifiers,
else the License field) and the texts of the licence and notice files it installed. A few
wheels install no licence file; for them the text comes from TEXT_FALLBACK: the standard text
of the licence they declare (packaging/licenses/, copied from Debian's base-files
/usr/share/common-licenses), or the licence section of their own description. Then come the
Python runtime's licence, the fonts' licences and the demo models' terms (app/resources), and
the libraries copied from the build machine that belong to no Python distribution.

tests/test_notices.py checks that every runtime dependency gets an entry, without a build.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LICENSES = ROOT / "packaging" / "licenses"
# Also in the bundle without being a requirement of the app: PyInstaller's bootloader and hooks.
BUILD_TOOLS = ["pyinstaller"]
UNKNOWN = "UNKNOWN"  # what pip-licenses writes for a missing field
NOTICES_NAME = "THIRD_PARTY_LICENSES"  # app.notices.NOTICES_FILE: at the top of the bundle's data folder

# Distributions whose wheels install no licence file (checked: their dist-info has none):
# a standard text of the licence their metadata names ("file:NAME": packaging/licenses/NAME.txt),
# or "description:HEADING": their description from that heading to the end.
_QT = ["file:LGPL-3.0", "file:GPL-3.0"]  # Qt for Python: LGPL-3.0, which is GPL-3.0 plus permissions
TEXT_FALLBACK = {
    "pyside6": _QT, "pyside6-addons": _QT, "pyside6-essentials": _QT, "shiboken6": _QT,
    "tokenizers": ["file:Apache-2.0"], "sentencepiece": ["file:Apache-2.0"], "flatbuffers": ["file:Apache-2.0"],
    "nvidia-ml-py": ["description:COPYRIGHT"],
    "kernels": ["file:Apache-2.0"],  # Hugging Face's kernels, a requirement of transformers from 5.25
}


def _key(name: str) -> str:
    from packaging.utils import canonicalize_name

    return canonicalize_name(name)


def runtime_requirements(root: Path = ROOT) -> list[str]:
    """pyproject.toml's [project] dependencies (what the bundle is built from)."""
    import tomllib

    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]


def has_files(dist: metadata.Distribution) -> bool:
    """Does it install anything outside its dist-info (cuda-toolkit, a metapackage, does not)?"""
    return any(not f.parts[0].endswith(".dist-info") for f in dist.files or [] if f.parts)


def runtime_distributions(root: Path = ROOT) -> list[str]:
    """Names of the installed distributions the app needs at run time (the requirement closure of
    pyproject.toml's dependencies) that install files, plus BUILD_TOOLS: a superset of what the
    bundle holds (the spec's excludes leave some out)."""
    sys.path.insert(0, str(root))
    try:
        from app.notices import requirement_closure
    finally:
        sys.path.remove(str(root))
    names = [d.metadata["Name"] for d in requirement_closure(runtime_requirements(root)) if has_files(d)]
    return sorted(set(names) | set(BUILD_TOOLS), key=_key)


def bundled_distributions(paths: list[str]) -> list[str]:
    """Names of the installed distributions owning at least one of `paths` (the bundle's source
    files: Analysis' pure modules, binaries and datas), plus BUILD_TOOLS; and the paths no
    distribution owns, as a second list."""
    owner: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"]  # parsed once: each .metadata reads METADATA again
        base = os.path.realpath(dist.locate_file(""))  # one real path per distribution, not per file
        for file in dist.files or []:
            owner[os.path.normpath(os.path.join(base, str(file)))] = name
    names, orphans = set(BUILD_TOOLS), []
    for path in paths:
        name = owner.get(os.path.realpath(path))
        if name:
            names.add(name)
        else:
            orphans.append(path)
    return sorted(names, key=_key), orphans


def pip_licenses(names: list[str]) -> list[dict]:
    """pip-licenses' JSON for `names`: Name, Version, License, LicenseText, NoticeText."""
    out = subprocess.run([sys.executable, "-m", "piplicenses", "--from=mixed", "--with-system", "--with-license-file",
                          "--with-notice-file", "--no-license-path", "--format=json", "--packages", *names],
                         capture_output=True, text=True, check=True, timeout=600)
    return json.loads(out.stdout)


def _fallback_text(name: str) -> str:
    parts = []
    for source in TEXT_FALLBACK.get(_key(name), []):
        kind, _, what = source.partition(":")
        if kind == "file":
            parts.append((LICENSES / f"{what}.txt").read_text(encoding="utf-8"))
        else:  # description:HEADING
            raw = metadata.distribution(name).read_text("METADATA") or ""  # headers, a blank line, the description
            body = raw.split("\n\n", 1)[1] if "\n\n" in raw else ""
            start = body.find(f"\n{what}\n")
            if start >= 0:
                parts.append(body[start + 1:].strip())
    return "\n\n".join(parts)


def _from_metadata(name: str) -> dict:
    """pip-licenses' fields read with importlib.metadata, for a distribution it does not see: one
    vendored inside another (setuptools/_vendor/jaraco.text-*.dist-info, on sys.path only in the
    process that imported setuptools, as the spec's has), whose files the bundle holds."""
    sys.path.insert(0, str(ROOT))
    try:
        from app.notices import license_files, license_of
    finally:
        sys.path.remove(str(ROOT))
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return {"Name": name, "Version": UNKNOWN, "License": UNKNOWN}
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in license_files(dist) if p.is_file()]
    licence = license_of(dist)
    return {"Name": dist.metadata["Name"], "Version": dist.version, "License": UNKNOWN if licence == "not stated" else licence,
            "LicenseText": "\n\n".join(texts) or UNKNOWN}


def entries(names: list[str]) -> list[dict]:
    """One entry per name: name, version, licence, text (the distribution's licence and notice
    files, else TEXT_FALLBACK's); a name pip-licenses does not know gets UNKNOWN fields."""
    found = {_key(e["Name"]): e for e in pip_licenses(names)}
    out = []
    for name in names:
        e = found.get(_key(name)) or _from_metadata(name)
        texts = [t for t in (e.get("LicenseText"), e.get("NoticeText")) if t and t != UNKNOWN]
        if not texts and _fallback_text(name):
            texts = [_fallback_text(name)]
        out.append({"name": e["Name"], "version": e["Version"], "license": e["License"], "text": "\n\n".join(texts)})
    return out


def missing(items: list[dict]) -> list[str]:
    """Names whose entry lacks the licence's name or its text."""
    return [e["name"] for e in items if e["license"] in ("", UNKNOWN) or not e["text"].strip()]


def _python_licence() -> str:
    for folder in (sysconfig.get_paths()["stdlib"], os.path.join(sys.base_prefix, "lib")):
        path = Path(folder) / "LICENSE.txt"
        if path.is_file():
            return path.read_text(encoding="utf-8", errors="replace")
    return "Python Software Foundation License Version 2 (PSF-2.0): https://docs.python.org/3/license.html"


def _system_library(path: str) -> str:
    """Where a library copied from the build machine comes from (dpkg's package and its copyright file)."""
    try:
        pkg = subprocess.run(["dpkg", "-S", os.path.realpath(path)], capture_output=True, text=True,
                             timeout=30).stdout.split(":")[0].strip()
    except (OSError, subprocess.SubprocessError):
        pkg = ""
    if not pkg:
        return f"{Path(path).name}: {path} (the build machine's; see its distribution for the licence)"
    copyright_file = Path("/usr/share/doc") / pkg / "copyright"
    return f"{Path(path).name}: {path}, Debian package {pkg}, licence: {copyright_file}" + (
        "\n\n" + copyright_file.read_text(encoding="utf-8", errors="replace") if copyright_file.is_file() else "")


def write_notices(out: Path, names: list[str], system_libraries: list[str] = ()) -> list[str]:
    """Write THIRD_PARTY_LICENSES for `names`; returns the names without a licence entry."""
    sys.path.insert(0, str(ROOT))
    try:
        from app import __version__
        from app.notices import LICENSE_NAME, LICENSE_SPDX, shipped_terms
    finally:
        sys.path.remove(str(ROOT))
    items = entries(names)
    rule = "=" * 78
    lines = [f"Hayai Desktop {__version__}: {LICENSE_NAME} ({LICENSE_SPDX}); the text is in LICENSE.",
             "It ships the third-party software below, each under its own licence. Where a licence",
             "(the GNU AGPL of ultralytics, the GNU LGPL of Qt for Python) asks for the source, it is the",
             "source release of that package at the version shown (PyPI), and this project's own source.",
             "",
             "Contents: Python packages (name, version, licence), then Python itself, the shipped fonts,",
             "the demo models and the libraries copied from the build machine.", ""]
    lines += [f"  {e['name']} {e['version']}: {e['license']}" for e in items]
    for e in items:
        lines += ["", rule, f"{e['name']} {e['version']}", f"Licence: {e['license']}", rule, "", e["text"].strip()]
    lines += ["", rule, f"Python {sys.version.split()[0]} (the interpreter and its standard library)", rule, "",
              _python_licence().strip()]
    lines += ["", rule, "Fonts (app/resources/fonts) and demo models (app/resources/demo)", rule, "", shipped_terms()]
    if system_libraries:
        lines += ["", rule, "Libraries copied from the build machine (no Python package owns them)", rule, ""]
        lines += [_system_library(p) for p in system_libraries]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return missing(items)


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "THIRD_PARTY_LICENSES")
    lacking = write_notices(target, runtime_distributions())
    print(f"{target}: {target.stat().st_size} bytes" + (f"; no licence entry: {', '.join(lacking)}" if lacking else ""))
    sys.exit(1 if lacking else 0)
