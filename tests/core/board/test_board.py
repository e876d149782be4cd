"""The board playground: capacity, overwrite, fading, baselines, the lesson helpers, bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

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


def test_rules_come_from_the_registry_at_call_time():
    from core import mechanisms

    assert bd.rule_names() == mechanisms.rule_keys()
    twin = dataclasses.replace(mechanisms.get("delta"), key="delta_twin", label="Delta twin")
    mechanisms.register(twin)
    try:
        assert "delta_twin" in bd.rule_names()
        pairs = bd.rewrite_stream(3)
        twin_run = bd.write_stream(pairs, "delta_twin", d=4, beta=0.6)
        np.testing.assert_allclose(twin_run.new, bd.write_stream(pairs, "delta", d=4, beta=0.6).new)
        assert (
            bd.recall_curve("delta_twin", 4, [2, 6], seeds=(0,)).tolist()
            == bd.recall_curve("delta", 4, [2, 6], seeds=(0,)).tolist()
        )
    finally:
        mechanisms.unregister("delta_twin")
    with pytest.raises(bd.BoardError, match="unknown rule 'delta_twin'; choose one of linear, delta"):
        bd.write_stream(bd.word_stream(2), "delta_twin", d=4)


def test_fade_follows_the_gate_kind():
    fade = bd.Fade(0.5, at=(1,))
    assert fade.log_gates("linear", 3, 4) is None and fade.log_gates("delta", 3, 4) is None
    head = fade.log_gates("gated_delta", 3, 4)
    assert head.shape == (4,)
    np.testing.assert_allclose(head, [0.0, np.log(0.5), 0.0, 0.0], atol=1e-7)
    channel = fade.log_gates("kda", 3, 4)
    assert channel.shape == (4, 3)
    np.testing.assert_allclose(channel[1], np.log(0.5), atol=1e-7)
    np.testing.assert_array_equal(bd.Fade(channels=(1.0, 0.25)).alphas(2), [1.0, 0.25])
    np.testing.assert_array_equal(bd.Fade(0.3).alphas(3), [0.3, 0.3, 0.3])
    with pytest.raises(bd.BoardError, match="fade at token 9"):
        bd.Fade(0.5, at=(9,)).log_gates("kda", 3, 4)


def test_run_helpers_for_the_pages():
    pairs = [("apple", "red"), ("sky", "blue"), ("apple", "green")]
    lin = bd.write_stream(pairs, "linear", d=4, keys="orthogonal")
    delta = bd.write_stream(pairs, "delta", d=4, keys="orthogonal")
    assert lin.value_share("apple", "red") == pytest.approx(1.0) == lin.value_share("apple", "green")
    assert delta.value_share("apple", "red") == pytest.approx(0.0, abs=1e-6)
    assert delta.value_share("apple", "green") == pytest.approx(1.0)
    assert delta.erased(0) == 0.0 == delta.erased(1) == lin.erased(3)
    assert delta.erased(3) == pytest.approx(1.0)  # the whole of red, one entry of size 1
    assert delta.nearest_name(delta.outputs[2]) == "green"
    assert lin.nearest_name(lin.outputs[2]) is None  # red and green come back equally
    with pytest.raises(bd.BoardError, match="unknown value 'teal'"):
        lin.value_share("apple", "teal")
    rec = lin.recall()
    assert rec.checked_names() == ["apple ✗", "sky ✓"]
    assert rec.mean_strength(["apple", "sky"]) == pytest.approx(1.0)
    assert rec.mean_error(["sky"]) == pytest.approx(0.0, abs=1e-6)
    assert rec.mean_error(["apple"]) == pytest.approx(1.0)
    with pytest.raises(bd.BoardError, match="were not read back"):
        rec.mean_strength(["pear"])


def test_topic_switch_helpers():
    ts = bd.topic_switch(d=6, keep_channels=2, n_a=2, n_b=3)
    assert ts.d == 6
    assert [ts.topic_of(k) for k, _ in ts.pairs] == ["the fact"] + ["topic A"] * 2 + ["topic B"] * 3
    assert ts.channel_rates(fact=1.0, topic=0.1) == (1.0, 1.0, 0.1, 0.1, 0.1, 0.1)
    with pytest.raises(bd.BoardError, match="not in this stream"):
        ts.topic_of("pear")


def test_capacity_and_memory_helpers():
    assert bd.pair_counts(8, 17) == sorted({int(x) for x in np.linspace(1, 32, 17)})
    assert bd.pair_counts(2, 3) == [1, 4, 8]
    assert bd.last_full_recall([1, 2, 4, 8], [1.0, 0.9995, 0.9, 1.0]) == 8
    assert bd.last_full_recall([1, 2], [0.5, 0.2]) == 0
    Ts, cache, board = bd.memory_curve(1000, 4, 4, points=10)
    assert Ts[0] == 1 and Ts[-1] == 1000 and len(set(Ts)) == len(Ts)
    assert cache.tolist() == [bd.memory_bytes(int(T), 4, 4)[0] for T in Ts]
    assert set(board.tolist()) == {64}
    assert bd.break_even_tokens(128, 128) == 64
    assert bd.break_even_tokens(4, 2) == 2
