"""app.textfile.read_json_file, the one way the app reads a JSON file: a missing, corrupt, non-UTF-8
file or a folder is a UserError (or the caller's subclass) naming the file, what it should have
been and what to do; the readers built on it keep that wording."""
from __future__ import annotations

import json
import re

import pytest

from app.errors import ModelError, UserError
from app.textfile import read_json_file


def test_a_json_file_with_or_without_a_bom_is_read(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"x": [1, "二"]}), encoding="utf-8")
    assert read_json_file(path, "thing") == {"x": [1, "二"]}
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps([3]).encode())
    assert read_json_file(path, "thing") == [3]


@pytest.mark.parametrize("content, why", [
    (b'{"pages": [1, 2', r"the export file is not valid JSON \(.* at line 1, column \d+\)"),
    (b'{"a": "\xff\xfe\x00"}', r"the export file is not UTF-8 text \(byte 7\)"),
    (None, r"no such export file"),
    ("folder", r"a folder, not the export file"),
])
def test_a_bad_file_is_named_with_what_it_should_be_and_what_to_do(tmp_path, content, why):
    path = tmp_path / "vol.json"
    if content == "folder":
        path.mkdir()
    elif content is not None:
        path.write_bytes(content)
    with pytest.raises(UserError) as info:
        read_json_file(path, "export file", "Export the volume again.")
    message = str(info.value)
    assert message.startswith(f"{path}: ") and message.endswith("Export the volume again."), message
    assert re.search(why, message), message


def test_the_callers_error_class_is_raised(tmp_path):
    (tmp_path / "config.json").write_text("{nope")
    with pytest.raises(ModelError, match=r"config\.json: the model configuration is not valid JSON"):
        read_json_file(tmp_path / "config.json", "model configuration", "Re-download the model.", ModelError)


def test_the_readers_name_a_corrupt_file(tmp_path):
    """Three of the readers on top: the JSON export, the .mokuro volume, the OCR model's config."""
    from app.core.exports.json_read import read_json
    from app.core.sources.mokuro_volume import read_mokuro
    from app.ocr.config import read_config_json

    bad = tmp_path / "bad.json"
    bad.write_text('{"format": ', encoding="utf-8")
    with pytest.raises(UserError, match=r"bad\.json: the JSON export is not valid JSON .*Export the volume again"):
        read_json(bad)
    with pytest.raises(UserError, match=r"bad\.json: the \.mokuro file is not valid JSON .*Run mokuro on the volume"):
        read_mokuro(bad)
    with pytest.raises(ModelError, match=r"bad\.json: the config\.json in the model folder is not valid JSON .*"
                                         r"Re-download the model"):
        read_config_json(bad)
