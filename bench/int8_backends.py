"""int8 dynamic quantization on the CPU: torch.ao.quantization (what app/ocr/precision.py uses,
deprecated) against torchao's maintained `quantize_` (a separate package), eager mode, on the
shape of the vision tower's MLP (768 -> 3072 -> 768, GELU), fp32 as the baseline of the run.

    python bench/int8_backends.py [--rows 256] [--threads 1] [--repeat 20]

torchao is optional (`pip install torchao` in a scratch folder with `--target`, then
PYTHONPATH=that folder): without it only the torch.ao figures print. Prints each mode's time,
its speed-up over fp32 in the same run, and the relative error against fp32.
"""
from __future__ import annotations

import argparse
import copy
import platform
import time
import warnings

import torch


def _time(model, x, repeat: int) -> float:
    with torch.no_grad():
        model(x)
        start = time.perf_counter()
        for _ in range(repeat):
            model(x)
    return (time.perf_counter() - start) / repeat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=256, help="rows per call (patches of a crop)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    fp32 = torch.nn.Sequential(torch.nn.Linear(768, 3072), torch.nn.GELU(), torch.nn.Linear(3072, 768)).eval()
    x = torch.randn(args.rows, 768)
    with torch.no_grad():
        ref = fp32(x)
    models = {"fp32": fp32}
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models["torch.ao int8"] = quantize_dynamic(copy.deepcopy(fp32), {torch.nn.Linear: per_channel_dynamic_qconfig},
                                                   dtype=torch.qint8)
    try:
        import torchao
        from torchao.quantization import Int8DynamicActivationInt8WeightConfig, quantize_

        model = copy.deepcopy(fp32)
        quantize_(model, Int8DynamicActivationInt8WeightConfig())
        models[f"torchao {torchao.__version__} int8"] = model
    except ImportError:
        print("torchao is not installed: its row is left out")
    print(f"torch {torch.__version__}, {platform.processor() or platform.machine()}, {args.threads} thread(s), "
          f"{args.rows} rows")
    base = _time(fp32, x, args.repeat)
    for name, model in models.items():
        seconds = _time(model, x, args.repeat)
        with torch.no_grad():
            err = ((model(x) - ref).norm() / ref.norm()).item()
        print(f"{name:24s} {seconds * 1000:7.1f} ms  x{base / seconds:4.2f} vs fp32  relative error {err:.4f}")


if __name__ == "__main__":
    main()
