"""Prefill on this CPU (issue 42, item 6): the two forms agree with their references, the timing stops a
long cell early, the JSON round-trips and refuses what is not a run, and the page's sentence follows it."""

from __future__ import annotations

import json
import math

import pytest
import torch

from core.ops import gated_delta_rule
from core.prefill import forms, measure, words
from core.prefill.record import SCHEMA, PrefillRun, Row

# -- parity: the forms the bench times compute what they claim -----------------------------------


@pytest.mark.parametrize("tokens, chunk", [(1, 64), (37, 16), (130, 64), (256, 32)])
@pytest.mark.parametrize("dtype, tol", [(torch.float32, 1e-5), (torch.float64, 1e-10)])
def test_the_chunked_prefill_equals_the_token_by_token_recurrence(tokens, chunk, dtype, tol):
    x = forms.prompt_inputs(tokens, 2, 16, dtype=dtype, seed=tokens)
    o_rec, _ = gated_delta_rule.recurrent(x["q"], x["k"], x["v"], beta=x["beta"], g=x["g"])
    o = forms.chunked(x, chunk)
    assert o.shape == (1, tokens, 2, 16)
    assert (o - o_rec).abs().max() <= tol


def test_the_attention_prefill_equals_causal_softmax_written_out():
    x = forms.prompt_inputs(50, 3, 8, dtype=torch.float64, seed=1)
    q, k, v = x["q"][0], x["k"][0], x["v"][0]  # (T, H, D)
    scores = torch.einsum("thd,shd->hts", q, k) / math.sqrt(8)  # (H, T, T)
    scores = scores.masked_fill(torch.ones(50, 50, dtype=torch.bool).triu(1), float("-inf"))
    expected = torch.einsum("hts,shd->thd", scores.softmax(-1), v)  # (T, H, D)
    assert (forms.attention(x)[0] - expected).abs().max() <= 1e-10


@pytest.mark.parametrize("tokens, heads, width", [(0, 2, 16), (8, 0, 16), (8, 2, 0)])
def test_a_prompt_of_nothing_is_refused(tokens, heads, width):
    with pytest.raises(ValueError):
        forms.prompt_inputs(tokens, heads, width)


# -- timing ---------------------------------------------------------------------------------------


def test_a_cell_stops_repeating_once_it_has_taken_its_time(monkeypatch):
    wall = iter(range(0, 1000, 4))  # every run takes 4 s by the wall clock…
    cpu = iter(range(0, 1000, 1))  # …and 1 s of CPU time (the rest, other programs held the core)
    monkeypatch.setattr(measure.time, "perf_counter", lambda: next(wall))
    monkeypatch.setattr(measure.time, "process_time", lambda: next(cpu))
    assert measure.timed_ms(lambda: None, repeats=5, cell_seconds=10.0) == [(4000.0, 1000.0)] * 3  # 12 s ≥ 10
    assert len(measure.timed_ms(lambda: None, repeats=5, cell_seconds=1.0)) == 1  # one run at least
    assert len(measure.timed_ms(lambda: None, repeats=2, cell_seconds=100.0)) == 2


@pytest.mark.parametrize("repeats, seconds", [(0, 1.0), (2, 0.0), (2, math.nan)])
def test_a_cell_with_no_runs_or_no_time_is_refused(repeats, seconds):
    with pytest.raises(ValueError):
        measure.timed_ms(lambda: None, repeats, seconds)


def test_a_small_measurement_fills_every_row():
    run = measure.measure([32, 64], 1, 8, chunk_size=16, repeats=2, cell_seconds=5.0)
    assert [r.tokens for r in run.rows] == [32, 64] and run.threads == 1 and run.matmul_flops_per_s > 0
    assert all(1 <= len(r.attention_ms) == len(r.attention_cpu_ms) <= 2 for r in run.rows)
    assert run.clock == "cpu" and run.ms(run.rows[0], "chunked") == run.rows[0].median_ms("chunked", "cpu")
    with pytest.raises(ValueError):
        measure.measure([64, 32], 1, 8)


# -- the JSON --------------------------------------------------------------------------------------


def fake_run(ratios: dict[int, float], date: str = "2026-12-03", threads: int = 1) -> PrefillRun:
    """A run whose chunked form takes 10 ms of CPU time a 1K tokens and attention `ratio` times that; the
    wall clock three times as long (a shared machine)."""

    rows = tuple(
        Row(
            t,
            (30.0 * t / 1024 * ratio, 33.0 * t / 1024 * ratio),
            (30.0 * t / 1024,),
            (10.0 * t / 1024 * ratio, 11.0 * t / 1024 * ratio),
            (10.0 * t / 1024,),
        )
        for t, ratio in ratios.items()
    )
    return PrefillRun(
        date, "AMD EPYC, 2 cores, Linux", "2.13.0+cpu", threads, 2, 128, 64, "float32", 3, 10.0, 50e9, rows
    )


def test_the_json_round_trips_and_carries_the_planners_bound():
    run = fake_run({1024: 0.5, 8192: 2.0, 32768: 8.0})
    data = json.loads(run.to_json())
    assert data["schema"] == SCHEMA and PrefillRun.from_json(run.to_json()) == run
    last = data["rows"][-1]
    flops = 2 * 2 * (128 + 128) * 32768 * 32769 / 2  # the planner's count: half the pairs, scores + values
    assert last["attention_flops"] == flops and last["attention_bound_ms"] == pytest.approx(
        1e3 * flops / 50e9
    )
    assert last["chunked_flops"] == 2 * 4 * 2 * 128 * 128 * 32768
    assert data["clock"] == "cpu" and last["ratio"] == pytest.approx(
        8.0 * 1.05
    )  # median of two attention runs
    assert last["chunked_median_ms"] == pytest.approx(10.0 * 32)  # CPU time, not the wall clock's 30 × 32
    data["rows"][-1]["ratio"] = 99.0  # a derived key is recomputed, never read
    assert PrefillRun.from_dict(data).ratio(PrefillRun.from_dict(data).row(32768)) == pytest.approx(8.4)
    wall = fake_run({1024: 0.5}, threads=2)  # more threads: CPU time adds them up, so the wall clock is read
    assert wall.clock == "wall" and wall.ms(wall.rows[0], "chunked") == 30.0
    with pytest.raises(ValueError):
        wall.rows[0].median_ms("chunked", "sundial")


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d.pop("schema"),
        lambda d: d.update(schema="prefill/0"),
        lambda d: d.pop("heads"),
        lambda d: d.update(rows=[]),
        lambda d: d["rows"].reverse(),
        lambda d: d["rows"][0].update(attention_ms=[]),
        lambda d: d["rows"][0].update(chunked_ms=[-1.0]),
        lambda d: d["rows"][0].pop("attention_cpu_ms"),
        lambda d: d["rows"][0].update(tokens=0),
        lambda d: d.update(matmul_flops_per_s=0),
        lambda d: d.update(threads=0),
    ],
)
def test_what_is_not_a_run_is_refused_in_one_error(spoil):
    data = json.loads(fake_run({1024: 0.5, 8192: 2.0}).to_json())
    spoil(data)
    with pytest.raises(ValueError):
        PrefillRun.from_dict(data)
    with pytest.raises(ValueError):
        PrefillRun.from_json("{not json")


# -- the page's sentence ---------------------------------------------------------------------------


def test_the_crossover_is_where_the_chunked_rule_stays_faster():
    assert words.crossover(fake_run({1024: 0.5, 2048: 1.5, 4096: 0.9, 8192: 3.0})).tokens == 8192
    assert words.crossover(fake_run({1024: 2.0, 8192: 3.0})).tokens == 1024
    assert words.crossover(fake_run({1024: 0.5, 8192: 0.8})) is None


def test_the_sentence_follows_the_run():
    one = fake_run({1024: 0.5, 8192: 2.0, 32768: 8.0})
    text = words.prefill_sentence(one, "docs/bench-runs/2026-12-03-cpu-prefill.json")
    long = one.rows[-1]
    a, c = one.ms(long, "attention"), one.ms(long, "chunked")  # CPU time: one thread
    assert (
        f"a 32,768-token prompt in {a:,.0f} ms and {c:.3g} ms" in text and "(one thread, in CPU time;" in text
    )
    assert "from 8,192 tokens on, the chunked rule is faster — 8.4 times at 32,768 tokens —" in text
    bound_a, bound_c = (one.bound_ms(f(32768)) for f in (one.attention_flops, one.chunked_flops))
    assert (
        f"attention took {a / bound_a:.1f} times its bound, the chunked rule {c / bound_c:.1f} times" in text
    )
    assert "on AMD EPYC (2 cores, Linux) on 2026-12-03" in text
    assert f"{one.bound_ms(one.attention_flops(32768)):,.0f} ms and" in text and "50 GFLOP/s" in text
    other = words.prefill_sentence(fake_run({1024: 2.0, 32768: 4.0}), "x.json")
    assert "faster at every length measured: 4.2 times at 32,768 tokens" in other and other != text
    never = words.prefill_sentence(fake_run({1024: 0.2, 4096: 0.7}, threads=2), "x.json")
    assert (
        "Attention is still the faster one at 4,096 tokens here." in never
        and "2 threads, by the wall clock" in never
    )


def test_the_newest_readable_run_is_the_one_read(tmp_path):
    assert words.latest(tmp_path) is None and words.latest(tmp_path / "missing") is None
    (tmp_path / "2026-12-01-cpu-prefill.json").write_text(fake_run({1024: 2.0}, "2026-12-01").to_json())
    (tmp_path / "2026-12-09-cpu-prefill.json").write_text("{broken")  # newer, unreadable: skipped
    (tmp_path / "notes.json").write_text(fake_run({1024: 3.0}).to_json())  # not a dated run file
    source, run = words.latest(tmp_path)
    assert source == "docs/bench-runs/2026-12-01-cpu-prefill.json" and run.date == "2026-12-01"


def test_the_committed_run_reads_and_covers_1k_to_32k():
    found = words.latest()
    assert found is not None, "docs/bench-runs/ holds no readable *-cpu-prefill.json"
    _, run = found
    assert [r.tokens for r in run.rows] == [1024, 2048, 4096, 8192, 16384, 32768]
