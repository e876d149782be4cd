"""The Experts page's power sentence is the one computed from this project's committed GPU run
(core.gpu.output.committed_run), not a typed claim ("stays in about the same band")."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.gpu.output import committed_run
from tests.app.driver import assert_clean, page_path


def test_the_experts_page_says_what_the_committed_run_measured():
    at = AppTest.from_file(page_path("experts"), default_timeout=120)
    at.query_params["depth"] = "engineer"  # the measured run is an engineer's detail
    at.run()
    assert_clean(at, "experts page")
    shown = " ".join(m.value for m in at.markdown)
    words = committed_run.moe_power_words()
    assert words != committed_run.NO_RUN and words in shown
    assert "300 W" in words and "477 W" in words  # the H200's figures, from its bench.json
    assert "same band" not in shown
