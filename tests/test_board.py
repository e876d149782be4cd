"""The board playground: capacity, overwrite, fading, baselines, the lesson helpers, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core import board as bd


def test_orthogonal_keys_up_to_d_pairs_are_recalled_exactly():
    d = 8
    for n in (1, 5, d):
        run = bd.write_stream(bd.distinct_stream(n), "linear", d=d, keys="orthogonal")
        rec = run.recall()
        assert rec.accuracy == 1.0
        np.testing.assert_allclose(rec.readback, run.values[rec.target], atol=1e-6)  # no crosstalk at all
    assert bd.recall_curve("linear", d, [1, 4, d], seeds=(0, 1), keys="orthogonal").tolist() == [
        1.0,
        1.0,
        1.0,
    ]


@pytest.mark.parametrize("keys", ["orthogonal", "random"])
def test_recall_falls_once_pairs_outnumber_rows(keys):
    d = 8
    acc = bd.recall_curve("linear", d, [d // 2, 2 * d, 4 * d], seeds=(0, 1, 2), keys=keys)
    assert acc[0] >= 0.9
    assert acc[1] < acc[0] and acc[2] < acc[1]
    assert acc[2] < 0.7


def test_softmax_attention_keeps_every_pair():
    assert bd.recall_curve("softmax", 16, [4, 16, 48], seeds=(0, 1)).tolist() == [1.0, 1.0, 1.0]
    soft, lin = (bd.recall_curve(rule, 8, [32], seeds=(0, 1, 2))[0] for rule in ("softmax", "linear"))
    assert soft > lin + 0.2  # a soft read of a full cache still beats the summed board
    run = bd.write_stream(bd.word_stream(12), "softmax", d=16)
    assert run.recall().accuracy == 1.0
    with pytest.raises(bd.BoardError, match="cache, not a board"):
        run.board()


def test_board_parts_add_up_and_ops_output_is_the_readback():
    pairs = bd.rewrite_stream(5)
    for rule, fade in [
        ("linear", None),
        ("delta", None),
        ("gated_delta", bd.Fade(0.7)),
        ("kda", bd.Fade(channels=tuple(np.linspace(0.3, 1.0, 6)))),
    ]:
        run = bd.write_stream(pairs, rule, d=6, beta=0.8, fade=fade)
        np.testing.assert_allclose(run.decayed + run.erase + run.write, run.new, atol=1e-6)
        np.testing.assert_allclose(run.old[1:], run.new[:-1])
        for t, (k, _) in enumerate(pairs, start=1):
            np.testing.assert_allclose(run.outputs[t - 1], run.read(k, t), atol=1e-6)


def test_deltanet_overwrites_where_linear_attention_blends():
    pairs = [("apple", "red"), ("sky", "blue"), ("apple", "green")]
    lin = bd.write_stream(pairs, "linear", d=4, keys="random", seed=3)
    delta = bd.write_stream(pairs, "delta", d=4, keys="random", seed=3)
    red, green = lin.value_names.index("red"), lin.value_names.index("green")
    got_lin, got_delta = lin.read("apple"), delta.read("apple")
    assert got_lin[red] > 0.9 and got_lin[green] > 0.9  # both values summed
    np.testing.assert_allclose(got_delta, delta.values[green], atol=1e-6)  # β = 1: replaced exactly
    assert delta.recall().target.tolist() == [green, lin.value_names.index("blue")]
    assert delta.recall().accuracy == 1.0


def test_half_strength_write_keeps_half_of_the_old_value():
    pairs = [("apple", "red"), ("apple", "green")]
    run = bd.write_stream(pairs, "delta", d=3, keys="orthogonal", beta=0.5)
    # first write stores 0.5·red; the second erases half of that and adds 0.5·green
    np.testing.assert_allclose(run.read("apple"), [0.25, 0.5, 0.0], atol=1e-6)


def test_gates_fade_old_keys():
    pairs = [("old", "a"), ("k1", "b"), ("k2", "c"), ("k3", "d")]
    kw = dict(d=4, keys="orthogonal")
    plain = bd.write_stream(pairs, "delta", **kw).recall().strength
    gated = bd.write_stream(pairs, "gated_delta", fade=bd.Fade(0.5), **kw).recall().strength
    np.testing.assert_allclose(plain, 1.0, atol=1e-6)
    np.testing.assert_allclose(gated, [0.125, 0.25, 0.5, 1.0], atol=1e-6)  # α^(tokens since the write)
    # KDA fades only the channels given α < 1: the "old" key sits in channel 0, which is kept
    kda = bd.write_stream(pairs, "kda", fade=bd.Fade(channels=(1.0, 0.5, 0.5, 0.5)), **kw).recall().strength
    np.testing.assert_allclose(kda, [1.0, 0.25, 0.5, 1.0], atol=1e-6)


def test_topic_switch_kda_keeps_the_fact_gated_deltanet_loses_it():
    ts = bd.topic_switch(d=8, keep_channels=2, n_a=4, n_b=4)
    assert ts.pairs[ts.switch][0] == ts.topic_b[0]
    at = (ts.switch,)
    gated = bd.write_stream(ts.pairs, "gated_delta", d=8, d_v=16, groups=ts.groups, fade=bd.Fade(0.1, at=at))
    kda = bd.write_stream(
        ts.pairs, "kda", d=8, d_v=16, groups=ts.groups, fade=bd.Fade(channels=(1.0, 1.0) + (0.1,) * 6, at=at)
    )
    delta = bd.write_stream(ts.pairs, "delta", d=8, d_v=16, groups=ts.groups)

    def strength(run, names):
        rec = run.recall()
        s = dict(zip(rec.names, rec.strength, strict=True))
        return np.mean([s[n] for n in names])

    assert strength(kda, ts.fact) == pytest.approx(1.0, abs=1e-5)
    assert strength(gated, ts.fact) == pytest.approx(0.1, abs=1e-5)
    assert strength(kda, ts.topic_a) < 0.1 < strength(delta, ts.topic_a)
    fill = bd.channel_fill(kda)  # (T + 1, d)
    assert fill.shape == (len(ts.pairs) + 1, 8)
    assert fill[-1, :2].sum() == pytest.approx(fill[1, :2].sum(), rel=1e-5)  # fact channels untouched


def test_curve_agrees_with_single_streams():
    d, n, seeds = 6, 9, (0, 1, 2)
    curve = bd.recall_curve("delta", d, [n], seeds=seeds, beta=0.7)[0]
    singles = [
        bd.write_stream(bd.distinct_stream(n), "delta", d=d, seed=s, beta=0.7).recall().accuracy
        for s in seeds
    ]
    assert curve == pytest.approx(np.mean(singles))


def test_random_keys_are_unit_length_and_deterministic():
    a = bd.KeySpace(16, "random", seed=5).vectors(["x", "y", "z"])
    b = bd.KeySpace(16, "random", seed=5).vectors(["p", "q", "r"])
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, bd.KeySpace(16, "random", seed=6).vectors(["x", "y", "z"]))


def test_regrouping_and_memory_helpers():
    rg = bd.regroup(T=5, d_k=3, d_v=2, seed=1)
    assert rg.max_difference < 1e-12
    assert (rg.left_ops, rg.right_ops) == bd.regroup_ops(5, 3, 2) == (5 * 5 * 5, 2 * 5 * 3 * 2)
    assert bd.memory_bytes(10, 4, 4) == (10 * 8 * 4, 16 * 4)
    assert bd.waits_in_line(100, 16) == (100, 7)


@pytest.mark.parametrize("rule", bd.RULES)
def test_chunk_check_matches_recurrence(rule):
    fp32 = bd.chunk_check(rule, 37, 8, 8)
    fp64 = bd.chunk_check(rule, 37, 8, 16, dtype=torch.float64)
    assert max(fp32.max_output_difference, fp32.max_state_difference) < 1e-5
    assert max(fp64.max_output_difference, fp64.max_state_difference) < 1e-10


def test_time_forms_yields_every_form():
    timings = list(bd.time_forms("delta", 16, 4, [4, 8], repeats=1))
    assert [t.label for t in timings] == ["step by step", "C = 4", "C = 8"]
    assert [t.hand_overs for t in timings] == [16, 4, 2]
    assert all(t.ms > 0 for t in timings)


def test_bad_input_gets_clear_errors():
    run = bd.write_stream(bd.word_stream(3), "linear", d=4)
    with pytest.raises(bd.BoardError, match="unknown key 'pear'"):
        run.read("pear")
    with pytest.raises(bd.BoardError, match="not been written yet"):
        run.target("snow", 2)
    with pytest.raises(bd.BoardError, match="outside the stream"):
        run.board(4)
    with pytest.raises(bd.BoardError, match="n ≥ 1"):
        bd.write_stream([], "linear", d=4)
    with pytest.raises(bd.BoardError, match="n ≥ 1"):
        bd.distinct_stream(0)
    with pytest.raises(bd.BoardError, match="n ≥ 1"):
        bd.recall_curve("linear", 4, [0])
    with pytest.raises(bd.BoardError, match="at least one key dimension"):
        bd.write_stream(bd.word_stream(2), "linear", d=0)
    with pytest.raises(bd.BoardError, match="at least one key dimension"):
        bd.recall_curve("linear", 0, [1])
    with pytest.raises(bd.BoardError, match="unknown rule"):
        bd.write_stream(bd.word_stream(2), "lstm", d=4)
    with pytest.raises(bd.BoardError, match="write strength"):
        bd.write_stream(bd.word_stream(2), "delta", d=4, beta=0.0)
    with pytest.raises(bd.BoardError, match="fade rate"):
        bd.write_stream(bd.word_stream(2), "gated_delta", d=4, fade=bd.Fade(1.5))
    with pytest.raises(bd.BoardError, match="one fade rate per key channel"):
        bd.write_stream(bd.word_stream(2), "kda", d=4, fade=bd.Fade(channels=(0.5, 0.5)))
    with pytest.raises(bd.BoardError, match="unknown key kind"):
        bd.KeySpace(4, "sparse")
    assert isinstance(bd.BoardError("x"), ValueError)
