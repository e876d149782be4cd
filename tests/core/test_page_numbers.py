"""The numbers the Kimi K3, Experts and GPT-2 pages draw, computed outside the figure modules:
core/plan/attention_twin.py and expert_bytes.py (from the spec), core/models/mini_k3_trace.py (from a
live mini-K3 run), core/models/gpt2_cache.py's RunSeries (from a GPT-2 run's traces)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.generation import run_generation
from core.models import mini_k3_trace
from core.models.gpt2 import GPT2, GPT2Config
from core.models.gpt2_cache import RunSeries
from core.models.mini_k3 import MiniK3, MiniK3Config
from core.plan import attention_twin, expert_bytes
from core.roofline import active_weight_bytes, weight_bytes
from core.specs import SPECS

K3 = SPECS["kimi_k3"]


@pytest.fixture(scope="module")
def mini() -> MiniK3:
    torch.set_num_threads(1)
    torch.manual_seed(0)
    return MiniK3(MiniK3Config(chunk_size=8)).eval()


def test_memory_at_contexts_splits_cache_and_boards():
    rows = attention_twin.memory_at_contexts(K3, [1024, 4096])
    twin = attention_twin.full_attention_twin(K3)
    assert twin.num_full_attention_layers == K3.num_layers and twin.num_linear_layers == 0
    for row in rows:
        assert row.hybrid_cache == row.context * K3.kv_cache_bytes_per_token()
        assert row.hybrid_state == K3.state_bytes()
        assert row.twin_cache == twin.cache_bytes(row.context)
        assert row.hybrid_total == row.hybrid_cache + row.hybrid_state
    assert rows[1].hybrid_cache == 4 * rows[0].hybrid_cache and rows[1].hybrid_state == rows[0].hybrid_state
    crossover = attention_twin.crossover_tokens(K3)
    assert crossover * K3.kv_cache_bytes_per_token() == pytest.approx(K3.state_bytes())


def test_bytes_per_token_rows_are_dense_then_experts():
    (dense_name, dense), (moe_name, moe) = expert_bytes.bytes_per_token_rows(K3)
    assert dense == weight_bytes(K3, 2.0) and moe == active_weight_bytes(K3, 2.0)
    assert dense > 10 * moe and "dense" in dense_name and K3.name in moe_name


def test_source_labels_name_the_embedding_and_each_block():
    assert mini_k3_trace.source_labels(9, 3) == [
        "embedding",
        "block 1: layers 1–3",
        "block 2: layers 4–6",
        "block 3: layers 7–9",
    ]
    assert mini_k3_trace.source_labels(4, 3)[-1] == "block 2: layers 4–4"


def test_live_run_summary_matches_the_traces(mini):
    prompt = list(b"abc")
    run = mini_k3_trace.live_run(mini, prompt, new_tokens=2)
    traces = mini.run(prompt, new_tokens=2, keep_parts=False)
    steps, layers = len(traces), mini.cfg.num_layers
    assert run.kinds == mini.kinds and run.prompt_length == 3
    assert run.tokens_out == [t.token for t in traces]
    assert run.tokens_in == prompt + [traces[2].token, traces[3].token]
    assert run.memory_bytes.shape == (steps, layers)
    assert run.attn_res.shape == (steps, 2 * layers + 1, len(run.source_labels))
    np.testing.assert_allclose(np.nansum(run.attn_res, axis=2), 1.0, atol=1e-5)
    assert run.layers_of("mla") == [3, 7, 8] and len(run.layers_of("kda")) == 6
    step_numbers, boards, cache = run.memory_totals()
    assert list(step_numbers) == list(range(1, steps + 1))
    assert (boards == mini.state_bytes()).all()
    assert list(cache) == [t * mini.cache_bytes_per_token() for t in step_numbers]
    for step in step_numbers:  # the metrics Kimi K3 shows at each step
        b, c, growth = run.memory_at(int(step))
        assert (b, c) == (int(boards[step - 1]), int(cache[step - 1]))
        assert growth == (None if step == 1 else mini.cache_bytes_per_token())
    assert [len(e) for e in run.experts[0] if e is not None] == [mini.cfg.top_k] * (layers - 1)


def test_run_series_reads_the_per_step_numbers():
    torch.manual_seed(0)
    model = GPT2(GPT2Config(block_size=32, n_layer=1, n_head=2, d_model=16)).eval()
    for use_cache in (True, False):
        run = run_generation(model, [1, 2, 3], 5, use_cache=use_cache)
        series = RunSeries(run.traces)
        assert series.steps == [1, 2, 3, 4, 5]
        assert series.text_lengths == [3, 4, 5, 6, 7]
        expected = [3, 1, 1, 1, 1] if use_cache else [3, 4, 5, 6, 7]
        assert series.positions_computed == expected
        assert series.cumulative_work == list(np.cumsum(expected))
        assert series.tokens == run.new_ids and len(series.wall_ms) == 5
        per_token = model.cache_bytes_per_token() if use_cache else 0
        assert series.cache_bytes == [n * per_token for n in series.text_lengths]


def test_text_routing_names_the_busiest_and_the_idle_experts():
    routing = mini_k3_trace.TextRouting(
        layer=1,
        expert_ids=np.array([[2, 0], [2, 1]]),
        weights=np.zeros((2, 5)),
        load=np.array([1, 1, 2, 0, 0]),
    )
    assert (routing.busiest, routing.busiest_load, routing.idle) == ([2], 2, 2)


def test_busiest_names_every_tied_expert():
    """Two experts with the same top load are both the busiest (the page once named only the first)."""
    routing = mini_k3_trace.TextRouting(
        layer=1,
        expert_ids=np.array([[4, 8], [4, 8], [1, 0]]),
        weights=np.zeros((3, 10)),
        load=np.bincount([4, 8, 4, 8, 1, 0], minlength=10),
    )
    assert (routing.busiest, routing.busiest_load) == ([4, 8], 2)


def test_example_picks_light_top_k_distinct_routed_experts():
    moe = K3.moe
    picks = expert_bytes.example_picks(moe.experts, moe.top_k)
    assert len(set(picks)) == len(picks) == moe.top_k and picks == sorted(picks)
    assert 0 <= picks[0] and picks[-1] < moe.experts
    assert picks == expert_bytes.example_picks(moe.experts, moe.top_k)  # fixed seed: the same every process
    with pytest.raises(ValueError):
        expert_bytes.example_picks(4, 5)


def _summary(rows: list[list[float]]) -> mini_k3_trace.RunSummary:
    """A one-step RunSummary whose only content is these AttnRes rows (NaN = no such source yet)."""
    z = np.array([rows], dtype=np.float32)
    n_rows, n_sources = z.shape[1:]
    return mini_k3_trace.RunSummary(
        kinds=["kda"], tokens_in=[65], tokens_out=[66], prompt_length=1,
        memory_bytes=np.zeros((1, 1), dtype=np.int64), attn_res=z,
        mix_labels=[f"mix {i}" for i in range(n_rows)], source_labels=[f"src {j}" for j in range(n_sources)],
        experts=[[None]], wall_ms=np.zeros(1, dtype=np.float32),
    )  # fmt: skip


def test_strongest_pull_is_the_row_furthest_above_an_even_split():
    nan = np.nan
    run = _summary(
        [
            [1.0, nan, nan],  # one source: weight 1 by construction, skipped
            [0.7, 0.3, nan],  # 0.7 against an even 0.5: +0.2
            [0.1, 0.6, 0.3],  # 0.6 against an even 1/3: +0.27, the strongest
            [0.5, 0.5, nan],
        ]
    )
    pull = mini_k3_trace.strongest_pull(run, 1)
    assert (pull.mix, pull.source, pull.sources) == ("mix 2", "src 1", 3)
    assert pull.weight == pytest.approx(0.6) and pull.even == pytest.approx(1 / 3) and pull.far_from_even
    even = mini_k3_trace.strongest_pull(_summary([[0.5, 0.5], [0.55, 0.45]]), 1)
    assert even.mix == "mix 1" and not even.far_from_even
    assert mini_k3_trace.strongest_pull(_summary([[1.0, nan]]), 1) is None


def test_strongest_pull_on_a_real_run_is_a_cell_of_the_heatmap(mini):
    run = mini_k3_trace.live_run(mini, list(b"abcdefgh"), new_tokens=1)
    for step in range(1, len(run.tokens_in) + 1):
        pull = mini_k3_trace.strongest_pull(run, step)
        row, col = run.mix_labels.index(pull.mix), run.source_labels.index(pull.source)
        z = run.attn_res[step - 1]
        assert z[row, col] == pytest.approx(pull.weight)
        leans = [np.nanmax(r) - 1 / np.sum(~np.isnan(r)) for r in z if np.sum(~np.isnan(r)) > 1]
        assert pull.weight - pull.even == pytest.approx(max(leans))
