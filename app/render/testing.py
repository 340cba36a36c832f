"""Test helpers: a small LaMa-shaped inpainting network with random weights, written as ONNX.

It has the published file's interface (inputs "image" (1, 3, H, W) in [0, 1] and "mask"
(1, 1, H, W); output (1, 3, H, W) in [0, 1]; dynamic H and W, multiples of 8) and LaMa's rough
shape: masked image and mask in, a strided encoder, a global-context branch (the image-wide
mean, standing in for the Fourier units), a transposed-convolution decoder, a sigmoid. Writing
it needs torch and the `onnx` package (a test dependency).
"""
from __future__ import annotations

from pathlib import Path


def write_tiny_lama(path: str | Path, seed: int = 0, fixed: int | None = None, width: int = 8) -> Path:
    """Write the network to `path` (ONNX). `fixed` makes the input size fixed (fixed x fixed)."""
    import torch

    class TinyLama(torch.nn.Module):
        def __init__(self, c: int):
            super().__init__()
            self.down = torch.nn.Conv2d(4, c, 3, stride=2, padding=1)
            self.mid = torch.nn.Conv2d(c, c, 3, padding=1)
            self.glob = torch.nn.Conv2d(c, c, 1)
            self.up = torch.nn.ConvTranspose2d(c, c, 4, stride=2, padding=1)
            self.out = torch.nn.Conv2d(c, 3, 3, padding=1)

        def forward(self, image, mask):
            x = torch.cat([image * (1 - mask), mask], 1)  # (1, 4, H, W)
            x = torch.relu(self.down(x))  # (1, C, H/2, W/2)
            g = self.glob(x.mean(dim=(2, 3), keepdim=True))  # (1, C, 1, 1): image-wide context
            x = torch.relu(self.mid(x) + g)
            return torch.sigmoid(self.out(torch.relu(self.up(x))))  # (1, 3, H, W)

    torch.manual_seed(seed)
    model = TinyLama(width).eval()
    size = fixed or 64
    example = (torch.rand(1, 3, size, size), (torch.rand(1, 1, size, size) > 0.5).float())
    dynamic = None if fixed else {"image": {2: "h", 3: "w"}, "mask": {2: "h", 3: "w"}, "output": {2: "h", 3: "w"}}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript-based exporter's deprecation notice
        torch.onnx.export(model, example, str(path), input_names=["image", "mask"], output_names=["output"],
                          dynamic_axes=dynamic, opset_version=17, dynamo=False)
    return path
