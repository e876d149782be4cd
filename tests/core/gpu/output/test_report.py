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
