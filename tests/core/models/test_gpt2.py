"""The tiny GPT-2: cached decoding equals full recomputation, the cache grows one row per
token, sampling is reproducible, the context window is respected, the checkpoint is real."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from core.generation import Sampling, Session, generate, max_new_tokens, run_generation
from core.models.gpt2 import CHECKPOINT, GPT2, GPT2Config
from core.models.gpt2_cache import compare_runs, compare_runs_per_step, positions_computed_formula
from core.tokenizer import encode, prepare_prompt
from core.train.corpus import load_corpus, split_train_heldout
from core.train.loop import evaluate
from tests.core.models.recipe_runs import assert_same_weights_twice

SMALL = GPT2Config(block_size=64, n_layer=2, n_head=2, d_model=32)
CARD = CHECKPOINT.parent / "MODEL_CARD.md"
needs_checkpoint = pytest.mark.usefixtures("gpt2_checkpoint")  # shipped: fails if missing, never skips


def random_model(config: GPT2Config = SMALL, dtype=torch.float64, seed: int = 0) -> GPT2:
    torch.manual_seed(seed)
    return GPT2(config).to(dtype).eval()


@pytest.fixture(scope="module")
def trained() -> GPT2:
    return GPT2.load()


def test_shapes_and_tied_head():
    model = random_model()
    logits = model(torch.randint(0, 256, (3, 10)))
    assert logits.shape == (3, 10, 256)
    assert model.head.weight is model.wte.weight


def test_cached_and_uncached_logits_match_random_model_fp64():
    model = random_model()
    prompt = encode("Hi 🐱")
    cached = run_generation(model, prompt, 40, use_cache=True)
    plain = run_generation(model, prompt, 40, use_cache=False)
    assert cached.new_ids == plain.new_ids
    checks = compare_runs_per_step(cached, plain)
    assert len(checks) == 41 and all(c.identical for c in checks)
    assert checks[17] == compare_runs(cached, plain, steps=17)
    assert checks[-1].max_logit_difference < 1e-5
    for a, b in zip(cached.traces, plain.traces, strict=True):
        np.testing.assert_allclose(a.logits, b.logits, rtol=1e-5, atol=1e-5)
        for la, lb in zip(a.layers, b.layers, strict=True):
            np.testing.assert_allclose(la.attention, lb.attention, atol=1e-6)


@needs_checkpoint
def test_cached_and_uncached_agree_for_200_greedy_steps(trained):
    prompt = encode("The cache ")
    cached = run_generation(trained, prompt, 200, use_cache=True)
    plain = run_generation(trained, prompt, 200, use_cache=False)
    assert len(cached.traces) == 200
    assert cached.new_ids == plain.new_ids
    worst = max(
        float(np.abs(a.logits - b.logits).max()) for a, b in zip(cached.traces, plain.traces, strict=True)
    )
    assert worst < 1e-3


def test_cache_holds_one_row_per_token():
    model = random_model()
    cfg = model.config
    prompt = encode("abc")
    session = Session(model).start(prompt, use_cache=True)
    for step in range(1, 21):
        trace = session.step()
        read = len(prompt) + step - 1  # bytes fed to the model so far
        assert session.cache.length == read == len(session.tokens) - 1
        assert trace.position == read - 1
        for layer in trace.layers:
            assert layer.keys.shape == (cfg.n_head, read, cfg.head_dim)
            assert layer.values.shape == (cfg.n_head, read, cfg.head_dim)
            assert layer.attention.shape == (cfg.n_head, read)
            np.testing.assert_allclose(layer.attention.sum(-1), 1.0, atol=1e-6)
        per_token = 2 * cfg.n_layer * cfg.d_model * 8  # fp64
        assert trace.cache_bytes == read * per_token
        assert sum(layer.memory_bytes for layer in trace.layers) == trace.cache_bytes


def test_the_final_cache_rows_are_the_earlier_caches():
    """Rows never change once written — which is why pages may slice the final cache."""
    model = random_model()
    session = Session(model).start(encode("xy"), use_cache=True)
    early = session.step().layers[1].keys.copy()
    for _ in range(10):
        late = session.step().layers[1].keys
    np.testing.assert_array_equal(late[:, : early.shape[1]], early)


@pytest.mark.parametrize("use_cache", [False, True])
def test_positions_computed_match_the_formula(use_cache):
    model = random_model()
    prompt = encode("four")
    run = run_generation(model, prompt, 30, use_cache=use_cache)
    counts = [t.positions_computed for t in run.traces]
    if use_cache:
        assert counts == [len(prompt)] + [1] * 29
    else:
        assert counts == list(range(len(prompt), len(prompt) + 30))
    for s in range(31):
        assert sum(counts[:s]) == positions_computed_formula(len(prompt), s, use_cache)
    # From a one-byte prompt, recomputing gives exactly n(n+1)/2 for a text of n bytes.
    assert positions_computed_formula(1, 10, use_cache=False) == 10 * 11 // 2


def test_generation_stops_cleanly_at_the_window():
    model = random_model()
    prompt = prepare_prompt("z" * 100, SMALL.block_size)
    assert prompt.was_cut and len(prompt.ids) == SMALL.block_size and prompt.note()
    assert len(generate(model, prompt.ids, 50)) == 1  # only the byte after a full window
    near_full = [7] * (SMALL.block_size - 5)
    for use_cache in (True, False):
        run = run_generation(model, near_full, 50, use_cache=use_cache)
        assert len(run.traces) == max_new_tokens(len(near_full), SMALL.block_size) == 6
        assert run.stopped_at_window
    session = Session(model).start(near_full, use_cache=True)
    for _ in range(6):
        session.step()
    assert session.done
    with pytest.raises(RuntimeError, match="full"):
        session.step()
    with pytest.raises(ValueError):
        Session(model).start([1] * (SMALL.block_size + 1))


def test_sampling_is_reproducible_with_a_seed():
    model = random_model(dtype=torch.float32)
    prompt = encode("seed")
    hot = Sampling(temperature=1.5, top_k=40, seed=3)
    a = generate(model, prompt, 40, sampling=hot)
    assert a == generate(model, prompt, 40, sampling=hot)
    assert a == generate(model, prompt, 40, use_cache=False, sampling=hot)
    assert a != generate(model, prompt, 40, sampling=Sampling(temperature=1.5, top_k=40, seed=4))
    greedy = generate(model, prompt, 20)
    assert generate(model, prompt, 20, sampling=Sampling(temperature=1.0, top_k=1, seed=9)) == greedy


@needs_checkpoint
def test_checkpoint_is_small_and_matches_its_model_card(trained):
    assert CHECKPOINT.stat().st_size < 5 * 1024 * 1024
    card = CARD.read_text(encoding="utf-8")
    stated = float(re.search(r"held-out loss \| \*\*([0-9.]+) nats per byte", card).group(1))
    bits = float(re.search(r"= ([0-9.]+) bits per byte", card).group(1))
    assert math.isclose(bits, stated / math.log(2), abs_tol=1e-3)
    assert f"{trained.num_params():,}" in card
    torch.set_num_threads(1)
    _, held = split_train_heldout(load_corpus(), 0.05)
    measured = evaluate(trained, torch.tensor(list(held)), trained.config.block_size, max_windows=64)
    assert abs(measured - stated) < 2e-3
    assert measured < 2.0  # far below the 5.55 nats of a uniform guess over 256 bytes


@needs_checkpoint
def test_trained_model_writes_corpus_words(trained):
    text = bytes(generate(trained, encode("The cat "), 120)).decode("utf-8", errors="replace")
    words = set(re.findall(r"[a-z]+", text))
    vocabulary = set(re.findall(r"[a-z]+", load_corpus().decode("utf-8")))
    assert len(words & vocabulary) >= 0.6 * max(1, len(words))


def test_checkpoint_path_is_in_assets():
    assert CHECKPOINT == Path(__file__).resolve().parents[3] / "assets" / "gpt2" / "model.pt"


@pytest.mark.slow
def test_training_recipe_is_deterministic(tmp_path):
    """Same command, same weights: two short runs of the recipe give bit-identical checkpoints."""
    from core.train.recipes.gpt2 import main

    def read(out: Path) -> dict:
        assert (out.parent / "MODEL_CARD.md").exists()
        return torch.load(out, weights_only=True)["state_dict"]

    assert_same_weights_twice(main, [tmp_path / name / "model.pt" for name in ("a", "b")], read)


def test_timing_repeats_change_nothing_but_the_clock():
    model = random_model()
    prompt = encode("rep")
    for use_cache in (True, False):
        once = run_generation(model, prompt, 15, use_cache=use_cache)
        thrice = run_generation(model, prompt, 15, use_cache=use_cache, timing_repeats=3)
        assert once.new_ids == thrice.new_ids
        assert [t.cache_bytes for t in once.traces] == [t.cache_bytes for t in thrice.traces]
        for a, b in zip(once.traces, thrice.traces, strict=True):
            np.testing.assert_array_equal(a.logits, b.logits)
        if use_cache:
            np.testing.assert_array_equal(once.traces[-1].layers[0].keys, thrice.traces[-1].layers[0].keys)
