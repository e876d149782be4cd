"""Drive every widget of a Streamlit page under AppTest, the way a curious reader would."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

from bench.load.protocol import step_status as parse_step_status
from core.figures.describe import chart_title
from ui import live_chart
from ui.course import LESSONS, lesson
from ui.text import plain

ROOT = Path(__file__).resolve().parents[2]

READER_TEXT = "Hello 🌍 — こんにちは\tthe cat sat"


def page_path(slug: str) -> str:
    """The absolute path of a lesson's page file, by slug (what AppTest.from_file wants)."""
    return str(ROOT / lesson(slug).file)


def fresh(page: str, timeout: float = 120) -> AppTest:
    """Run a page once — a lesson slug, or a file path (absolute or from the repository root);
    fail on any exception."""
    path = page_path(page) if page in {item.slug for item in LESSONS} else str(ROOT / page)
    at = AppTest.from_file(path, default_timeout=timeout)
    at.run()
    assert_clean(at, f"first run of {page}")
    return at


def whole_app(timeout: float = 180, **query) -> AppTest:
    """The whole app (app.py's router and sidebar) opened at a link carrying `query`
    (?lang=ja, ?depth=engineer, …), run once; fail on any exception."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=timeout)
    at.query_params.update(query)
    at.run()
    assert_clean(at, f"app with {query}")
    return at


def assert_clean(at: AppTest, when: str) -> None:
    errors = [e.value for e in at.exception]
    assert not errors, f"exception after {when}: {errors}"


def small_number(shown: str) -> float:
    """A number the page wrote with core.units.format_small ('2.2 × 10⁻¹⁶', '0') back as a float."""
    return float(shown.replace(" × 10", "e").translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))


def step_status(at: AppTest) -> str:
    """The Step controls' status line: "**byte 3 of 53**", or what a page shows before its first Step."""
    found = [m.value for m in at.markdown if parse_step_status(m.value) is not None]
    assert len(found) == 1, f"one step status expected, found {found}"
    return found[0]


def click_steps(at: AppTest, times: int = 20) -> int:
    """Click every step button (key ending in '_step') `times` times; returns buttons found."""
    keys = [b.key for b in at.button if b.key and b.key.endswith("_step")]
    for key in keys:
        for i in range(times):
            at.button(key=key).click().run()
            assert_clean(at, f"step click {i + 1} on {key}")
    return len(keys)


def sweep_sliders(at: AppTest) -> int:
    """Move every slider and select_slider to its two ends (by key, since elements are re-created);
    returns how many of both kinds it found."""
    keys = [s.key for s in at.slider if s.key]
    found = len(keys)
    for key in keys:
        for end in ("min", "max"):
            if key not in {s.key for s in at.slider}:
                break  # a previous move hid this slider
            slider = at.slider(key=key)
            value = getattr(slider, end)
            if isinstance(slider.value, tuple | list):
                value = (slider.min, slider.max)
            slider.set_value(value).run()
            assert_clean(at, f"slider {key} → {end}")
    keys = [s.key for s in at.select_slider if s.key]
    for key in keys:
        for pick in (0, -1):
            if key not in {s.key for s in at.select_slider}:
                break
            widget = at.select_slider(key=key)
            choose_label(widget, widget.options[pick]).run()
            assert_clean(at, f"select_slider {key} → {pick}")
    return found + len(keys)


def type_text(at: AppTest, text: str = READER_TEXT) -> int:
    """Type the reader's text into every text input."""
    keys = [t.key for t in at.text_input if t.key]
    for key in keys:
        widget = at.text_input(key=key)
        limit = widget.max_chars or len(text)
        widget.input(text[:limit]).run()
        assert_clean(at, f"typing into {key}")
    return len(keys)


def try_selectboxes(at: AppTest) -> int:
    """Pick the last option of every selectbox."""
    keys = [s.key for s in at.selectbox if s.key]
    for key in keys:
        if key not in {s.key for s in at.selectbox}:
            continue
        box = at.selectbox(key=key)
        if box.options:
            choose_label(box, box.options[-1]).run()
            assert_clean(at, f"selectbox {key}")
    return len(keys)


def choose_label(widget, label: str):
    """Pick an option of a selectbox / select_slider by its *displayed* label.

    AppTest only sees the labels a `format_func` produced, and its own setters want
    the underlying values; the browser sends the label, so we send it the same way.
    """
    state = WidgetState()
    state.id = widget.id
    if widget.type == "select_slider":
        state.string_array_value.data[:] = [label]
    else:
        state.string_value = label
    widget.__class__ = type(
        f"Labelled{type(widget).__name__}", (type(widget),), {"_widget_state": property(lambda self: state)}
    )
    return widget


def is_chart(node) -> bool:
    """Whether an element of the page is a plotly chart (`ui.live_chart`, a components-v2 element)."""
    return getattr(node, "type", "") == "bidi_component" and node.proto.component_name == live_chart.COMPONENT


def charts(at: AppTest) -> list:
    """The plotly chart elements on the page, in page order (each `.proto.id` ends in "-key")."""
    return [element for element in at.get("bidi_component") if is_chart(element)]


def element_strings(node, attrs: tuple[str, ...]) -> list[str]:
    """The non-empty strings an element shows under `attrs`, then its options (radio, selectbox…)."""
    texts = []
    for attr in attrs:
        try:
            value = getattr(node, attr, None)
        except Exception:  # some elements compute attributes lazily from state
            continue
        if isinstance(value, str) and value.strip():
            texts.append(value)
    options = getattr(node, "options", None)
    if isinstance(options, list | tuple):
        texts += [str(o) for o in options]
    return texts


def chart_keys(at: AppTest) -> set[str]:
    """The keys of the charts on the page (Streamlit ends a chart's element id in "-key")."""
    return {element.proto.id.rsplit("-", 1)[-1] for element in charts(at)}


def chart_specs(at: AppTest) -> list[dict]:
    """The plotly figure JSON of every chart on the page, in page order."""
    return [live_chart.figure_of(element.proto) for element in charts(at)]


def layout_words(spec: dict) -> list[str]:
    """The words a figure's layout draws: the chart's title (kept in `layout.meta` once it moved
    above the chart), axis titles, tick labels and annotations (legend and hover words are per trace)."""
    layout = spec.get("layout", {})
    words = []
    for value in layout.values():
        if isinstance(value, dict):
            title = value.get("title")
            words.append(title.get("text", "") if isinstance(title, dict) else str(title or ""))
            words += [str(t) for t in value.get("ticktext", ()) or ()]
    meta = layout.get("meta")
    if isinstance(meta, dict):
        words.append(str(meta.get("title", "")))
    words += [str(a.get("text", "")) for a in layout.get("annotations", ()) or ()]
    return words


def chart_spec(at: AppTest, key: str) -> dict:
    """The plotly figure JSON of the chart drawn with `key` (Streamlit ends the element id in "-key")."""
    for element in charts(at):
        if element.proto.id.endswith(f"-{key}"):
            return live_chart.figure_of(element.proto)
    raise AssertionError(f"no plotly chart with key {key!r}")


def shown_title(at: AppTest, spec: dict) -> str:
    """The title of the chart `spec`, checked to be on the page as bold text above the chart
    (ui.charts.show_figure moves it out of the plot, where a phone would cut it)."""
    title = chart_title(spec)
    assert title and spec["layout"]["title"]["text"] == "", "the title should be text above the chart"
    assert f"**{plain(title)}**" in [m.value for m in at.markdown], f"title {title!r} not shown"
    return title


def plotly_array(value) -> np.ndarray:
    """An array from a figure spec: a plain list, or plotly's base64 typed array {dtype, bdata, shape}."""
    if isinstance(value, dict) and "bdata" in value:
        data = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        return data.reshape([int(n) for n in str(shape).split(",")]) if shape else data
    return np.asarray(value, dtype=float)


def pinned_columns(table) -> list[str]:
    """The columns of an AppTest dataframe that stay in view while it scrolls sideways (`ui.charts.data_table`)."""
    config = json.loads(table.proto.columns or "{}")
    return [name for name, options in config.items() if options.get("pinned")]


def metric_value(at: AppTest, label_start: str) -> str:
    """The value of the first metric whose label starts with `label_start`."""
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric starting with {label_start!r}: {[m.label for m in at.metric]}")


def leave_no_gpu_run_behind() -> None:
    """After a GPU-page test: no benchmark, place in line, telemetry viewer or lost GPU leaks into
    the next test (runs are stopped and waited for)."""
    from core.gpu.device import telemetry
    from core.gpu.device.health import HEALTH
    from core.gpu.serving import runner

    runner.RUNNER._line.clear()
    telemetry.HUB.stop()
    HEALTH.reset()
    for owner in list(runner.RUNNER._jobs):
        job = runner.RUNNER.job(owner)
        if job is not None:
            job.stop.set()
            job.wait(60)
        runner.RUNNER.forget(owner)
    assert not runner.benchmark_running()


def planner_selects() -> tuple[tuple[str, tuple], ...]:
    """The planner's select boxes and every option of each (card, weights, cache, layout, state), by key:
    the English sweep and the Japanese walk both go through all of them."""
    from core.plan import CACHE_FORMATS, CARDS, STATE_FORMATS, WEIGHT_FORMATS
    from core.plan.memory import LAYOUTS

    return (
        ("plan_card", tuple(CARDS)),
        ("plan_weights", tuple(WEIGHT_FORMATS)),
        ("plan_cache", tuple(CACHE_FORMATS)),
        ("plan_layout", tuple(LAYOUTS)),
        ("plan_state", tuple(STATE_FORMATS)),
    )
