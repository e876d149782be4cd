"""Decode speed vs depth on a real checkpoint (core.gpu.suites.checkpoint_bench): tiny random GPT-2, Llama,
Mistral, Qwen2 and Qwen3 folders written here by transformers (never downloaded), timed on the CPU
through the bench path with their own caches; the cache bytes counted on the real tensors equal the
planner's, the weights equal the parameters, the bench path decodes what transformers decodes, and
every bad input is one line (CheckpointError, or exit status 2 from the CLI)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench.hf_tiny_gpt2 import make_checkpoint
from core.gpu import bench
from core.gpu.decode.checkpoint_course import Qwen3Decoder
from core.gpu.decode.checkpoint_decoders import GPT2Decoder, open_decoder
from core.gpu.suites import checkpoint_bench
from core.gpu.suites.checkpoint_bench import CheckpointResult, Settings, describe, run_checkpoint
from core.gpu.timing import kernels
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.bench_env import make_env
from core.models.hf_causal import INSTALL_HINT
from core.models.hf_tokenizer import CheckpointError
from core.plan.latency import KERNEL_FLOOR_S

ROOT = Path(__file__).resolve().parents[4]
FAMILIES = ("gpt2", "llama", "mistral", "qwen2", "qwen3")
FAST = Settings(n_steps=3, warmup=1, repeats=2, depth_seconds=5.0)
BANDWIDTH = Bandwidth(20e9, 10e9, "stated for the test")
WINDOW = 64
CACHE_KIND = {"gpt2": GPT2Decoder.cache_kind, "qwen3": Qwen3Decoder.cache_kind}  # the others: transformers'


def make_causal(folder: Path, family: str, seed: int = 0) -> Path:
    """A tiny random Llama-family model saved by transformers (config.json + model.safetensors)."""
    import transformers

    names = {"llama": "Llama", "mistral": "Mistral", "qwen2": "Qwen2", "qwen3": "Qwen3"}[family]
    config_class = getattr(transformers, f"{names}Config")
    model_class = getattr(transformers, f"{names}ForCausalLM")
    extra = {"head_dim": 8} if family == "qwen3" else {}
    config = config_class(
        vocab_size=300, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=WINDOW, **extra,
    )  # fmt: skip
    torch.manual_seed(seed)
    model_class(config).eval().save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("checkpoints")
    out = {"gpt2": make_checkpoint(root / "gpt2", n_positions=WINDOW)}
    for family in FAMILIES[1:]:
        out[family] = make_causal(root / family, family)
    return out


@pytest.fixture(scope="module")
def env():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield make_env("cpu")
    torch.set_num_threads(threads)


def reference_model(folder: Path):
    """transformers' own model of the folder, in float32, for the parity checks."""
    from transformers import AutoModelForCausalLM

    return AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch.float32).eval()


@pytest.mark.parametrize("family", FAMILIES)
def test_sweep_measures_every_depth_with_the_planners_bytes(folders, env, family):
    depths = (0, 8, 24, WINDOW - FAST.room)
    updates = []
    result = run_checkpoint(
        folders[family], env, BANDWIDTH, depths, FAST, on_update=lambda r: updates.append(1)
    )
    assert [p.depth for p in result.points] == list(depths) and not result.stopped
    assert len(updates) >= len(depths)  # after every depth (the CLI writes its JSON there)
    model = reference_model(folders[family])
    params = list(model.parameters())
    assert result.params == sum(p.numel() for p in params)  # tied heads counted once
    cfg = model.config
    assert result.weight_bytes == 4 * result.params == result.planned_weight_bytes
    if family == "gpt2":
        per_token = 2 * cfg.n_layer * cfg.n_embd * 4  # a key and a value of every head, every layer, fp32
    else:
        head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        per_token = 2 * cfg.num_hidden_layers * cfg.num_key_value_heads * head_dim * 4
    assert result.cache_bytes_per_token == per_token
    for p in result.points:
        assert p.cache_bytes == p.planned_cache_bytes == per_token * p.depth  # the real tensors, exactly
        assert p.bytes_per_token == result.weight_read_bytes + p.planned_cache_bytes
        assert p.predicted_tokens_per_s == pytest.approx(BANDWIDTH.device_bytes_per_s / p.bytes_per_token)
        assert p.tokens_per_s > 0 and len(p.samples_tokens_per_s) == FAST.repeats
        # the operations of one profiled step beside the bytes (core.gpu.timing.kernels), and their floor
        assert p.kernels_counted == kernels.CPU_OPS and p.kernels_per_step > 10
        assert p.kernel_floor_s == pytest.approx(p.kernels_per_step * KERNEL_FLOOR_S)
        assert p.kernel_bound == (p.kernel_floor_s > p.bytes_floor_s)
    assert result.cache_matches_plan
    assert result.cache_kind == CACHE_KIND.get(family, "StaticCache")
    again = CheckpointResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert again == result


@pytest.mark.parametrize("family", FAMILIES)
def test_the_bench_path_decodes_what_transformers_decodes(folders, env, family):
    """Greedy next tokens through the decoder the benchmark times (its own cache, one token per step)
    equal transformers' full forward pass, also after going back to a depth as the timing loop does."""
    info = describe(folders[family])
    decoder = open_decoder(info.family, info.folder, env.device, env.dtype)
    ids = torch.randint(0, 300, (20,), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        full = reference_model(folders[family])(input_ids=ids[None]).logits[0]  # (T, V)
    decoder.allocate(len(ids) + 1)
    stepped = torch.stack([decoder.step(ids[i : i + 1]) for i in range(len(ids))])  # (T, V)
    assert torch.equal(stepped.argmax(-1), full.argmax(-1))
    torch.testing.assert_close(stepped, full, atol=1e-4, rtol=1e-4)
    decoder.pos = 7  # back to depth 7: the next step overwrites position 7
    assert decoder.pos == 7
    torch.testing.assert_close(decoder.step(ids[7:8]), full[7], atol=1e-4, rtol=1e-4)
    decoder.release()


def _one_line(error: CheckpointError) -> str:
    message = str(error)
    assert message and "\n" not in message and "Traceback" not in message
    return message


def test_bad_folders_are_refused_in_one_line(folders, tmp_path):
    with pytest.raises(CheckpointError) as caught:
        describe(tmp_path / "missing")
    assert "is not a folder" in _one_line(caught.value)
    with pytest.raises(CheckpointError) as caught:
        describe(tmp_path)
    assert "no config.json" in _one_line(caught.value)

    truncated = tmp_path / "truncated"
    shutil.copytree(folders["llama"], truncated)
    weights = truncated / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    with pytest.raises(CheckpointError) as caught:
        describe(truncated)
    assert "damaged or truncated" in _one_line(caught.value)

    unsupported = tmp_path / "gemma"
    shutil.copytree(folders["llama"], unsupported)
    config = json.loads((unsupported / "config.json").read_text())
    (unsupported / "config.json").write_text(json.dumps({**config, "model_type": "gemma3"}))
    with pytest.raises(CheckpointError) as caught:
        describe(unsupported)
    assert "unsupported model family 'gemma3'" in _one_line(caught.value)

    no_weights = tmp_path / "no_weights"
    no_weights.mkdir()
    shutil.copy(folders["qwen2"] / "config.json", no_weights)
    with pytest.raises(CheckpointError) as caught:
        describe(no_weights)
    assert "no model.safetensors" in _one_line(caught.value)


def test_a_depth_beyond_the_window_is_refused_before_loading(folders, env):
    with pytest.raises(CheckpointError) as caught:
        run_checkpoint(folders["gpt2"], env, BANDWIDTH, (0, WINDOW), FAST)
    assert f"window of {WINDOW} positions" in _one_line(caught.value)
    with pytest.raises(CheckpointError):
        run_checkpoint(folders["gpt2"], env, BANDWIDTH, (8, 0), FAST)  # not increasing


def test_default_depths_fit_the_window(folders, env):
    info = describe(folders["gpt2"])
    depths = checkpoint_bench.default_depths(info, FAST, env.device)
    assert depths[0] == 0 and depths[-1] <= WINDOW - FAST.room and len(depths) == 4
    checkpoint_bench.check_depths(info, depths, FAST)
    gpt2_small = dict(info.config, n_positions=1024, n_ctx=1024)
    big = checkpoint_bench.CheckpointInfo(info.folder, "x", "gpt2", gpt2_small, info.planned, 1024)
    assert checkpoint_bench.default_depths(big, Settings(), torch.device("cpu")) == (0, 256, 512, 1000)


@pytest.mark.parametrize(
    "where, message",
    [
        ("missing", "is not a folder"),
        ("empty", "no config.json"),
        ("truncated", "damaged or truncated"),
        ("gemma", "unsupported model family 'gemma3'"),
        ("no_tokenizer", "has no tokenizer.json"),
    ],
)
def test_cli_refuses_bad_folders_with_exit_2(folders, tmp_path, capsys, where, message):
    (tmp_path / "empty").mkdir()
    shutil.copytree(folders["llama"], tmp_path / "truncated")
    weights = tmp_path / "truncated" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])
    shutil.copytree(folders["llama"], tmp_path / "gemma")
    config = json.loads((tmp_path / "gemma" / "config.json").read_text())
    (tmp_path / "gemma" / "config.json").write_text(json.dumps({**config, "model_type": "gemma3"}))
    shutil.copytree(folders["gpt2"], tmp_path / "no_tokenizer")
    (tmp_path / "no_tokenizer" / "tokenizer.json").unlink()
    with pytest.raises(SystemExit) as done:
        bench.main(["--checkpoint", str(tmp_path / where), "--out", str(tmp_path / "r.json")])
    assert done.value.code == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "r.json").exists()


def test_cli_refuses_a_depth_beyond_the_window(folders, tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        bench.main(
            ["--checkpoint", str(folders["gpt2"]), "--depths", "0,100", "--out", str(tmp_path / "r.json")]
        )
    assert done.value.code == 2
    assert "beyond" in capsys.readouterr().err and not (tmp_path / "r.json").exists()


def test_cli_writes_its_json(folders, tmp_path, capsys):
    out = tmp_path / "r.json"
    args = [
        "--checkpoint",
        str(folders["qwen2"]),
        "--depths",
        "0,16,32",
        "--device",
        "cpu",
        "--out",
        str(out),
    ]
    assert bench.main([*args, "--threads", "1"]) == 0
    data = json.loads(out.read_text())
    assert data["complete"] and not data["stopped"] and data["bandwidth"]["device_bytes_per_s"] > 0
    points = data["checkpoint"]["points"]
    assert [p["depth"] for p in points] == [0, 16, 32]
    assert all(p["cache_bytes"] == p["planned_cache_bytes"] for p in points)
    assert "% of roofline" not in data and "percent_of_roofline" in points[0]
    printed = capsys.readouterr().out
    assert "StaticCache" in printed and "roofline" in printed


BLOCKER = """
import sys
from importlib.machinery import PathFinder


class _Hidden(PathFinder):
    # finds nothing for transformers, exactly as if it were not installed

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] == "transformers":
            return None
        return PathFinder.find_spec(name, path, target)


sys.meta_path[:] = [_Hidden if f is PathFinder else f for f in sys.meta_path]
"""


def test_without_transformers_the_llama_family_says_what_to_install(folders, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "sitecustomize.py").write_text(BLOCKER)
    env = dict(os.environ, PYTHONPATH=f"{blocked}{os.pathsep}{ROOT}", OMP_NUM_THREADS="1")

    def cli(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "core.gpu.bench", *args, "--out", str(tmp_path / "r.json")]
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)

    check = subprocess.run([sys.executable, "-c", "import transformers"], env=env, capture_output=True)
    assert check.returncode != 0  # the blocker really blocks
    done = cli("--checkpoint", str(folders["llama"]))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "python -m core.gpu.bench: error: this checkpoint needs Hugging Face transformers, which is not "
        f"installed: {INSTALL_HINT}"
    ]
    gpt2 = cli("--checkpoint", str(folders["gpt2"]), "--depths", "0,8", "--device", "cpu", "--threads", "1")
    assert gpt2.returncode == 0, gpt2.stderr[-2000:]  # GPT-2 runs in the course's own module, no transformers


def test_the_extra_pins_the_dev_transformers():
    def pin(name: str) -> list[str]:
        return [line for line in (ROOT / name).read_text().splitlines() if line.startswith("transformers==")]

    assert pin("requirements-checkpoints.txt") == pin("requirements-dev.txt") != []
