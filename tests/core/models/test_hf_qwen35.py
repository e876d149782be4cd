"""A released-format Qwen3.5 in our module: logits, boards and caches equal transformers' own.

The checkpoints are tiny, random and made here (bench/hf_tiny_qwen35.py), in both layouts the
releases use — text-only `Qwen3_5ForCausalLM` and multimodal `Qwen3_5ForConditionalGeneration`;
nothing is downloaded. Reference: transformers 5.24's pure-PyTorch Qwen3.5 path, fp32.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch

from bench.hf_tiny_qwen35 import make_checkpoint
from core.models.hf_qwen35 import folder_spec
from core.models.hf_tokenizer import CheckpointError
from core.models.qwen35 import load_qwen35

transformers = pytest.importorskip("transformers")

STEPS = 40
PROMPT = "One day, Mia went to the park. The cache keeps keys and values."
RTOL = 1e-4


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("qwen35")
    return {
        "causal": make_checkpoint(root / "causal"),
        "multimodal": make_checkpoint(root / "multimodal", multimodal=True, seed=1),
        "untied": make_checkpoint(root / "untied", tied=False, seed=2),
    }


def reference(folder):
    cls = transformers.Qwen3_5ForCausalLM
    if json.loads((folder / "config.json").read_text())["model_type"] == "qwen3_5":
        cls = transformers.Qwen3_5ForConditionalGeneration
    return cls.from_pretrained(folder).eval()


def relative(ours, theirs) -> float:
    ours, theirs = torch.as_tensor(np.asarray(ours)), torch.as_tensor(theirs)
    return float((ours - theirs).abs().max() / theirs.abs().max())


@torch.no_grad()
def reference_run(hf, prompt: list[int], steps: int):
    """transformers with its cache: feed the prompt's first token, then the prompt, then greedy."""
    tokens, logits = [prompt[0]], []
    out = hf(torch.tensor([tokens]), use_cache=True)
    for t in range(steps):
        logits.append(out.logits[0, -1])
        nxt = prompt[t + 1] if t + 1 < len(prompt) else int(out.logits[0, -1].argmax())
        tokens.append(nxt)
        out = hf(torch.tensor([[nxt]]), cache=out.cache, use_cache=True)
    return tokens, logits, out.cache


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["causal", "multimodal", "untied"])
def test_logits_equal_transformers_at_every_step_of_a_generation(folders, layout):
    loaded = load_qwen35(folders[layout])
    prompt = loaded.tokenizer.encode(PROMPT)[:12]
    tokens, theirs, _ = reference_run(reference(folders[layout]), prompt, STEPS)
    cache = loaded.model.new_cache()
    for t in range(STEPS):
        trace = loaded.model.step(tokens[t], cache)
        assert relative(trace.logits, theirs[t]) <= RTOL, f"step {t}"
        if t + 1 >= len(prompt):
            assert trace.token == tokens[t + 1]  # the same greedy choice


@pytest.mark.slow
@pytest.mark.parametrize("chunk_size", [8, 64])
def test_a_prompt_through_chunk_equals_transformers(folders, chunk_size):
    loaded = load_qwen35(folders["multimodal"])
    hf = reference(folders["multimodal"])
    prompt = loaded.tokenizer.encode(PROMPT * 2)  # longer than one chunk of 8, shorter than 64
    with torch.no_grad():
        theirs = hf(torch.tensor([prompt])).logits[0]
    cache = loaded.model.new_cache()
    ours = loaded.model.prefill(prompt, cache, chunk_size=chunk_size)
    assert relative(ours, theirs) <= RTOL
    # the boards and caches the chunked prompt leaves are the ones the steps continue from
    with torch.no_grad():
        theirs_next = hf(torch.tensor([prompt + [7]])).logits[0, -1]
    assert relative(loaded.model.step(7, cache).logits, theirs_next) <= RTOL


@pytest.mark.slow
def test_trace_carries_the_boards_rates_and_cache_rows_transformers_holds(folders):
    loaded = load_qwen35(folders["causal"])
    prompt = loaded.tokenizer.encode(PROMPT)[:6]
    tokens, _, their_cache = reference_run(reference(folders["causal"]), prompt, 20)
    model, cache = loaded.model, loaded.model.new_cache()
    traces = [model.step(t, cache) for t in tokens[:21]]  # the 21 tokens transformers has read
    c = model.config
    kinds = [layer.kind for layer in traces[-1].layers]
    assert kinds == ["gated_delta"] * 3 + ["attention"]
    for i, layer in enumerate(traces[-1].layers):
        theirs = their_cache.layers[i]
        if layer.kind == "gated_delta":
            board = theirs.recurrent_states[0][0].numpy()  # (Hv, K, V)
            assert layer.state.shape == (
                c.linear_num_value_heads,
                c.linear_key_head_dim,
                c.linear_value_head_dim,
            )
            assert np.abs(layer.state - board).max() <= RTOL * np.abs(board).max()
            assert layer.state.shape == traces[0].layers[i].state.shape  # the same size at token 1 and 21
            alpha, beta = layer.parts["alpha"], layer.parts["beta"]
            assert alpha.shape == beta.shape == (c.linear_num_value_heads,)
            assert ((alpha > 0) & (alpha < 1)).all() and ((beta > 0) & (beta < 1)).all()
            assert layer.memory == "state" and layer.memory_bytes == traces[0].layers[i].memory_bytes
        else:
            assert layer.keys.shape == (c.num_key_value_heads, 21, c.head_dim)  # one row per token read
            assert np.allclose(
                layer.keys, theirs.keys[0].numpy(), rtol=0, atol=RTOL * theirs.keys.abs().max()
            )
            assert np.allclose(
                layer.values, theirs.values[0].numpy(), rtol=0, atol=RTOL * theirs.values.abs().max()
            )
            assert layer.attention.shape == (c.num_attention_heads, 21)
            assert np.allclose(layer.attention.sum(-1), 1.0, atol=1e-5)


def test_alpha_and_beta_are_the_formulas_of_the_config(folders):
    """α = exp(−exp(A_log)·softplus(a + dt_bias)), β = sigmoid(b), from the layer's own weights."""
    model = load_qwen35(folders["causal"]).model
    cache = model.new_cache()
    trace = model.step(5, cache)
    layer = model.layers[0]
    x = layer.input_layernorm(model.embed_tokens(torch.tensor([[5]])))
    net = layer.linear_attn
    with torch.no_grad():
        g = -net.A_log.exp() * torch.nn.functional.softplus(net.in_proj_a(x)[0, 0] + net.dt_bias)
        beta = torch.sigmoid(net.in_proj_b(x)[0, 0])
    assert np.allclose(trace.layers[0].parts["alpha"], g.exp().numpy(), atol=1e-6)
    assert np.allclose(trace.layers[0].parts["beta"], beta.numpy(), atol=1e-6)


def test_bytes_come_from_the_live_tensors(folders):
    model = load_qwen35(folders["causal"]).model
    cache = model.new_cache()
    first = model.step(3, cache)
    later = [model.step(4, cache) for _ in range(4)][-1]
    assert later.state_bytes == first.state_bytes == model.state_bytes()  # fixed boards
    assert later.cache_bytes - first.cache_bytes == 4 * model.cache_bytes_per_token()  # a row per token
    assert later.cache_bytes == model.memory_bytes(5) - model.state_bytes()


def test_folder_spec_reads_the_layer_map_and_the_cache(folders):
    for layout in ("causal", "multimodal"):
        spec = folder_spec(folders[layout])
        model = load_qwen35(folders[layout]).model
        assert spec.kinds.count("gated_delta") == 3 and len(spec.kinds) == 4
        assert spec.kv_cache_bytes_per_token(4) == model.cache_bytes_per_token()
        assert spec.hidden == model.config.hidden_size


def test_both_layouts_hold_the_same_text_model_when_the_weights_match(folders, tmp_path):
    """The multimodal file's text tensors under model.language_model.* load as the causal ones do."""
    from safetensors.torch import load_file, save_file

    causal = folders["causal"]
    mm = tmp_path / "mm"
    shutil.copytree(folders["multimodal"], mm)
    text = {
        f"model.language_model.{k.removeprefix('model.')}": v
        for k, v in load_file(causal / "model.safetensors").items()
    }
    vision = {k: v for k, v in load_file(mm / "model.safetensors").items() if k.startswith("model.visual.")}
    save_file({**text, **vision}, str(mm / "model.safetensors"), metadata={"format": "pt"})
    ids = torch.tensor([load_qwen35(causal).tokenizer.encode(PROMPT)])
    assert torch.equal(load_qwen35(causal).model(ids), load_qwen35(mm).model(ids))


def test_shards_load_the_same(folders, tmp_path):
    from safetensors.torch import load_file, save_file

    sharded = tmp_path / "sharded"
    shutil.copytree(folders["causal"], sharded)
    tensors = load_file(sharded / "model.safetensors")
    (sharded / "model.safetensors").unlink()
    names = sorted(tensors)
    halves = {"model-00001-of-00002.safetensors": names[::2], "model-00002-of-00002.safetensors": names[1::2]}
    weight_map = {}
    for file, part in halves.items():
        save_file({n: tensors[n] for n in part}, str(sharded / file), metadata={"format": "pt"})
        weight_map |= {n: file for n in part}
    (sharded / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    ids = torch.tensor([[5, 6, 7, 8]])
    assert torch.equal(load_qwen35(sharded).model(ids), load_qwen35(folders["causal"]).model(ids))


# -- bad folders: refused in one line, before anything loads -------------------------------------


def _copy(folders, tmp_path, layout="causal"):
    bad = tmp_path / "bad"
    shutil.copytree(folders[layout], bad)
    return bad


def _refused(folder, *words):
    with pytest.raises(CheckpointError) as info:
        load_qwen35(folder)
    message = str(info.value)
    assert "\n" not in message and len(message) < 300
    for word in words:
        assert word in message
    return message


def test_a_gpt2_folder_is_not_a_qwen35(tmp_path):
    from bench.hf_tiny_gpt2 import make_checkpoint as make_gpt2

    _refused(make_gpt2(tmp_path / "gpt2"), "'gpt2'", "Qwen3.5")
    with pytest.raises(CheckpointError):
        folder_spec(tmp_path / "gpt2")


def test_a_truncated_weights_file_is_refused(folders, tmp_path):
    bad = _copy(folders, tmp_path)
    path = bad / "model.safetensors"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    _refused(bad, "model.safetensors", "truncated")


def test_a_missing_tokenizer_is_refused(folders, tmp_path):
    bad = _copy(folders, tmp_path, "multimodal")
    (bad / "tokenizer.json").unlink()
    _refused(bad, "tokenizer.json")


def test_weights_of_another_size_are_refused(folders, tmp_path):
    bad = _copy(folders, tmp_path)
    config = json.loads((bad / "config.json").read_text())
    config["linear_value_head_dim"] = 16
    (bad / "config.json").write_text(json.dumps(config))
    _refused(bad, "shape")


def test_a_multimodal_config_without_text_config_is_refused(folders, tmp_path):
    bad = _copy(folders, tmp_path, "multimodal")
    config = json.loads((bad / "config.json").read_text())
    del config["text_config"]
    (bad / "config.json").write_text(json.dumps(config))
    _refused(bad, "text_config")


def test_a_missing_weights_file_is_refused(folders, tmp_path):
    bad = _copy(folders, tmp_path)
    (bad / "model.safetensors").unlink()
    _refused(bad, "model.safetensors")


def test_the_model_answers_the_live_model_protocol_and_saves_a_loadable_folder(folders, tmp_path):
    from core.models.protocol import LiveModel
    from core.models.qwen35 import Qwen35

    model = load_qwen35(folders["multimodal"]).model
    assert isinstance(model, LiveModel)
    model.save(tmp_path / "saved")
    shutil.copy(folders["multimodal"] / "tokenizer.json", tmp_path / "saved")
    again = Qwen35.load(tmp_path / "saved")
    ids = torch.tensor([[3, 1, 4, 1, 5, 9, 2, 6]])
    assert torch.equal(again(ids), model(ids))
    assert again.num_params() == model.num_params()  # the tied head still counted once
