"""AppTest for ui/recall_panel.py: the trained-recall panel, driven through its widgets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

TIMEOUT = 120
RESULTS = Path(__file__).resolve().parents[2] / "assets" / "recall" / "results.json"


def _results() -> dict:
    return json.loads(RESULTS.read_text())


def _panel_app() -> None:
    from ui.recall_panel import render_trained_recall

    render_trained_recall("tr")


@pytest.fixture
def at() -> AppTest:
    app = AppTest.from_function(_panel_app, default_timeout=TIMEOUT)
    app.run()
    assert not app.exception, app.exception
    return app


def test_panel_shows_the_sweep_with_state_sizes(at):
    results = _results()
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    accuracy = specs[0]
    names = {trace["name"] for trace in accuracy["data"] if trace.get("showlegend", True)}
    assert {"Softmax attention", "Linear attention", "DeltaNet"} <= names
    # the plotted numbers are the shipped ones
    plotted = sorted(tuple(t["y"]) for t in accuracy["data"] if t.get("meta") != "key_dim")
    shipped = sorted(
        tuple(r["accuracy"][str(p)] for p in results["sweep"]["pair_counts"]) for r in results["runs"]
    )
    assert plotted == shipped
    stuck = [r for r in results["runs"] if r["accuracy"][str(min(results["sweep"]["pair_counts"]))] < 0.25]
    notes = [c.value for c in at.caption if "never got going" in c.value]
    assert bool(notes) == bool(stuck)
    table = at.dataframe[0].value
    assert len(table) == len(results["runs"])
    assert "fixed boards, both layers" in table.columns and "cache per token, both layers" in table.columns
    assert "short-conv windows" in table.columns  # the total is boards + cache + conv windows, shown as a sum


def test_default_sequence_is_answered_and_the_board_is_drawn(at):
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["pairs written"] == "5"  # DEFAULT_TEXT: a:1 b:2 c:3 d:4 e:5 ? b e a
    assert metrics["answers right"].endswith("of 3")
    answers = at.dataframe[1].value
    assert list(answers["asked"]) == ["b", "e", "a"] and list(answers["right answer"]) == ["2", "5", "1"]
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    heatmaps = [s for s in specs if s["data"] and s["data"][0]["type"] == "heatmap"]
    assert len(heatmaps) == 2  # two layers of the default (linear attention) model: two boards
    zmax = heatmaps[0]["data"][0]["zmax"]
    assert zmax > 0 and heatmaps[0]["data"][0]["zmin"] == -zmax


def test_every_model_and_width_answers_without_error(at):
    results = _results()
    for mixer in dict.fromkeys(r["mixer"] for r in results["runs"]):
        for width in results["sweep"]["widths"]:
            at.selectbox(key="tr_mixer").set_value(mixer)
            at.radio(key="tr_width").set_value(width)
            at.run()
            assert not at.exception, (mixer, width, at.exception)
            assert not at.error, (mixer, width, [e.value for e in at.error])
            assert at.metric[1].value.endswith("of 3")


def test_attention_model_recalls_the_default_and_shows_its_cache(at):
    at.selectbox(key="tr_mixer").set_value("attention")
    at.run()
    assert not at.exception
    answers = at.dataframe[1].value
    assert list(answers["model says"]) == ["2", "5", "1"]  # the trained attention model gets them right
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    heatmaps = [s for s in specs if s["data"] and s["data"][0]["type"] == "heatmap"]
    z = heatmaps[0]["data"][0]["z"]  # plotly ships numpy arrays as typed arrays with a shape
    rows = int(z["shape"].split(",")[0]) if isinstance(z, dict) else len(z)
    assert rows == 13  # 5 pairs (10 tokens), '?', 2 more keys read → 13 cached rows


def test_random_fill_and_slider_ends(at):
    for n in (1, 32):
        at.slider(key="tr_n_random").set_value(n)
        at.button(key="tr_fill").click()
        at.run()
        assert not at.exception
        assert at.metric[0].value == str(n)
        assert at.metric[1].value.endswith(f"of {n}")


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("a:1 b:2 b", "'?'"),
        ("a1 ? a", "not a key:value pair"),
        ("a:1 ? 😀", "not a key"),
        ("a:500 ? a", "not a value"),
        ("", "'?'"),
    ],
)
def test_malformed_input_gives_a_clear_error_and_the_panel_survives(at, text, fragment):
    at.text_input(key="tr_text").set_value(text)
    at.run()
    assert not at.exception
    assert at.error and fragment in at.error[0].value
    # the chart above is still there, and a good sequence works again
    assert at.get("plotly_chart")
    at.text_input(key="tr_text").set_value("x:5 y:6 ? y x q")
    at.run()
    assert not at.exception and not at.error
    answers = at.dataframe[1].value
    assert list(answers["right answer"]) == ["6", "5", "(never written)"]
