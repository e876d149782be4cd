"""ui/gpu/floors.floors_table: the operations per step beside bytes, drawn at Engineer depth under each
benchmark — an expander with the table and its sentence for a run that counted them, nothing for a run
written before the count (the committed H200 run, drawn whole at Engineer depth without it)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _fresh_floors():
    import streamlit as st

    from core.gpu.output.report import context_floor_rows
    from core.gpu.suites.context_bench import ContextResult, DepthPoint, Series
    from core.gpu.timing import kernels
    from ui.gpu.floors import floors_table

    points = [
        DepthPoint(
            d,
            50.0,
            1.0,
            [50.0],
            0,
            0,
            1,
            roofline,
            kernels_per_step=400.0,
            kernels_counted=kernels.GRAPH_NODES,
        )
        for d, roofline in ((0, 100.0), (4096, 1e5))
    ]  # bytes' floors 10 ms and 10 µs, kernel floor 1.2 ms: the deeper point is kernel-bound
    result = ContextResult(
        "tiny", "NVIDIA H200", "bfloat16", None, 1e12, 1e10, [Series("full attention", 1, 1, 1, points)]
    )
    st.session_state["rows"] = context_floor_rows(result)
    floors_table(st.session_state["rows"], points)


def test_a_run_that_counted_its_operations_shows_them_beside_its_bytes():
    at = AppTest.from_function(_fresh_floors).run()
    assert not at.exception
    (expander,) = at.expander
    assert expander.label == "Operations per step and the two floors"
    rows = at.session_state["rows"]
    assert [r["higher floor"] for r in rows] == ["bytes", "kernels"] and rows[0][
        "operations per step"
    ] == "400"
    assert rows[0]["kernel floor"] == "1.20 ms" and rows[0]["bytes' floor"] == "10.00 ms"
    (caption,) = at.caption
    assert "CUDA graph nodes" in caption.value and "higher at 1 of 2 points" in caption.value


def _committed_engineer():
    import streamlit as st

    from ui.depth import ENGINEER
    from ui.gpu.committed import committed_run_panel

    st.session_state["course_depth"] = ENGINEER
    committed_run_panel()


def test_the_committed_run_written_before_the_count_still_shows_whole_at_engineer_depth():
    at = AppTest.from_function(_committed_engineer).run(timeout=60)
    assert not at.exception
    assert "Measured by this project on a real GPU" in [s.value for s in at.subheader]
    assert not [e for e in at.expander if e.label == "Operations per step and the two floors"]
    assert any("committed with the course" in c.value for c in at.caption)  # the Engineer-only line
