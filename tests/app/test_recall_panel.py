"""AppTest for ui/recall/: the trained-recall panel, driven through its widgets."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from core.recall import results as rr
from tests.app import driver
from ui.depth import REPLACED

TIMEOUT = 120
RESULTS = rr.RESULTS


def _results() -> dict:
    return json.loads(RESULTS.read_text())


def _table(at: AppTest, column: str):
    """The dataframe that has `column` (the panel's tables move when the curves toggle opens)."""
    tables = [d.value for d in at.dataframe if column in d.value.columns]
    assert len(tables) == 1, f"{len(tables)} tables with column {column!r}"
    return tables[0]


def _panel_app() -> None:
    from ui.recall.panel import render_trained_recall

    render_trained_recall("tr")


def _panel(depth: str = "engineer") -> AppTest:
    """The panel run once at `depth` (Engineer shows all of it; Story the plain part)."""
    app = AppTest.from_function(_panel_app, default_timeout=TIMEOUT)
    app.query_params["depth"] = depth
    app.run()
    assert not app.exception, app.exception
    return app


@pytest.fixture
def at() -> AppTest:
    return _panel()


def test_panel_shows_the_sweep_with_state_sizes(at):
    results = _results()
    specs = driver.chart_specs(at)
    accuracy = specs[0]
    names = {trace["name"] for trace in accuracy["data"] if trace.get("showlegend", True)}
    assert {"Softmax attention", "Linear attention", "DeltaNet"} <= names
    # the plotted numbers are the shipped ones: each cell's mean, its bar from worst to best seed
    pairs = [str(p) for p in results["sweep"]["pair_counts"]]
    lines = [t for t in accuracy["data"] if t.get("meta") != "key_dim"]
    plotted = sorted(tuple(t["y"]) for t in lines)
    shipped = sorted(tuple(c["accuracy"][p] for p in pairs) for c in results["cells"])
    assert plotted == shipped
    for trace in lines:
        cell = next(
            c for c in results["cells"] if tuple(c["accuracy"][p] for p in pairs) == tuple(trace["y"])
        )
        tops = [m + e for m, e in zip(trace["y"], trace["error_y"]["array"], strict=True)]
        assert tops == pytest.approx([cell["accuracy_max"][p] for p in pairs])
    stuck = [c for c in results["cells"] if c["plateau"]]
    notes = [c.value for c in at.caption if "stayed on the starting" in c.value]
    assert bool(notes) == bool(stuck)
    assert any("learning rates" in c.value and "seeds" in c.value for c in at.caption)  # the protocol, said
    table = _table(at, "fixed boards, both layers")
    assert len(table) == len(results["cells"])
    assert "fixed boards, both layers" in table.columns and "cache per token, both layers" in table.columns
    assert "short-conv windows" in table.columns  # the total is boards + cache + conv windows, shown as a sum


def test_training_curves_toggle_shows_every_chosen_run_and_the_learning_rates(at):
    results = _results()
    at.toggle(key="tr_curves").set_value(True)
    at.run()
    assert not at.exception
    for width in results["sweep"]["widths"]:
        at.radio(key="tr_curve_width").set_value(width)
        at.run()
        assert not at.exception
        chart = driver.chart_specs(at)[1]
        cells = [c for c in results["cells"] if c["d_model"] == width]
        assert len(chart["data"]) == sum(len(c["runs"]) for c in cells)  # a line per seed of each cell
        by_name = {r["name"]: r for r in results["runs"]}
        plotted = sorted(tuple(t["y"]) for t in chart["data"])
        assert plotted == sorted(tuple(by_name[n]["loss_curve"]) for c in cells for n in c["runs"])
    table = _table(at, "learning rate chosen")
    assert list(table["learning rate chosen"]) == [f"{c['lr']:g}" for c in results["cells"]]
    (protocol,) = [d for d in at.dataframe if "learning rate chosen" in d.value.columns]
    assert driver.pinned_columns(protocol) == ["model", "width"]


def test_the_training_details_start_closed():
    """Loss curves and learning rates are depth: a beginner meets the accuracy chart, not them."""
    fresh = _panel()
    assert fresh.toggle(key="tr_curves").value is False
    assert not [d for d in fresh.dataframe if "learning rate chosen" in d.value.columns]


def test_story_shows_the_chart_and_the_plain_reading_not_the_training_details():
    """Story: the accuracy chart, its plain captions and the ask panel; no seeds, learning rates, loss
    curves or memory table (those are Engineer's), and the plain reading carries the shipped numbers."""
    results = _results()
    story = _panel("story")
    assert driver.chart_specs(story), "the accuracy chart is Story's"
    words = "\n".join(m.value for m in [*story.markdown, *story.caption])
    for engineers in ("learning rate", "seed", "loss", "arXiv", "Honest note"):
        assert engineers not in words, engineers
    assert not [t for t in story.toggle if t.key == "tr_curves"]
    assert [d for d in story.dataframe if "asked" in d.value.columns], "the ask panel stays"
    assert not [d for d in story.dataframe if "fixed boards, both layers" in d.value.columns]
    pairs = max(results["sweep"]["pair_counts"])
    narrow = min(results["sweep"]["widths"])
    attention = rr.quote(results, "attention", narrow, pairs)
    assert any(f"At width {narrow} the {pairs} pairs" in c.value and f"attention {attention:.0%}" in c.value
               for c in story.caption)  # fmt: skip


def test_default_sequence_is_answered_and_the_board_is_drawn(at):
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["pairs written"] == "5"  # DEFAULT_TEXT: a:1 b:2 c:3 d:4 e:5 ? b e a
    assert metrics["answers right"].endswith("of 3")
    answers = _table(at, "asked")
    # every table of the panel keeps its row names in view while a phone scrolls it sideways
    # (the learning-rate table, behind its toggle, is checked with the toggle)
    pinned = [driver.pinned_columns(d) for d in at.dataframe]
    assert pinned.count(["asked"]) == 1 and ["model", "width"] in pinned
    assert all(p in (["model", "width"], ["asked"]) for p in pinned), pinned
    assert list(answers["asked"]) == ["b", "e", "a"] and list(answers["correct"]) == ["2", "5", "1"]
    specs = driver.chart_specs(at)
    heatmaps = [s for s in specs if s["data"] and s["data"][0]["type"] == "heatmap"]
    assert len(heatmaps) == 2  # two layers of the default (linear attention) model: two boards
    zmax = heatmaps[0]["data"][0]["zmax"]
    assert zmax > 0 and heatmaps[0]["data"][0]["zmin"] == -zmax


def test_every_model_and_width_answers_without_error(at):
    results = _results()
    for mixer in dict.fromkeys(c["mixer"] for c in results["cells"]):
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
    answers = _table(at, "asked")
    assert list(answers["model says"]) == ["2", "5", "1"]  # the trained attention model gets them right
    specs = driver.chart_specs(at)
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
    assert driver.charts(at)
    at.text_input(key="tr_text").set_value("x:5 y:6 ? y x q")
    at.run()
    assert not at.exception and not at.error
    answers = _table(at, "asked")
    assert list(answers["correct"]) == ["6", "5", "(never written)"]


def test_each_layer_keeps_its_own_fixed_colour_range_whatever_is_typed():
    """Boards and caches are coloured per layer (a model's two memories can differ tenfold), and a
    layer's range does not move with the reader's text."""
    from ui.recall.readout import read_list

    short, longer = "a:1 b:2 ? a", "a:1 b:2 c:3 d:4 e:5 f:6 ? f a"
    for checkpoint in ("attention_d16.pt", "delta_d32.pt"):
        first, second = read_list(checkpoint, short), read_list(checkpoint, longer)
        assert first.zmax == second.zmax and len(first.zmax) == len(first.result.memories)
        for chart, zmax in zip(second.memory_figures, second.zmax, strict=True):  # ready to draw (ui.charts)
            heat = chart.spec["data"][0]
            assert heat["zmax"] == pytest.approx(zmax) and heat["zmin"] == pytest.approx(-zmax)
        assert max(first.zmax) > 3 * min(first.zmax)  # why one range per model left a layer blank


def test_engineer_reads_the_task_once_in_full():
    """The task is told at both depths: Story's plain paragraph, or at Engineer depth the full one (layers,
    pair counts, widths) in its place — not both."""
    plain, full = _panel("story"), _panel("engineer")
    told = plain.session_state[REPLACED]
    assert len(told) == 1
    shown_plain = [m.value for m in plain.markdown]
    shown_full = [m.value for m in full.markdown]
    assert told <= set(shown_plain) and not told & set(shown_full)
    layers = [m for m in shown_full if "layers)" in m and "MQAR" in m]
    assert len(layers) == 1 and all(str(p) in layers[0] for p in _results()["sweep"]["pair_counts"])
