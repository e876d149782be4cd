"""Decode at batch B: the same weights serve B sequences, each with its own cache or state. The
batched step must compute what B single-sequence steps compute, count its bytes right, and say
how many sequences fit."""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from core.gpu.decode.traffic import trace_persistent_bytes
from core.gpu.presets import GIB, MIB, PRESETS
from core.gpu.suites import batch_bench
from core.gpu.suites.batch_bench import BatchedDecoder, max_batch, per_sequence_bytes, run_batch
from core.gpu.timing.bench_env import make_env

TINY = dataclasses.replace(PRESETS["tiny"], depth_seconds=2.0, n_steps=4, repeats=2, warmup=1)


@pytest.mark.parametrize("kind", ["attention", "state"])
def test_a_batched_step_computes_what_each_sequence_alone_computes(kind):
    # one-sequence models from the same weights and prefill give the same logits, step by step
    tokens = torch.tensor([7, 42, 200])
    torch.manual_seed(1)
    model = BatchedDecoder(kind, TINY, 3, "cpu", torch.float32)
    model.allocate(16)
    model.fill(5)
    start = [m.clone() for m in model.memory]
    steps = [model.step(tokens), model.step(tokens.flip(0))]
    for b in range(3):
        alone = BatchedDecoder(kind, TINY, 1, "cpu", torch.float32)
        alone.load_state_dict(model.state_dict())
        alone.allocate(16)
        for mine, s0 in zip(alone.memory, start, strict=True):
            mine.copy_(s0[b : b + 1])
        alone.pos = 5
        first, second = alone.step(tokens[b : b + 1]), alone.step(tokens.flip(0)[b : b + 1])
        torch.testing.assert_close(first[0], steps[0][b], rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(second[0], steps[1][b], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", ["attention", "state"])
def test_the_bytes_of_a_batched_step_are_what_it_touches(kind):
    model = BatchedDecoder(kind, TINY, 4, "cpu", torch.float32)
    model.allocate(32)
    model.fill(20)
    tensors = list(model.parameters()) + model.memory
    traced, _ = trace_persistent_bytes(lambda: model.step(torch.arange(4)), tensors)
    assert model.traffic(20).persistent == traced


def test_weights_are_read_once_for_the_whole_batch_and_memory_once_per_sequence():
    one, many = (BatchedDecoder("attention", PRESETS["large"], b, "meta", torch.bfloat16) for b in (1, 16))
    t1, t16 = one.traffic(16384), many.traffic(16384)
    assert t16.weights - t1.weights == 15 * PRESETS["large"].d_model * 2  # 15 more embedding rows
    assert t16.cache_read == 16 * t1.cache_read


def test_how_many_sequences_fit_a_141_gb_card_at_16k():
    large = PRESETS["large"]
    attention = per_sequence_bytes("attention", large, 16384, 2)
    state = per_sequence_bytes("state", large, 16384, 2)
    assert attention == 4 * GIB and state == 32 * MIB  # a full-attention sequence holds 128× a fixed state's
    weights = BatchedDecoder("attention", large, 1, "meta", torch.bfloat16).weight_bytes()
    free = 139 * GIB
    assert max_batch(free, weights, attention) == int(0.9 * free - weights) // attention < 64
    assert max_batch(free, weights, state) > 64 * 50
    assert max_batch(weights, weights, attention) == 0  # not even one beside the weights


def test_the_batch_sweep_reports_each_batch_and_the_largest_that_fits(monkeypatch):
    env = make_env("cpu")
    weights = BatchedDecoder("attention", TINY, 1, "meta", torch.float32).weight_bytes()
    per_seq = per_sequence_bytes("attention", TINY, 64 + TINY.n_steps + 1, 4)
    monkeypatch.setattr(env, "free_bytes", lambda: int((weights + 6.5 * per_seq) / batch_bench.FIT_SHARE))
    try:
        result = run_batch(TINY, env, batches=(1, 4, 16), depth=64, pair="synthetic")
    finally:
        env.close()
    attention, state = result.series
    assert attention.max_batch == 6 and state.max_batch > 16
    assert [p.fits for p in attention.points] == [True, True, False] and "room for 6" in attention.points[
        2
    ].note
    assert all(p.fits for p in state.points)
    for s in result.series:
        for p in s.points:
            if p.fits:
                assert p.tokens_per_s_total == pytest.approx(p.batch * p.tokens_per_s_per_sequence)
    json.dumps(result.to_dict())  # JSON-ready
    assert result.pair == "synthetic" and attention.planner_max_batch is None


def test_the_released_pair_is_the_default_and_sets_the_planners_figure_beside_its_own(monkeypatch):
    """The tiny preset's miniatures of Qwen3-8B and Qwen3.5-9B: the largest batch that fits, from the same
    bytes per sequence as the planner's, beside the planner's; each batch that fits timed."""
    from core.gpu.decode.pair_decoder import PairDecoder
    from core.gpu.decode.pair_shapes import PAIR_WORDS, per_sequence_bytes, planned, planner_max_batch
    from core.gpu.output.result import batch_from_dict

    env = make_env("cpu")
    models = {kind: planned(kind, batch_bench.pair_scale(TINY)) for kind in ("attention", "state")}
    weights = {k: PairDecoder(m, 1, "meta", torch.float32).weight_bytes() for k, m in models.items()}
    per_seq = {k: per_sequence_bytes(m, 64 + TINY.n_steps + 1, 4) for k, m in models.items()}
    free = int(
        (weights["state"] + 6.5 * per_seq["state"]) / batch_bench.FIT_SHARE
    )  # room for 6 hybrid sequences
    monkeypatch.setattr(env, "free_bytes", lambda: free)
    try:
        result = run_batch(TINY, env, batches=(1, 4, 16), depth=64)
    finally:
        env.close()
    assert result.pair == "released" == TINY.batch_pair
    attention, hybrid = result.series
    assert (attention.model, hybrid.model) == (PAIR_WORDS["attention"], PAIR_WORDS["state"])
    assert hybrid.max_batch == 6 and attention.max_batch == max_batch(
        free, weights["attention"], per_seq["attention"]
    )
    for s in result.series:
        assert s.per_sequence_bytes == per_seq[s.kind] and s.weight_bytes == weights[s.kind]
        assert [p.fits for p in s.points] == [True, True, False] and "room for" in s.points[2].note
        assert all(
            p.tokens_per_s_total == pytest.approx(p.batch * p.tokens_per_s_per_sequence) for p in s.points[:2]
        )
    for s in result.series:
        assert s.layers == 4 and s.released_layers in (36, 32) and s.width == 128 and s.released_width == 4096
        # the planner's figure for the same shapes in the same memory: its runtime reserve (1 GiB and more) aside,
        # the same bytes per sequence — here the reserve alone is more than this pretend machine's memory
        assert s.planner_max_batch == planner_max_batch(models[s.kind], free, 64, 4) == 0 <= s.max_batch
    assert batch_from_dict(json.loads(json.dumps(result.to_dict()))) == result  # the JSON reads back


def test_an_unknown_pair_is_refused():
    env = make_env("cpu")
    try:
        with pytest.raises(ValueError, match="unknown batch pair"):
            run_batch(TINY, env, batches=(1,), depth=16, pair="llama")
    finally:
        env.close()


@pytest.mark.parametrize("flags", [["--pair-layers", "6"], ["--pair-layers", "0"], ["--batch-pair", "llama"],
                                   ["--pair-vocab", "-1"]])  # fmt: skip
def test_the_cli_refuses_a_bad_pair_in_one_line(flags, capsys):
    from core.gpu import bench

    with pytest.raises(SystemExit) as exit_info:
        bench.parse_args([*flags, "--out", "/tmp/x.json"])
    assert exit_info.value.code == 2 and len(capsys.readouterr().err.strip().splitlines()) == 1


def test_the_cli_cuts_the_pair_down_through_the_preset():
    from core.gpu import bench

    args = bench.parse_args(
        ["--batch", "1,4", "--pair-layers", "8", "--pair-vocab", "1000", "--out", "/tmp/x.json"]
    )
    spec = bench.suite_spec(args, PRESETS["large"])
    assert (spec.preset.pair_layers, spec.preset.pair_vocab, spec.preset.batch_pair) == (8, 1000, "released")
    args = bench.parse_args(["--batch", "1", "--batch-pair", "synthetic", "--out", "/tmp/x.json"])
    assert bench.suite_spec(args, PRESETS["large"]).preset.batch_pair == "synthetic"
