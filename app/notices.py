"""The app's licence and the third-party notices, for Help > About (no Qt).

Hayai Desktop is under the GNU AGPL 3.0 or later (LICENSE): it imports ultralytics (AGPL-3.0),
and the bundle ships it with PySide6 (LGPL-3.0), the fonts (SIL OFL 1.1) and the rest. The
bundle carries THIRD_PARTY_LICENSES, written at build time by packaging/notices.py from the
installed distributions' metadata (pip-licenses): every bundled distribution with its version,
licence and licence text, then the fonts' and the demo models' terms. A source or wheel install
has no such file (pip installed each dependency with its own licence files); there
`third_party_notices()` lists the installed dependencies from their metadata and where their
licence files are.
"""
from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from app.paths import app_root, is_frozen, resource_path

LICENSE_SPDX = "AGPL-3.0-or-later"
LICENSE_NAME = "GNU Affero General Public License v3.0 or later"
LICENSE_URL = "https://www.gnu.org/licenses/agpl-3.0.html"
NOTICES_FILE = "THIRD_PARTY_LICENSES"
DISTRIBUTION = "hayai-desktop"


def license_file() -> Path | None:
    """The LICENSE text: in the bundle's data folder, the checkout's, or the installed wheel's
    (its dist-info `licenses/` folder)."""
    root = app_root()
    if (is_frozen() or (root / "pyproject.toml").is_file()) and (root / "LICENSE").is_file():
        return root / "LICENSE"
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    path = next((p for p in license_files(dist) if p.name == "LICENSE"), None)
    return path if path is not None and path.is_file() else None


def bundled_notices_file() -> Path | None:
    """THIRD_PARTY_LICENSES of the bundle (None outside one)."""
    path = app_root() / NOTICES_FILE
    return path if is_frozen() and path.is_file() else None


def requirement_closure(requirements: list[str] | None = None, name: str = DISTRIBUTION) -> list[metadata.Distribution]:
    """The installed distributions needed at run time by `requirements` (default: those of the
    installed distribution `name`), and theirs: no extras, markers evaluated, sorted by name;
    `name` itself is not included. Requirements not installed are left out."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    if requirements is None:
        try:
            requirements = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            return []
    todo = list(requirements)
    seen: dict[str, metadata.Distribution] = {}
    while todo:
        req = Requirement(todo.pop())
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        key = canonicalize_name(req.name)
        if key in seen or key == canonicalize_name(name):
            continue
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            continue
        seen[key] = dist
        todo.extend(dist.requires or [])
    return sorted(seen.values(), key=lambda d: canonicalize_name(d.metadata["Name"]))


def license_of(dist: metadata.Distribution) -> str:
    """The licence a distribution declares: License-Expression, else its licence classifiers,
    else a one-line License field; "not stated" when none."""
    meta = dist.metadata
    if meta.get("License-Expression"):
        return meta["License-Expression"]
    classifiers = [c.split(" :: ")[-1] for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    if classifiers:
        return "; ".join(classifiers)
    field = (meta.get("License") or "").strip()
    return field if field and "\n" not in field and len(field) < 100 else "not stated"


def license_files(dist: metadata.Distribution) -> list[Path]:
    """The licence, copying and notice files a distribution installed in its dist-info folder
    (its `licenses/` folder, or files named LICENSE*, COPYING*, NOTICE*)."""
    out = []
    for file in dist.files or []:
        if file.parts and file.parts[0].endswith(".dist-info") and (
                "licenses" in file.parts[1:-1] or re.match(r"(LICEN[CS]E|COPYING|NOTICE)", file.name, re.I)):
            out.append(Path(str(dist.locate_file(file))))
    return out


def third_party_notices() -> str:
    """The notices to show: the bundle's THIRD_PARTY_LICENSES, else a list composed from the
    installed dependencies' metadata, then the fonts' and demo models' terms."""
    bundled = bundled_notices_file()
    if bundled is not None:
        return bundled.read_text(encoding="utf-8", errors="replace")
    lines = ["Third-party software used by Hayai Desktop, as installed here (a source or wheel install;",
             "the desktop bundle carries the full texts in THIRD_PARTY_LICENSES).", ""]
    for dist in requirement_closure():
        files = ", ".join(str(p) for p in license_files(dist)) or "no licence file installed"
        lines.append(f"{dist.metadata['Name']} {dist.version}: {license_of(dist)}")
        lines.append(f"    {files}")
    lines += ["", shipped_terms()]
    return "\n".join(lines)


def shipped_terms() -> str:
    """The fonts' licences and the demo models' terms, as shipped in app/resources."""
    parts = []
    for path in sorted(resource_path("fonts").glob("LICENSE-*.txt")) + [resource_path("demo", "TERMS.txt")]:
        if path.is_file():
            parts.append(f"==== {path.parent.name}/{path.name}\n\n{path.read_text(encoding='utf-8').strip()}\n")
    return "\n".join(parts)
