"""--precision on recognize, ocr and eval reaches the recognizer; a bad choice is a clear error."""
import pytest
from PIL import Image

from app.cli import _subcommand_parser, main
from app.commands.common import load_recognizer_for, spec_for


@pytest.mark.parametrize("command", ["recognize", "ocr", "eval"])
def test_every_reading_command_takes_a_precision(command, tiny_models):
    extra = {"recognize": ["x.png"], "ocr": ["pages"], "eval": ["data.jsonl"]}[command]
    args = _subcommand_parser(command).parse_args([command, "--model", str(tiny_models["nova"]), "--device", "cpu",
                                                   "--precision", "int8", *extra])
    assert args.precision == "int8"
    assert load_recognizer_for(args).precision == "int8"
    if command != "recognize":
        assert spec_for(args).precision == "int8"
    assert _subcommand_parser(command).parse_args([command, *extra]).precision == "auto"


def test_recognize_in_each_precision_and_a_gpu_only_mode_on_the_cpu(tiny_models, tmp_path, capsys):
    crop = tmp_path / "crop.png"
    Image.new("RGB", (80, 30), "white").save(crop)
    for precision in ("fp32", "bf16", "int8"):
        assert main(["recognize", "--model", str(tiny_models["nova"]), "--device", "cpu", "--precision", precision,
                     "--patches", "64", "--max-new-tokens", "3", str(crop)]) == 0
    with pytest.raises(SystemExit):  # argparse refuses an unknown precision
        main(["recognize", "--precision", "fp8", str(crop)])
    assert "invalid choice: 'fp8'" in capsys.readouterr().err


def test_a_mode_the_device_cannot_run_is_refused_with_the_alternative():
    import torch

    from app.errors import UserError
    from app.ocr.precision import resolve_precision

    with pytest.raises(UserError, match="int8 runs on the CPU only"):
        resolve_precision("int8", torch.device("cuda"))
    with pytest.raises(UserError, match="unknown precision 'fp8'"):
        resolve_precision("fp8", torch.device("cpu"))
    assert resolve_precision("fp16", torch.device("cuda")) == "fp16"
