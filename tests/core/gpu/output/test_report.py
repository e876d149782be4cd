"""The context tables: eager and graphed rates side by side only when there is a graph, and the
headline table names host bytes only when something spilled."""

from __future__ import annotations

import dataclasses

import pytest

from core.gpu.presets import PRESETS
from core.gpu.suites import context_bench
from core.gpu.timing import bandwidth

TINY = PRESETS["tiny"]
pytestmark = pytest.mark.usefixtures("one_thread")


def test_eager_and_graphed_side_by_side_only_when_there_is_a_graph(env):
    from core.gpu.output import export, report

    result = context_bench.run_context(
        dataclasses.replace(TINY, depths=(0, 256)), env, bandwidth.Bandwidth(1e10, 1e9, "t"), kinds=("state",)
    )
    assert "CUDA-graph tokens/s" not in report.context_rows(result)[0]  # the CPU page is unchanged
    for p in result.series[0].points:  # as a CUDA run would record it
        p.graphed_tokens_per_s, p.timing = 2 * p.eager_tokens_per_s, "CUDA graph"
    row = report.context_rows(result)[0]
    assert row["eager tokens/s"] == report.rate(result.series[0].points[0].eager_tokens_per_s)
    assert row["CUDA-graph tokens/s"] == report.rate(result.series[0].points[0].graphed_tokens_per_s)
    assert "CUDA graph" in export.to_csv(result)
    # the page's first table keeps five columns (a phone's width); the graphed figure is its headline
    headline = report.context_headline_rows(result)[0]
    assert list(headline) == list(report.HEADLINE_COLUMNS)
    assert headline["tokens/s (mean ± std)"].startswith(report.rate(result.series[0].points[0].tokens_per_s))


def test_the_headline_table_names_host_bytes_only_when_something_spilled(env):
    from core.gpu.output import report

    result = context_bench.run_context(
        dataclasses.replace(TINY, depths=(0, 256)),
        env,
        bandwidth.Bandwidth(1e10, 1e9, "t"),
        kinds=("attention",),
    )
    assert "streamed from host" not in report.context_headline_rows(result)[0]
    result.series[0].points[-1].spilled_bytes = 3 * 2**20  # as a run past the budget records it
    rows = report.context_headline_rows(result)
    assert [r["streamed from host"] for r in rows] == ["—", "3.0 MiB"]
    assert len(rows) == len(report.context_rows(result)) == 2


def test_the_way_a_step_ran_reads_in_japanese():
    """A GPU run's note on how the fixed-state step ran (the ways it tried, one failing) in Japanese:
    the way's words translated, the error it raised quoted as it is."""
    from core.gpu.output.report import state_way_note
    from core.gpu.suites.context_bench import ContextResult, Series
    from core.i18n import use_language
    from tests.app.japanese import english_in, japanese_words

    error = "RuntimeError: no kernel image is available for execution on the device"
    for trials in ({"torch": 297.5, "triton": 401.0}, {"torch": 297.5, "triton": error}):
        way = max(trials, key=lambda w: trials[w] if isinstance(trials[w], float) else 0.0)
        series = Series("fixed state", 1, 1, 1, way=way, way_trials=trials)
        result = ContextResult("tiny", "NVIDIA H200", "bfloat16", None, 1e12, 1e10, [series])
        with use_language("en"):
            english = state_way_note(result)
        with use_language("ja"):
            shown = state_way_note(result)
        assert "PyTorch ops (a dozen kernels a layer): 297.5" in english and "297.5" in shown
        assert japanese_words(shown) and english_in(shown) == [], shown
