"""`hayai-desktop batch --ray` on one local Ray runtime (2 CPUs) with 2 model-holding workers.

The workers read on one torch thread each (a worker takes one CPU), as `ocr` does in these tests
(conftest.one_torch_thread): the exports must be the same.
"""
from __future__ import annotations

import json
import os
import signal
from collections import Counter

import pytest

ray = pytest.importorskip("ray")

from app.cli import _subcommand_parser, main  # noqa: E402
from app.commands import batch as batch_command  # noqa: E402
from tests.batch.conftest import MODEL_ARGS, VOLUMES, read_export  # noqa: E402

RAY_ARGS = ["--ray", "--workers", "2"]


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray runtime for the module; the batch joins it (and leaves it running)."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def _exports(out) -> dict[str, dict]:
    return {key: read_export(out / f"{key}.json") for key in VOLUMES}


def test_ray_batch_writes_what_ocr_writes(local_ray, library, ocr_reference, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["batch", str(library), "--out", str(out)] + RAY_ARGS + MODEL_ARGS) == 1
    err = capsys.readouterr().err
    assert _exports(out) == ocr_reference
    assert "12 pages read (1 unreadable)" in err and "2 worker(s) on a local Ray runtime" in err
    log = [json.loads(line) for line in (out / "batch.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(r["volume"] for r in log) == sorted(VOLUMES)
    assert ray.is_initialized(), "the batch must not stop a runtime it did not start"


def test_a_killed_worker_is_replaced_and_its_pages_read_once(local_ray, library, ocr_reference, tmp_path, capsys):
    args = _subcommand_parser("batch").parse_args(["batch", str(library), "--out", str(tmp_path / "out")]
                                                   + RAY_ARGS + MODEL_ARGS)
    chunks, killed = [], []

    def observer(event):
        if event.kind != "chunk":
            return
        chunks.append((event.volume.key, event.result.index, event.result.worker, [p.name for p in event.result.pages]))
        if not killed:  # the worker that sent the first chunk has the next one queued or running
            pid = int(event.result.worker.split("@")[0])
            os.kill(pid, signal.SIGKILL)
            killed.append(event.result.worker)

    assert batch_command.run(args, observer) == 1
    err = capsys.readouterr().err
    assert _exports(tmp_path / "out") == ocr_reference  # nothing lost, nothing twice, same text
    pages = Counter((key, name) for key, _, _, names in chunks for name in names)
    assert sorted(pages) == sorted((k, p["name"]) for k, e in ocr_reference.items() for p in e["pages"])
    assert set(pages.values()) == {1}, "a page was taken twice"
    workers = {w for _, _, w, _ in chunks}
    assert killed[0] in workers and len(workers) == 3, "the killed worker was not replaced by a new process"
    assert "1 worker restart(s)" in err


def test_a_model_missing_on_the_workers_stops_the_run_with_the_store_message(local_ray, library, tmp_path, capsys):
    missing = tmp_path / "models" / "my-ocr"  # a folder the workers' machine does not have
    args = ["batch", str(library), "--out", str(tmp_path / "out"), "--model", str(missing)] + RAY_ARGS + MODEL_ARGS[2:]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"error: worker {os.getpid()}" not in err and "error: worker " in err and str(missing) in err
    assert "Traceback" not in err and not (tmp_path / "out" / "batch.jsonl").exists()


def test_gpu_workers_on_a_cluster_without_gpus_is_a_clear_error(local_ray, library, tmp_path, capsys):
    assert main(["batch", str(library), "--out", str(tmp_path / "out"), "--ray", "--gpus-per-worker", "1"]
                + MODEL_ARGS[:-2]) == 2  # (--device auto)
    assert "the Ray cluster has no GPU for --gpus-per-worker 1" in capsys.readouterr().err
