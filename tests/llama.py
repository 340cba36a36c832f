"""The real llama.cpp `llama-server` for the tests: found where `make llama-server` puts it (or
through HAYAI_TEST_LLAMA_SERVER / HAYAI_TEST_LLM_MODEL), started on 127.0.0.1 on a free port,
ready once GET /health answers 200, stopped by its PID."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

from tools.llama_server import cache_dir, model_path, server_path

ALIAS = "gemma-3-270m"  # the model name the server answers with
HOW = "the real llama-server tests need `make llama-server` (builds llama.cpp and assembles Gemma 3 270M, once)"


def found() -> tuple[Path, Path] | None:
    server = Path(os.environ.get("HAYAI_TEST_LLAMA_SERVER") or server_path(cache_dir()))
    model = Path(os.environ.get("HAYAI_TEST_LLM_MODEL") or model_path(cache_dir()))
    return (server, model) if server.is_file() and model.is_file() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """One llama-server process. `ctx`: its context size (-c); the log goes to `log_path`."""

    def __init__(self, ctx: int = 4096, log_dir: Path | None = None, extra: tuple[str, ...] = ()):
        paths = found()
        if paths is None:
            raise RuntimeError(HOW)
        self.binary, self.model = paths
        self.ctx = ctx
        self.port = _free_port()
        self.log_path = (log_dir or Path("/tmp")) / f"llama-server-{self.port}.log"
        cmd = [str(self.binary), "-m", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
               "-c", str(ctx), "-t", "1", "-tb", str(min(2, os.cpu_count() or 1)), "--poll", "0",
               "--parallel", "1", "--alias", ALIAS,
               "--no-webui", *extra]
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen(cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self._wait_ready()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def get(self, path: str):
        with urllib.request.urlopen(self.root + path, timeout=10) as r:
            return json.loads(r.read() or b"null")

    def _wait_ready(self, limit: float = 180.0) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self.proc.returncode}: {self.tail()}")
            try:
                with urllib.request.urlopen(self.root + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"llama-server did not answer /health within {limit:g} s: {self.tail()}")

    def tail(self, n: int = 2000) -> str:
        try:
            return self.log_path.read_bytes()[-n:].decode("utf-8", "replace")
        except OSError:
            return ""

    def kill(self) -> None:
        """Gone at once, as a crash would leave it (no goodbye to the clients)."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()
