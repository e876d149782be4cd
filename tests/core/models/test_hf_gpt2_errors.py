"""Bad checkpoint folders give one-line errors, in the loader and in the CLI, never a traceback."""

from __future__ import annotations

import json
import shutil

import pytest

from bench.hf_tiny_gpt2 import make_checkpoint, train_tokenizer
from core.models import fetch
from core.models.hf_gpt2 import load_gpt2
from core.models.hf_tokenizer import CheckpointError

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    return make_checkpoint(tmp_path_factory.mktemp("hf") / "good")


def copy_of(good, tmp_path):
    return shutil.copytree(good, tmp_path / "copy")


def assert_one_line(folder, *words, capsys=None):
    with pytest.raises(CheckpointError) as caught:
        load_gpt2(folder)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 260, message
    for word in words:
        assert word in message, message
    if capsys is not None:  # the CLI says the same in one line and exits 1
        assert fetch.main(["--check", str(folder)]) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    return message


def test_a_folder_that_is_not_a_checkpoint(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("hello")
    assert_one_line(tmp_path, "not a checkpoint", "config.json", capsys=capsys)
    assert_one_line(tmp_path / "missing", "not a folder", capsys=capsys)


def test_config_without_weights(good, tmp_path, capsys):
    folder = copy_of(good, tmp_path)
    (folder / "model.safetensors").unlink()
    assert_one_line(folder, "model.safetensors", capsys=capsys)


def test_truncated_safetensors(good, tmp_path, capsys):
    folder = copy_of(good, tmp_path)
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    assert_one_line(folder, "truncated", capsys=capsys)
    (folder / "model.safetensors").write_bytes(data[:5])  # not even a header
    assert_one_line(folder, "truncated", capsys=capsys)


def test_unsupported_family(good, tmp_path, capsys):
    folder = copy_of(good, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"model_type": "llama"}))
    assert_one_line(folder, "unsupported model family", "llama", capsys=capsys)
    (folder / "config.json").write_text("{not json")
    assert_one_line(folder, "JSON", capsys=capsys)


def test_tokenizer_that_does_not_match_the_vocabulary(good, tmp_path, capsys):
    folder = copy_of(good, tmp_path)
    train_tokenizer(vocab_size=400).save(str(folder / "tokenizer.json"))  # more tokens than embedding rows
    assert_one_line(folder, "tokenizer.json", "do not belong together", capsys=capsys)
    (folder / "tokenizer.json").write_text("{}")
    assert_one_line(folder, "not a tokenizer file", capsys=capsys)
    (folder / "tokenizer.json").unlink()
    assert_one_line(folder, "no tokenizer.json", capsys=capsys)


def test_weights_of_another_shape(good, tmp_path, capsys):
    folder = copy_of(good, tmp_path)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | {"n_embd": 64}))
    assert_one_line(folder, "shape", capsys=capsys)


def test_the_cli_reports_a_good_folder(good, capsys):
    assert fetch.main(["--check", str(good)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ") and "2 layers" in out
