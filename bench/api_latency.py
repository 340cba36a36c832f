"""The local API against the command line, in one run on this machine: how long a block edit
and a page read take through `hayai-desktop serve` (uvicorn on a loopback port, httpx as the
client, the models already loaded by the server) and through the CLI.

    python bench/api_latency.py [--edits 30] [--reads 3] [--cli-runs 3]

The server runs as its own process (`python -m app serve`), as a user runs it; the client
waits for a job on its server-sent events.
- block edit: PATCH /volumes/V/pages/P/blocks/B (the edit function, the journal line, the
  project saved) against `hayai-desktop import-script VOL one-row.csv` as a process (what a
  script has for changing one block without the API), and `import-script` in this process
  (no interpreter start).
- page read: POST /volumes/V/read for one page, until its events say done, against `hayai-desktop ocr
  PAGE --save-project` as a process (which loads the models each time) and `ocr` in this
  process (the models loaded again each call: the command has no server to keep them).
The demo volume's first page (app/resources/samples), the demo models, CPU. Medians.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import io
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEMO = ROOT / "app" / "resources" / "demo"
SAMPLE = ROOT / "app" / "resources" / "samples" / "page_0000.png"
MODEL = ["--model", str(DEMO / "hayai-demo-ocr"), "--detector", str(DEMO / "hayai-demo-detector.pt"),
         "--device", "cpu", "--patches", "256", "--max-new-tokens", "48"]


def _volume(folder: Path) -> Path:
    folder.mkdir(parents=True)
    shutil.copyfile(SAMPLE, folder / SAMPLE.name)
    return folder


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _ms(values) -> str:
    return f"{1000 * statistics.median(values):8.1f} ms (median of {len(values)}, min {1000 * min(values):.1f})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--reads", type=int, default=3)
    ap.add_argument("--cli-runs", type=int, default=3)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="hayai-api-bench-"))
    os.environ.setdefault("HAYAI_DATA_DIR", str(tmp / "data"))
    os.environ.setdefault("HAYAI_DESKTOP_CONFIG_DIR", str(tmp / "config"))
    os.environ.setdefault("HAYAI_LOG_DIR", str(tmp / "logs"))
    import httpx

    from app.cli import main as cli

    root = tmp / "root"
    _volume(root / "api")
    cli_vol = _volume(tmp / "cli")
    token = "bench-token-0123456789"
    (tmp / "token").write_text(token, encoding="utf-8")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    server = subprocess.Popen([sys.executable, "-m", "app", "serve", "--root", str(root), "--port", str(port),
                               "--token-file", str(tmp / "token"), *MODEL], env=env, cwd=ROOT,
                              stderr=subprocess.DEVNULL)
    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"Authorization": f"Bearer {token}"},
                          timeout=600)
    while True:
        try:
            client.get("/health").raise_for_status()
            break
        except httpx.TransportError:
            assert server.poll() is None, "the server did not start"
            time.sleep(0.2)
    quiet = contextlib.redirect_stderr(io.StringIO())

    def api_read() -> None:
        job = client.post(f"/volumes/{vid}/read", json={"pages": [SAMPLE.name]}).json()
        with client.stream("GET", f"/jobs/{job['id']}/events") as events:
            for _line in events.iter_lines():
                pass
        assert client.get(f"/jobs/{job['id']}").json()["state"] == "done"

    vid = client.post("/volumes", json={"path": "api"}).json()["id"]
    first_read = _timed(api_read)  # loads the models
    api_reads = [_timed(api_read) for _ in range(args.reads)]
    block = client.get(f"/volumes/{vid}/pages/{SAMPLE.name}/blocks").json()[0]["id"]
    api_edits = [_timed(lambda n=n: client.patch(f"/volumes/{vid}/pages/{SAMPLE.name}/blocks/{block}",
                                                 json={"text": f"edit {n}"}).raise_for_status())
                 for n in range(args.edits)]

    with quiet:
        cli(["ocr", str(cli_vol), "--save-project", "--out", str(tmp / "r.json"), *MODEL])
        cli(["export", str(cli_vol), "--out", str(tmp / "s.csv")])
    rows = list(csv.DictReader((tmp / "s.csv").open(encoding="utf-8")))[:1]

    def one_row(n: int) -> Path:
        rows[0]["source"] = f"edit {n}"
        with (tmp / "one.csv").open("w", encoding="utf-8", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        return tmp / "one.csv"

    def in_process(argv) -> None:
        with contextlib.redirect_stderr(io.StringIO()):
            cli(argv)

    process = lambda argv: subprocess.run([sys.executable, "-m", "app", *argv], env=env, cwd=ROOT,  # noqa: E731
                                          check=True, capture_output=True)
    cli_edits_in = [_timed(lambda n=n: in_process(["import-script", str(cli_vol), str(one_row(n))]))
                    for n in range(args.edits)]
    cli_edits_proc = [_timed(lambda n=n: process(["import-script", str(cli_vol), str(one_row(n))]))
                      for n in range(args.cli_runs)]
    page = str(cli_vol / SAMPLE.name)
    cli_reads_in = [_timed(lambda: in_process(["ocr", page, "--out", str(tmp / "p.json"), *MODEL]))
                    for _ in range(args.cli_runs)]
    cli_reads_proc = [_timed(lambda: process(["ocr", page, "--out", str(tmp / "p.json"), *MODEL]))
                      for _ in range(args.cli_runs)]

    client.close()
    server.terminate()
    server.wait(30)
    print(f"CPU: {os.cpu_count()} cores; load average {os.getloadavg()[0]:.1f}")
    print(f"block edit  API PATCH                   {_ms(api_edits)}")
    print(f"block edit  CLI import-script (in-proc) {_ms(cli_edits_in)}")
    print(f"block edit  CLI import-script (process) {_ms(cli_edits_proc)}")
    print(f"page read   API read job (first, loads models) {1000 * first_read:.1f} ms")
    print(f"page read   API read job                {_ms(api_reads)}")
    print(f"page read   CLI ocr (in-proc)           {_ms(cli_reads_in)}")
    print(f"page read   CLI ocr (process)           {_ms(cli_reads_proc)}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
