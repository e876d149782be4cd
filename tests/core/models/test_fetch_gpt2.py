"""Finding GPT-2 weights in a Hugging Face cache (no network) and the Download path (faked)."""

from __future__ import annotations

import shutil
import socket
import time

import huggingface_hub
import numpy as np
import pytest
import torch

from bench.hf_tiny_gpt2 import fake_hub_cache, make_checkpoint
from core.models import fetch
from core.models.hf_gpt2 import load_gpt2
from core.models.hf_tokenizer import CheckpointError

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    return make_checkpoint(tmp_path_factory.mktemp("hf") / "tiny")


@pytest.fixture
def hub_answers(monkeypatch):
    """The reachability check passes without asking anyone (for tests that fake the downloads)."""
    monkeypatch.setattr(fetch, "unreachable_reason", lambda endpoint, timeout_s=None: None)


@pytest.fixture
def online(monkeypatch):
    """HF_HUB_OFFLINE unset, so `download` goes as far as the network."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)


@pytest.fixture
def closed_endpoint(monkeypatch):
    """The Hub endpoint points at a loopback port nobody listens on (refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    endpoint = f"http://127.0.0.1:{port}"
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", endpoint)
    return endpoint


@pytest.fixture
def silent_endpoint(monkeypatch):
    """The Hub endpoint points at a socket that accepts connections and never answers (a stalled
    network): only our timeout ends the wait."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        endpoint = f"http://127.0.0.1:{s.getsockname()[1]}"
        monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", endpoint)
        yield endpoint


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


def test_download_reports_progress_and_lands_in_the_cache(source, tmp_path, monkeypatch, online, hub_answers):
    cache = tmp_path / "hub"
    calls = []

    def fake_download(repo_id, filename, *, cache_dir=None, tqdm_class=None, etag_timeout=None, **kwargs):
        calls.append((repo_id, filename))
        if not kwargs.get("local_files_only"):
            assert etag_timeout == fetch.ETAG_TIMEOUT_S  # each metadata request is bounded
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


def test_download_failure_is_one_line(tmp_path, monkeypatch, online, hub_answers):
    def unreachable(*args, **kwargs):
        raise OSError("Connection refused\n  (details)")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", unreachable)
    with pytest.raises(CheckpointError) as caught:
        fetch.download("gpt2", tmp_path)
    assert "\n" not in str(caught.value) and "could not download config.json" in str(caught.value)


def test_unreachable_hub_is_one_line_at_once_and_leaves_no_files(
    tmp_path, online, closed_endpoint, no_network, capsys
):
    cache = tmp_path / "hub"
    started = time.monotonic()
    with pytest.raises(CheckpointError) as caught:
        fetch.download("gpt2", cache)
    message = str(caught.value)
    assert time.monotonic() - started < 5
    assert "\n" not in message and message.startswith(f"{closed_endpoint[7:]} cannot be reached")
    assert fetch.ENV_FOLDER in message and "model.safetensors" in message
    started = time.monotonic()
    assert fetch.main(["gpt2", "--cache-dir", str(cache)]) == 1
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: 127.0.0.1:") and "Traceback" not in err
    assert not cache.exists()  # nothing half-written into the reader's cache


def test_a_stalled_hub_is_given_up_within_the_timeout(tmp_path, online, silent_endpoint, no_network):
    started = time.monotonic()
    with pytest.raises(CheckpointError, match="cannot be reached") as caught:
        fetch.download("gpt2", tmp_path / "hub")
    waited = time.monotonic() - started
    assert fetch.REACH_TIMEOUT_S - 0.5 < waited < 5, waited
    assert "\n" not in str(caught.value) and not (tmp_path / "hub").exists()


def test_reachability_respects_the_configured_endpoint(monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", "https://mirror.example")
    assert fetch.hub_endpoint() == "https://mirror.example"
    assert fetch.unreachable_message("https://mirror.example", "down").startswith("mirror.example cannot")


def test_any_http_answer_counts_as_reachable(monkeypatch):
    """A 404 from a mirror's front page still means the machine can talk to it."""
    import urllib.error

    def not_found(request, timeout):
        raise urllib.error.HTTPError(request.full_url, 404, "Not Found", {}, None)

    monkeypatch.setattr(fetch.urllib.request, "urlopen", not_found)
    assert fetch.unreachable_reason("https://mirror.example", timeout_s=1) is None


def test_a_gateway_error_counts_as_unreachable(monkeypatch):
    """A proxy answering 504 for a Hub it cannot reach: say so now rather than retry for 20 s."""
    import urllib.error

    def gateway_timeout(request, timeout):
        raise urllib.error.HTTPError(request.full_url, 504, "Gateway Timeout", {}, None)

    monkeypatch.setattr(fetch.urllib.request, "urlopen", gateway_timeout)
    assert fetch.unreachable_reason("https://huggingface.co", timeout_s=1) == "HTTP 504 Gateway Timeout"


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


def test_weight_sizes_agree_with_the_architecture():
    """Each model.safetensors is its float32 tensors (parameters + one 1024×1024 causal-mask buffer
    per block, as the Hub's conversion stored them) plus a JSON header of a few tens of kB."""
    shapes = {"gpt2": (12, 768), "gpt2-medium": (24, 1024), "gpt2-large": (36, 1280), "gpt2-xl": (48, 1600)}
    for key, (n_layer, d) in shapes.items():
        params = 50257 * d + 1024 * d + n_layer * (12 * d * d + 13 * d) + 2 * d
        tensor_bytes = 4 * (params + n_layer * 1024 * 1024)
        header = fetch.RELEASES[key].weights_bytes - tensor_bytes
        assert 0 < header < 100_000, (key, header)
    assert fetch.RELEASES["gpt2"].weights_bytes - 8 - 548_090_880 == 14_283  # small's header, exactly


def test_sizes_read_as_the_hub_rounds_them():
    listed = {"gpt2": "548 MB", "gpt2-medium": "1.52 GB", "gpt2-large": "3.25 GB", "gpt2-xl": "6.43 GB"}
    hub = {
        k: f"{r.weights_bytes / 1e6:.0f} MB" if r.weights_bytes < 1e9 else f"{r.weights_bytes / 1e9:.2f} GB"
        for k, r in fetch.RELEASES.items()
    }
    assert hub == listed  # the Hub's file pages, three significant figures
    sizes = [fetch.approx_size(r.download_bytes) for r in fetch.RELEASES.values()]
    assert sizes == ["about 550 MB", "about 1.5 GB", "about 3.2 GB", "about 6.4 GB"]
    assert fetch.approx_size(996_000_000) == "about 1.0 GB"
