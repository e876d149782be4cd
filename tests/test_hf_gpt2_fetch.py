"""Finding GPT-2 weights in a Hugging Face cache (no network) and the Download path (faked)."""

from __future__ import annotations

import shutil

import huggingface_hub
import numpy as np
import pytest
import torch

from core.models import fetch
from core.models.hf_gpt2 import load_gpt2
from core.models.hf_tokenizer import CheckpointError
from tests.hf_tiny_gpt2 import fake_hub_cache, make_checkpoint

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return make_checkpoint(tmp_path_factory.mktemp("hf") / "tiny")


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to download fails the test."""

    def refuse(*args, **kwargs):
        if not kwargs.get("local_files_only"):
            raise AssertionError("a network download was attempted")
        return real(*args, **kwargs)

    real = huggingface_hub.hf_hub_download
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", refuse)


def test_found_in_a_fake_hub_cache_with_local_files_only(source, tmp_path, no_network, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    cache = tmp_path / "hub"
    snapshot = fake_hub_cache(source, cache)
    assert fetch.find_cached("gpt2", cache) == snapshot
    assert fetch.find_cached("gpt2-medium", cache) is None
    found = fetch.local_checkpoints(cache, env={})
    assert [(f.key, f.folder) for f in found] == [("gpt2", snapshot)]
    assert found[0].label == "GPT-2 small, real weights"
    a, b = load_gpt2(snapshot), load_gpt2(source)
    ids = torch.tensor([a.tokenizer.encode("One day")])
    with torch.no_grad():
        assert np.array_equal(a.model(ids).numpy(), b.model(ids).numpy())


def test_nothing_found_in_an_empty_cache(tmp_path, no_network):
    assert fetch.find_cached("gpt2", tmp_path) is None
    assert fetch.local_checkpoints(tmp_path, env={}) == []


def test_env_folder_is_offered_first(source, tmp_path, no_network):
    found = fetch.local_checkpoints(tmp_path, env={fetch.ENV_FOLDER: str(source)})
    assert found[0].key == "local" and found[0].folder == source


def test_offline_means_no_download_and_a_clear_message(tmp_path, monkeypatch, no_network, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert fetch.is_offline()
    with pytest.raises(CheckpointError, match="HF_HUB_OFFLINE"):
        fetch.download("gpt2", tmp_path)
    assert fetch.main(["gpt2", "--cache-dir", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "about 550 MB" in out and err.startswith("error: HF_HUB_OFFLINE") and "Traceback" not in err


def test_download_reports_progress_and_lands_in_the_cache(source, tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    cache = tmp_path / "hub"
    calls = []

    def fake_download(repo_id, filename, *, cache_dir=None, tqdm_class=None, **kwargs):
        calls.append((repo_id, filename))
        snapshot = cache_dir / "models--openai-community--gpt2" / "snapshots" / ("0" * 40)
        if not snapshot.exists():
            fake_hub_cache(source, cache_dir)  # what the real calls leave behind
        size = (source / filename).stat().st_size
        if tqdm_class is not None:
            bar = tqdm_class(total=size)
            bar.update(size // 2)
            bar.update(size - size // 2)
            bar.close()
        return str(snapshot / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    seen = []
    folder = fetch.download("gpt2", cache, lambda name, done, total: seen.append((name, done, total)))
    assert [c[1] for c in calls] == list(fetch.FILES) and calls[0][0] == "openai-community/gpt2"
    assert folder == fetch.find_cached("gpt2", cache)
    last = {name: (done, total) for name, done, total in seen}
    assert set(last) == set(fetch.FILES) and all(d == t for d, t in last.values())


def test_download_failure_is_one_line(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)

    def unreachable(*args, **kwargs):
        raise OSError("Connection refused\n  (details)")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", unreachable)
    with pytest.raises(CheckpointError) as caught:
        fetch.download("gpt2", tmp_path)
    assert "\n" not in str(caught.value) and "could not download config.json" in str(caught.value)


def test_sizes_are_known_before_any_download():
    assert 540e6 < fetch.RELEASES["gpt2"].download_bytes < 560e6  # "about 550 MB"
    assert list(fetch.RELEASES) == ["gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl"]


def test_cli_list_without_network(source, tmp_path, no_network, capsys):
    fake_hub_cache(source, tmp_path)
    assert fetch.main(["--list", "--cache-dir", str(tmp_path)]) == 0
    assert "GPT-2 small" in capsys.readouterr().out
    shutil.rmtree(tmp_path / "models--openai-community--gpt2")
    assert fetch.main(["--list", "--cache-dir", str(tmp_path)]) == 0
    assert "python -m core.models.fetch gpt2" in capsys.readouterr().out
