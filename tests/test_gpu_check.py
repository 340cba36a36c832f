"""bench/gpu_check.py runs on the CPU (--device cpu), so it works the first time on a GPU: every
part that does not need CUDA runs here on a tiny model, and its report says what it found."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_gpu_check_runs_on_the_cpu(tmp_path):
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "gpu_check.py"), "--device", "cpu", "--size", "tiny",
                           "--budgets", "64", "128", "--batches", "1", "4", "--tokens", "6", "--crops", "4",
                           "--out", str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert report["device"] == "CPU" and report["exactness"]["reference"] == "fp32 on the CPU"
    for figures in report["exactness"]["budgets"].values():
        assert figures["fp32_exact_alone"] and figures["fp32_exact_batched"]
        assert 0.0 <= figures["fp16_tokens_equal"] <= 1.0
    speeds = report["speed"]
    assert {(r["patches"], r["batch"]) for r in speeds} == {(64, 1), (64, 4), (128, 1), (128, 4)}
    assert all(r["crops_per_s"] > 0 for r in speeds)
    assert {r["precision"].split()[0] for r in speeds} == {"fp32", "auto"}
    assert report["cuda_graphs"]["static_step_equals_eager"] is True
    assert report["cuda_graphs"]["graph"] == "not tried (not CUDA)"
    assert "| fp32 (fp32) | 64 | 4 |" in proc.stdout
