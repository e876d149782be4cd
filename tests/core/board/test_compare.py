"""One number for one thing: recall over the shared draws, where a curve first loses pairs, where the
forgetting boards part, and why softmax attention misses keys."""

from __future__ import annotations

import numpy as np
import pytest

from core import board as bd


@pytest.mark.parametrize("rule", ["linear", "softmax", "delta"])
@pytest.mark.parametrize("keys", ["random", "orthogonal"])
def test_recall_over_draws_is_the_curve_point_and_draw_one_is_the_pictured_run(rule, keys):
    draws = bd.recall_over_draws(rule, 8, 12, keys=keys)
    assert draws.seeds == bd.DRAWS
    assert draws.mean == pytest.approx(bd.recall_curve(rule, 8, [12], bd.DRAWS, keys=keys)[0])
    pictured = bd.write_stream(bd.word_stream(12), rule, d=8, keys=keys).recall().accuracy
    assert draws.first == pictured


def test_draws_differ_so_one_draw_is_not_the_average():
    draws = bd.recall_over_draws("linear", 8, 12)
    assert len(set(draws.per_draw)) > 1  # the pages must say which of the two they show
    assert draws.first != pytest.approx(draws.mean)


def test_first_loss_reads_the_curve():
    loss = bd.first_loss([1, 2, 4, 6], [1.0, 1.0, 0.75, 0.5])
    assert (loss.last_full, loss.first_short, loss.at_first_short) == (2, 4, 0.75)
    never = bd.first_loss([1, 2], [1.0, 1.0])
    assert (never.last_full, never.first_short) == (2, None)
    at_once = bd.first_loss([1, 2], [0.5, 0.25])
    assert (at_once.last_full, at_once.first_short) == (0, 1)


def test_at_d_8_random_keys_hold_as_long_as_orthogonal_ones_then_fall_faster():
    """What the collisions curve shows (the sentence the page prints is built from this)."""
    ns = bd.pair_counts(8, 17)
    ortho = bd.first_loss(ns, bd.recall_curve("linear", 8, ns, bd.DRAWS, keys="orthogonal"))
    rand = bd.first_loss(ns, bd.recall_curve("linear", 8, ns, bd.DRAWS, keys="random"))
    assert rand.first_short == ortho.first_short > 8
    assert rand.at_first_short < ortho.at_first_short


def forgetting_runs(keys: str) -> tuple[bd.TopicSwitch, dict[str, bd.BoardRun]]:
    ts = bd.topic_switch(8, 2, 4, 4)
    at = (ts.switch,)
    fades = {
        "delta": None,
        "gated_delta": bd.Fade(rate=0.1, at=at),
        "kda": bd.Fade(channels=ts.channel_rates(fact=1.0, topic=0.1), at=at),
    }
    runs = {
        rule: bd.write_stream(ts.pairs, rule, d=8, d_v=16, keys=keys, groups=ts.groups, fade=fade)
        for rule, fade in fades.items()
    }
    return ts, runs


@pytest.mark.parametrize("keys", ["random", "orthogonal"])
def test_the_forgetting_boards_part_at_the_switch(keys):
    ts, runs = forgetting_runs(keys)
    for t in range(1, ts.switch + 1):  # before the switch token nothing fades: one board three times
        assert max(bd.board_gaps(runs, t).values()) < 1e-6
    t = bd.most_different_step(runs, first=ts.switch + 1)
    assert ts.switch + 1 <= t <= len(ts.pairs)
    gaps = bd.board_gaps(runs, t)
    assert len(gaps) == 3 and min(gaps.values()) > 0.5  # every board differs from every other
    spreads = [min(bd.board_gaps(runs, s).values()) for s in range(ts.switch + 1, len(ts.pairs) + 1)]
    assert min(gaps.values()) == pytest.approx(max(spreads))


def test_most_different_step_checks_its_input():
    _, runs = forgetting_runs("random")
    with pytest.raises(bd.BoardError):
        bd.most_different_step({"delta": runs["delta"]})
    with pytest.raises(bd.BoardError):
        bd.most_different_step(runs, first=0)


def test_softmax_misses_come_from_near_twins():
    run = bd.write_stream(bd.word_stream(12), "softmax", d=8, keys="random")
    misses = bd.softmax_misses(run)
    rec = run.recall()
    assert misses.missed == [n for n, ok in zip(rec.names, rec.correct, strict=True) if not ok]
    assert misses.missed, "this draw misses keys (the page explains them)"
    low, high = misses.own_weight_range
    assert 0 < low <= high < 1  # no key gets all the weight, even on its own pair
    overlaps = run.keys @ run.keys.T
    typical = np.median(np.abs(overlaps[~np.eye(len(run.keys), dtype=bool)]))
    for name in misses.missed:
        twin, overlap = misses.twin[name]
        assert twin != name and overlap == pytest.approx(float(run.key(name) @ run.key(twin)), abs=1e-6)
        assert overlap > typical  # the twin is closer than most pairs of keys
    with pytest.raises(bd.BoardError):
        bd.softmax_misses(bd.write_stream(bd.word_stream(4), "linear", d=8))


def test_join_names():
    assert bd.join_names([]) == ""
    assert bd.join_names(["a"]) == "a"
    assert bd.join_names(["a", "b", "c"]) == "a, b and c"
