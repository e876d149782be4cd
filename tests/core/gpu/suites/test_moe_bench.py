"""Dense vs MoE can time the dense twin again right after the MoE: a drift in the card's clocks or
power between the two is then seen, not taken for the MoE's doing."""

from __future__ import annotations

import dataclasses

from core.gpu import last_run
from core.gpu.moe_bench import DENSE_AGAIN, run_moe
from core.gpu.presets import PRESETS
from core.gpu.timing import Bandwidth, make_env

TINY = dataclasses.replace(PRESETS["tiny"], depth_seconds=2.0, n_steps=4, repeats=2)


def _run(retime: bool):
    env = make_env("cpu")
    try:
        return run_moe(TINY, env, Bandwidth(1e10, 1e9, "test"), retime_dense=retime)
    finally:
        env.close()


def test_the_dense_twin_is_timed_again_after_the_moe_and_kept_apart_from_the_two_rows():
    result = _run(True)
    assert [r.model for r in result.rows] == ["dense", "experts (MoE)"]
    again = result.dense_again
    assert again is not None and again.model == DENSE_AGAIN
    assert again.tokens_per_s > 0 and again.total_params == result.rows[0].total_params
    back = last_run.moe_from_dict(result.to_dict())  # what the page reads back
    assert back.dense_again == again


def test_without_the_option_the_dense_twin_runs_once():
    result = _run(False)
    assert len(result.rows) == 2 and result.dense_again is None
