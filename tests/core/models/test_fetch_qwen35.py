"""Getting Qwen3.5 weights: found in a Hugging Face cache or COURSE_QWEN35_PATH (no network), the
Download path (faked: the Hub is out of reach here), one download however many readers press, and
the one-line refusals before anything loads (another family, truncated weights, no tokenizer, too
little free memory)."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import huggingface_hub
import pytest
import torch

from bench.hf_tiny_gpt2 import fake_hub_cache as gpt2_hub_cache
from core.models import downloads, fetch, hf_qwen35, qwen35
from core.models.hf_tokenizer import CheckpointError

pytest.importorskip("transformers")

QWEN = "qwen3.5-0.8b"
REPO = "Qwen/Qwen3.5-0.8B"


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    from bench.hf_tiny_qwen35 import make_checkpoint

    return make_checkpoint(tmp_path_factory.mktemp("qwen") / "tiny", multimodal=True)


def fake_hub_cache(source: Path, cache_dir: Path, names: list[str]) -> Path:
    """The release's `names` laid out as the Hugging Face cache does (bench/hf_tiny_gpt2.py)."""
    return gpt2_hub_cache(source, cache_dir, REPO, tuple(names))


@pytest.fixture
def online(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(fetch, "unreachable_reason", lambda endpoint, timeout_s=None: None)


def test_found_in_the_cache_without_the_network_and_only_as_a_qwen35(source, tmp_path, no_network):
    snapshot = fake_hub_cache(source, tmp_path, list(fetch.FILES))
    assert fetch.find_cached(QWEN, tmp_path) == snapshot
    assert [(f.key, f.folder) for f in fetch.local_qwen35(tmp_path, env={})] == [(QWEN, snapshot)]
    assert fetch.local_checkpoints(tmp_path, env={}) == []  # the GPT-2 switch does not offer it
    assert qwen35.load_qwen35(snapshot).config.layer_types.count("full_attention") == 1


def test_a_cache_missing_the_tokenizer_finds_nothing(source, tmp_path, no_network):
    fake_hub_cache(source, tmp_path, ["config.json", "model.safetensors"])
    assert fetch.find_cached(QWEN, tmp_path) is None


def test_sharded_weights_in_the_cache_are_found(source, tmp_path, no_network):
    shard = "model-00001-of-00001.safetensors"
    staged = tmp_path / "staged"
    shutil.copytree(source, staged)
    (staged / "model.safetensors").rename(staged / shard)
    index = {"weight_map": {"model.embed_tokens.weight": shard}}
    (staged / fetch.INDEX).write_text(json.dumps(index))
    snapshot = fake_hub_cache(staged, tmp_path / "hub", ["config.json", "tokenizer.json", fetch.INDEX, shard])
    assert fetch.find_cached(QWEN, tmp_path / "hub") == snapshot
    (snapshot / shard).unlink()  # the index names a shard that is not here
    assert fetch.find_cached(QWEN, tmp_path / "hub") is None


def test_the_env_folder_is_offered_first(source, tmp_path, no_network):
    found = fetch.local_qwen35(tmp_path, env={fetch.ENV_QWEN35: str(source)})
    assert [(f.key, f.folder) for f in found] == [("local", source)]
    assert fetch.local_checkpoints(tmp_path, env={fetch.ENV_QWEN35: str(source)}) == []


def test_size_is_known_before_any_download():
    release = fetch.QWEN35_RELEASES[QWEN]
    assert release.repo_id == REPO and release.env_folder == fetch.ENV_QWEN35
    assert fetch.approx_size(release.download_bytes) == "about 1.7 GB"
    assert fetch.fetch_command(QWEN) == "python -m core.models.fetch qwen3.5-0.8b"


def test_download_fetches_the_three_files_with_progress(source, tmp_path, monkeypatch, online):
    calls = []

    def fake_download(repo_id, filename, *, cache_dir=None, tqdm_class=None, etag_timeout=None, **kwargs):
        calls.append((repo_id, filename))
        snapshot = cache_dir / ("models--" + REPO.replace("/", "--")) / "snapshots" / ("0" * 40)
        if not snapshot.exists():
            fake_hub_cache(source, cache_dir, list(fetch.FILES))  # what the real calls leave behind
        size = (source / filename).stat().st_size
        if tqdm_class is not None:  # a download (a cache look-up passes none)
            bar = tqdm_class(total=size)
            bar.update(size)
            bar.close()
        return str(snapshot / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    seen = {}
    folder = fetch.download(QWEN, tmp_path, lambda name, done, total: seen.update({name: (done, total)}))
    assert calls == [(REPO, name) for name in fetch.FILES]
    assert (
        folder
        == fetch.find_cached(QWEN, tmp_path)
        == tmp_path / "models--Qwen--Qwen3.5-0.8B" / "snapshots" / ("0" * 40)
    )
    assert set(seen) == set(fetch.FILES) and all(done == total for done, total in seen.values())


def test_a_sharded_release_is_fetched_through_its_index(source, tmp_path, monkeypatch, online):
    from huggingface_hub.errors import EntryNotFoundError

    shards = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    index = tmp_path / "index.json"
    index.write_text(json.dumps({"weight_map": {"a": shards[0], "b": shards[1]}}))
    asked = []

    def fake_download(repo_id, filename, *, cache_dir=None, tqdm_class=None, etag_timeout=None, **kwargs):
        asked.append(filename)
        if filename == "model.safetensors":
            raise EntryNotFoundError("404 Entry Not Found")
        return str(index if filename == fetch.INDEX else tmp_path / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    assert fetch.download(QWEN, tmp_path) == tmp_path
    assert asked == ["config.json", "tokenizer.json", "model.safetensors", fetch.INDEX, *shards]


def test_offline_means_no_download_and_one_line(tmp_path, monkeypatch, no_network, capsys):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(CheckpointError, match="HF_HUB_OFFLINE"):
        fetch.download(QWEN, tmp_path)
    assert fetch.main([QWEN, "--cache-dir", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "Qwen3.5 0.8B" in out and "about 1.7 GB" in out
    assert err.startswith("error: HF_HUB_OFFLINE") and err.count("\n") == 1


def test_unreachable_hub_names_the_qwen_folder_variable():
    message = fetch.unreachable_message("https://huggingface.co", "down", QWEN)
    assert fetch.ENV_QWEN35 in message and "Qwen3.5 folder" in message and "\n" not in message


def test_cli_list_and_check(source, tmp_path, no_network, capsys):
    fake_hub_cache(source, tmp_path, list(fetch.FILES))
    assert fetch.main(["--list", "--cache-dir", str(tmp_path)]) == 0
    assert "Qwen3.5 0.8B, real weights" in capsys.readouterr().out
    assert fetch.main(["--check", str(source)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: tiny: Qwen3.5") and "3 Gated DeltaNet, 1 gated attention" in out


# -- refused in one line before anything loads ---------------------------------------------------


def _refused(folder: Path, capsys, cli: bool = True, **load) -> str:
    with pytest.raises(CheckpointError) as caught:
        qwen35.load_qwen35(folder, **load)
    message = str(caught.value)
    assert "\n" not in message
    if cli and not load:  # the CLI says the same, in one line
        assert fetch.main(["--check", str(folder)]) == 1
        assert capsys.readouterr().err.splitlines()[-1] == f"error: {message}"
    return message


def test_too_little_free_memory_is_refused_before_any_weight_is_read(source, monkeypatch, capsys):
    need = hf_qwen35.weights_bytes(source, torch.float32)
    assert need == 4 * sum(p.numel() for p in qwen35.load_qwen35(source).model.parameters())
    assert hf_qwen35.weights_bytes(source, torch.bfloat16) * 2 == need

    def no_read(*args, **kwargs):
        raise AssertionError("weights were read although they cannot fit")

    monkeypatch.setattr(hf_qwen35.hf_folder, "read_tensors", no_read)
    message = _refused(source, capsys, available=lambda: need - 1)
    assert "free" in message and "float32" in message
    monkeypatch.undo()
    assert qwen35.load_qwen35(source, available=lambda: need).model is not None  # just enough
    assert qwen35.load_qwen35(source, available=lambda: None).model is not None  # unknown: not guessed


def test_free_memory_is_read_from_meminfo(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16000000 kB\nMemFree:  100 kB\nMemAvailable:    2048000 kB\n")
    assert hf_qwen35.available_memory(meminfo) == 2048000 * 1024
    assert hf_qwen35.available_memory(tmp_path / "absent") is None
    meminfo.write_text("MemTotal: 1 kB\n")
    assert hf_qwen35.available_memory(meminfo) is None


def test_a_gpt2_folder_a_truncated_file_and_a_missing_tokenizer_are_refused(source, tmp_path, capsys):
    from bench.hf_tiny_gpt2 import make_checkpoint as make_gpt2

    assert "unsupported model family 'gpt2'" in _refused(make_gpt2(tmp_path / "gpt2"), capsys, cli=False)
    truncated = tmp_path / "truncated"
    shutil.copytree(source, truncated)
    weights = truncated / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    assert "truncated" in _refused(truncated, capsys)
    no_tokenizer = tmp_path / "no_tokenizer"
    shutil.copytree(source, no_tokenizer)
    (no_tokenizer / "tokenizer.json").unlink()
    assert "tokenizer.json" in _refused(no_tokenizer, capsys)


# -- two readers, one download -------------------------------------------------------------------


def test_two_presses_at_once_start_one_download():
    release = threading.Event()
    calls = []

    def slow_fetcher(key, report):
        calls.append(key)
        report("model.safetensors", 5, 10)
        release.wait(10)
        return Path("/fetched") / key

    jobs, started = [], []
    go = threading.Barrier(2)

    def press():
        go.wait()
        job, first = downloads.start(QWEN, slow_fetcher)
        jobs.append(job)
        started.append(first)

    presses = [threading.Thread(target=press) for _ in range(2)]
    for t in presses:
        t.start()
    for t in presses:
        t.join(5)
    assert sorted(started) == [False, True] and jobs[0] is jobs[1]
    assert downloads.running(QWEN) is jobs[0] and not jobs[0].wait(0.05)
    release.set()
    assert jobs[0].wait(5) and jobs[0].folder == Path("/fetched") / QWEN and jobs[0].fraction == 0.5
    assert calls == [QWEN]  # one fetch for both readers
    deadline = time.monotonic() + 5
    while downloads.running(QWEN) is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert downloads.running(QWEN) is None  # a finished download is forgotten: a later press starts anew


def test_a_failed_download_ends_with_its_line_and_can_be_tried_again():
    def failing(key, report):
        raise CheckpointError("huggingface.co cannot be reached from this machine")

    job, first = downloads.start(QWEN, failing)
    assert first and job.wait(5) and job.error.startswith("huggingface.co cannot") and job.folder is None
    job_again, first_again = downloads.start(QWEN, lambda key, report: Path("/ok"))
    assert first_again and job_again is not job and job_again.wait(5) and job_again.folder == Path("/ok")
