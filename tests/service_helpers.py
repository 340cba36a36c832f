"""A real server for the service's tests: uvicorn on a free loopback port, in a thread."""
from __future__ import annotations

import shutil
import socket
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "app" / "resources" / "samples"
DEMO = ROOT / "app" / "resources" / "demo"
TOKEN = "test-token-0123456789"


def demo_volume(folder: Path, pages: int = 2) -> Path:
    folder.mkdir(parents=True)
    for png in sorted(SAMPLES.glob("*.png"))[:pages]:
        shutil.copyfile(png, folder / png.name)
    return folder


def model_flags() -> list[str]:
    return ["--model", str(DEMO / "hayai-demo-ocr"), "--detector", str(DEMO / "hayai-demo-detector.pt"),
            "--device", "cpu", "--patches", "256", "--max-new-tokens", "48"]


def llm_flags(fake_llm) -> list[str]:
    return ["--provider", "openai", "--base-url", fake_llm.base_url, "--translation-model", "test-model",
            "--to", "en", "--timeout", "5", "--use-env-key"]


def serve_args(*flags: str):
    from app.cli import _subcommand_parser

    return _subcommand_parser("serve").parse_args(["serve", *flags])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Running:
    """uvicorn serving `app` on 127.0.0.1 until `stop()`."""

    def __init__(self, app):
        import uvicorn

        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        end = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < end and self.thread.is_alive(), "uvicorn did not start"
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)
