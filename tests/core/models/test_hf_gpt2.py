"""Released-format GPT-2 in our module: logits equal transformers' GPT2LMHeadModel at every step.

The checkpoints are tiny, random and made here (bench/hf_tiny_gpt2.py); nothing is downloaded.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bench.hf_tiny_gpt2 import make_checkpoint
from core.generation import Sampling, Session, generate
from core.models.hf_gpt2 import load_gpt2, spec_from_config

transformers = pytest.importorskip("transformers")

STEPS = 32
PROMPT = "One day, Mia went to the"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return make_checkpoint(tmp_path_factory.mktemp("hf") / "tiny")


def reference(folder):
    return transformers.GPT2LMHeadModel.from_pretrained(folder).eval()


@torch.no_grad()
def reference_steps(hf, prompt: list[int], steps: int, use_cache: bool) -> tuple[list[int], list[np.ndarray]]:
    """Greedy generation with transformers, keeping each step's next-token logits."""
    tokens, logits, past = list(prompt), [], None
    for _ in range(steps):
        if use_cache:
            new = tokens if past is None else tokens[-1:]
            out = hf(torch.tensor([new]), cache=past, use_cache=True)  # `cache`: transformers 5.x's name
            past = out.cache if getattr(out, "cache", None) is not None else out.past_key_values
        else:
            out = hf(torch.tensor([tokens]), use_cache=False)
        row = out.logits[0, -1]
        logits.append(row.numpy().copy())
        tokens.append(int(row.argmax()))
    return tokens[len(prompt) :], logits


@torch.no_grad()
def our_steps(model, prompt: list[int], steps: int, use_cache: bool) -> tuple[list[int], list[np.ndarray]]:
    session = Session(model, Sampling()).start(prompt, use_cache)
    traces = [session.step(record_cache=False) for _ in range(steps)]
    return [t.token for t in traces], [t.logits for t in traces]


def assert_parity(folder, steps: int = STEPS):
    loaded = load_gpt2(folder)
    hf = reference(folder)
    prompt = loaded.tokenizer.encode(PROMPT)
    for use_cache in (False, True):
        ours_tokens, ours_logits = our_steps(loaded.model, prompt, steps, use_cache)
        ref_tokens, ref_logits = reference_steps(hf, prompt, steps, use_cache)
        assert ours_tokens == ref_tokens, f"greedy tokens differ (cache={use_cache})"
        for step, (a, b) in enumerate(zip(ours_logits, ref_logits, strict=True)):
            assert np.abs(a - b).max() < 1e-5, f"step {step}, cache={use_cache}: {np.abs(a - b).max():.2e}"
    return loaded, hf, prompt


def test_logits_equal_transformers_at_every_step_with_and_without_cache(folder):
    loaded, hf, prompt = assert_parity(folder)
    expected = hf.generate(
        torch.tensor([prompt]), max_new_tokens=STEPS, do_sample=False, pad_token_id=0, attention_mask=None
    )[0, len(prompt) :].tolist()
    assert generate(loaded.model, prompt, STEPS, use_cache=True) == expected
    assert generate(loaded.model, prompt, STEPS, use_cache=False) == expected


def test_larger_sizes_follow_the_config(tmp_path):
    """Other widths, depths, MLP sizes and an untied head load by config alone."""
    folder = make_checkpoint(
        tmp_path / "wide",
        n_layer=3,
        n_head=6,
        n_embd=48,
        n_positions=80,
        n_inner=100,
        tie_word_embeddings=False,
    )
    loaded, hf, _ = assert_parity(folder, steps=8)
    assert loaded.config.mlp_dim == 100 and loaded.config.n_layer == 3 and loaded.config.block_size == 80
    assert loaded.model.head.weight.data_ptr() != loaded.model.wte.weight.data_ptr()
    assert loaded.model.num_params() == hf.num_parameters()


def test_tied_embedding_is_one_matrix(folder):
    loaded = load_gpt2(folder)
    assert loaded.model.head.weight is loaded.model.wte.weight
    assert loaded.model.num_params() == reference(folder).num_parameters()
    assert loaded.spec.total_params() == loaded.model.num_params()


def test_block_weights_keep_the_checkpoints_layout(folder):
    """Conv1D weights arrive (in, out); our Linear sees (out, in) as a view of that memory, not a
    transposed copy: a one-token step reads them about 20 % faster that way (bench/generation.py)."""
    block = load_gpt2(folder).model.blocks[0]
    for linear in (block.attn.qkv, block.attn.proj, block.mlp.up, block.mlp.down):
        out_features, in_features = linear.weight.shape
        assert linear.weight.stride() == (1, out_features), "stored (in, out), read as (out, in)"


def test_cache_bytes_match_the_spec(folder):
    loaded = load_gpt2(folder)
    spec = loaded.spec
    assert loaded.model.cache_bytes_per_token() == spec.kv_cache_bytes_per_token(4)  # fp32
    assert spec.kv_cache_bytes_per_token(2) * 2 == loaded.model.cache_bytes_per_token()


def test_gpt2_small_config_reproduces_the_catalog_row():
    from core.specs import SPECS

    small = {"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024}
    spec = spec_from_config(small | {"vocab_size": 50257})
    assert spec.kv_cache_bytes_per_token(2) == SPECS["gpt2"].kv_cache_bytes_per_token(2) == 36 * 1024
    assert spec.kv_cache_bytes_per_token(4) == 72 * 1024
    assert spec.total_params() == SPECS["gpt2"].total_params()


def test_tokens_are_bpe_tokens_shown_as_tokens(folder):
    tok = load_gpt2(folder).tokenizer
    text = "went to the park 🙂\n"
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    labels = [tok.label(i) for i in ids]
    assert "␣the" in labels and "xF0" in labels  # a merged word; an emoji's first byte alone
    assert len(ids) < len(text.encode())  # merges: fewer tokens than bytes
    assert labels[-1] == "⏎"
    prompt = tok.prepare("word " * 200, 16)
    assert prompt.was_cut and len(prompt.ids) == 16 and "tokens" in prompt.note()


def test_live_cache_of_gpt2_small_shape_matches_the_catalog_row():
    """36 KiB per token in 16-bit (core/specs' GPT-2 row), 72 KiB in the fp32 the pages run."""
    from core.models.gpt2 import GPT2, GPT2Config
    from core.models.gpt2_cache import cache_size
    from core.models.hf_gpt2 import catalog_spec

    config = GPT2Config(vocab_size=50257, block_size=1024, n_layer=12, n_head=12, d_model=768)
    with torch.device("meta"):
        model = GPT2(config, init=False)
    size = cache_size(model, catalog_spec(config))
    assert size.spec_name == "GPT-2 small" and size.matches_spec
    assert (size.per_token, size.per_token_16bit) == (72 * 1024, 36 * 1024)


def test_top_next_and_dropping_logits(folder):
    from core.generation import run_generation, top_next

    logits = np.array([0.0, 2.0, 1.0, -1.0], dtype=np.float32)
    top = top_next(logits, k=2)
    assert [i for i, _ in top] == [1, 2]
    assert top[0][1] == pytest.approx(np.exp(2) / np.exp(logits.astype(float)).sum())
    loaded = load_gpt2(folder)
    run = run_generation(loaded.model, loaded.tokenizer.encode(PROMPT), 5)
    assert [t[0][0] for t in run.top] == run.new_ids  # greedy: the likeliest is the one written
    light = run.without_logits()
    assert light.new_ids == run.new_ids and light.top == run.top
    assert (
        all(t.logits.size == 0 for t in light.traces)
        and run.traces[0].logits.size == loaded.config.vocab_size
    )


def _logits(folder, text=PROMPT):
    loaded = load_gpt2(folder)
    with torch.no_grad():
        return loaded.model(torch.tensor([loaded.tokenizer.encode(text)])).numpy()


def test_openai_layout_and_shards_load_the_same(folder, tmp_path):
    """OpenAI's upload names tensors without `transformer.` and keeps the mask buffers; large
    checkpoints come in shards listed by model.safetensors.index.json. Same logits either way."""
    import json
    import shutil

    from safetensors.torch import load_file, save_file

    tensors = load_file(folder / "model.safetensors")
    openai = shutil.copytree(folder, tmp_path / "openai")
    renamed = {k.removeprefix("transformer."): v for k, v in tensors.items()}
    renamed["h.0.attn.bias"] = torch.tril(torch.ones(1, 1, 64, 64))  # the old causal-mask buffer
    save_file(renamed, openai / "model.safetensors")
    assert np.array_equal(_logits(openai), _logits(folder))

    sharded = shutil.copytree(folder, tmp_path / "sharded")
    (sharded / "model.safetensors").unlink()
    names = sorted(tensors)
    half = {"model-00001-of-00002.safetensors": names[::2], "model-00002-of-00002.safetensors": names[1::2]}
    for shard, keys in half.items():
        save_file({k: tensors[k] for k in keys}, sharded / shard)
    index = {"weight_map": {k: shard for shard, keys in half.items() for k in keys}}
    (sharded / "model.safetensors.index.json").write_text(json.dumps(index))
    assert np.array_equal(_logits(sharded), _logits(folder))
