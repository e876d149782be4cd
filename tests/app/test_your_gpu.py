"""Your GPU under AppTest, with NVML faked (no GPU here or on CI).

Story (the default depth) shows one button, the reader's worked example and the committed run as two
pictures; every other control, chart and table is Engineer's, so the tests of those open the page at
Engineer depth (`page()`), and the tests of what Story shows open it at Story depth (`page(STORY)`)."""

from __future__ import annotations

import dataclasses
import json
import threading

import pytest
import torch
from streamlit.testing.v1 import AppTest

from core.gpu.device import nvml, telemetry
from core.gpu.output.report import HEADLINE_COLUMNS
from core.gpu.presets import PRESETS
from core.gpu.serving import jobs, last_run, runner
from core.gpu.suites.context_bench import ContextResult, DepthPoint, Series
from tests.app import driver
from tests.core.gpu.fake_nvml import CALLS, FakeNvml
from ui import course

PAGE = driver.page_path("your_gpu")


@pytest.fixture(autouse=True)
def small_and_quiet(monkeypatch):
    """A trimmed tiny preset on one thread, so a page benchmark takes a second or two."""
    tiny = PRESETS["tiny"]
    trimmed = dataclasses.replace(tiny, depths=(0, 512, 1024, 2048), repeats=2, n_steps=4, copy_bytes=1024**2)
    monkeypatch.setitem(PRESETS, "tiny", trimmed)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def quiet_runner(monkeypatch):
    """No benchmark, place in line, telemetry viewer or lost GPU may leak from one test into the next.
    Readers count as present for a minute: AppTest redraws nothing while a test waits for a run."""
    monkeypatch.setattr(runner.RUNNER, "owner_ttl_s", 60.0)
    yield
    driver.leave_no_gpu_run_behind()


def use_nvml(monkeypatch, fake):
    monkeypatch.setattr(nvml, "load_module", lambda: fake)


STORY, ENGINEER = "story", "engineer"


def page(depth: str = ENGINEER) -> AppTest:
    """The page as a link `?depth=…` opens it (Engineer unless told: most tests drive its controls)."""
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["depth"] = depth
    at.run()
    driver.assert_clean(at, f"first run at {depth} depth")
    return at


def texts(elements) -> str:
    return " ".join(str(e.value) for e in elements)


def finish(at: AppTest) -> AppTest:
    """Wait for this reader's run, then redraw. A short run may already have been collected by the
    page's own redraw after the click (then the runner has forgotten it and its result is in the session)."""
    job = runner.RUNNER.job(at.session_state["gpu_owner"])
    if job is not None:
        assert job.wait(120)
    at.run()
    driver.assert_clean(at, "after the benchmark")
    return at


def test_no_driver_says_so_and_offers_the_cpu(monkeypatch):
    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    at = page()
    assert at.title[0].value.startswith(f"{course.number('your_gpu')} · Your GPU")
    assert "No NVIDIA GPU here" in texts(at.info) and "CPU" in texts(at.info)
    assert at.selectbox(key="gpu_preset").options[0].startswith("cpu")
    spec = driver.chart_spec(at, "gpu_prediction")  # the roofline before any run
    names = [trace["name"] for trace in spec["data"]]
    assert names == ["full attention: roofline", "fixed state: roofline"]
    attention_y = spec["data"][0]["y"]
    assert attention_y[-1] < attention_y[0]
    assert not at.button(key="gpu_run_context").disabled


def test_fake_gpu_shows_the_card_and_telemetry(monkeypatch):
    use_nvml(monkeypatch, FakeNvml())
    at = page()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["GPU"] == "NVIDIA GeForce RTX 3060"
    assert metrics["Peak bandwidth"] == "360 GB/s" and metrics["Power limit"] == "170 W"
    if not torch.cuda.is_available():
        assert "without CUDA" in texts(at.warning)
    at.button(key="gpu_tel_start").click().run()
    driver.assert_clean(at, "telemetry start")
    sampler = telemetry.HUB.sampler
    assert sampler.running
    sampler.sample_now()
    at.run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Power"] == "42 W" and metrics["Temperature"] == "61 °C"
    assert metrics["Clock held back by"] == "software power cap"
    at.button(key="gpu_tel_stop").click().run()
    driver.assert_clean(at, "telemetry stop")
    assert not sampler.running


def test_every_call_unsupported_at_once_still_works(monkeypatch):
    use_nvml(monkeypatch, FakeNvml(unsupported=set(CALLS)))
    at = page()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["GPU"] == "unknown" and metrics["Peak bandwidth"] == "unknown"
    at.button(key="gpu_tel_start").click().run()
    telemetry.HUB.sampler.sample_now()
    at.run()
    driver.assert_clean(at, "telemetry with nothing supported")
    assert {m.label: m.value for m in at.metric}["Power"] == "unknown"
    at.button(key="gpu_tel_stop").click().run()


@pytest.mark.slow
@pytest.mark.parametrize("call", CALLS)
def test_each_call_unsupported_in_turn(monkeypatch, call):
    use_nvml(monkeypatch, FakeNvml(unsupported={call}))
    at = page()
    assert at.metric  # the device card is there


def test_cpu_context_run_with_simulated_oom(monkeypatch):
    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))

    def oom(series: str, depth: int) -> None:
        if series == "full attention" and depth >= 1024:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")

    monkeypatch.setattr(jobs, "OOM_HOOK", oom)
    at = page()
    at.selectbox(key="gpu_preset").select("tiny").run()
    at.button(key="gpu_run_context").click().run()
    driver.assert_clean(at, "run clicked")
    finish(at)
    result = at.session_state["gpu_context"]
    assert result.series[0].oom_depth == 1024
    assert "out of memory at depth 1,024" in texts(at.warning)
    spec = driver.chart_spec(at, "gpu_this_fig")  # drawn once, at the top of the page (no NVIDIA card)
    assert driver.shown_title(at, spec).startswith("Measured on CPU")  # above the chart, where it wraps
    names = [trace["name"] for trace in spec["data"]]
    assert "full attention: measured" in names and "full attention: out of memory" in names
    measured = next(t for t in spec["data"] if t["name"] == "fixed state: measured")
    assert len(measured["y"]) == len(PRESETS["tiny"].depths) and "array" in measured["error_y"]
    share = next(t for t in spec["data"] if t["name"] == "fixed state: % of roofline")
    roofline = next(t for t in spec["data"] if t["name"] == "fixed state: roofline")
    assert share["y"] == pytest.approx(
        [100 * m / r for m, r in zip(measured["y"], roofline["y"], strict=True)]
    )
    assert "tokens per second" in spec["layout"]["yaxis"]["title"]["text"]
    assert "roofline" in spec["layout"]["yaxis2"]["title"]["text"]
    assert "depth d (tokens in memory)" in spec["layout"]["xaxis2"]["title"]["text"]
    points = next(t.value for t in at.table if "% of roofline" in t.value.columns)
    assert "out of memory" in points["tokens/s (mean ± std)"].tolist()  # the static table keeps the OOM row
    assert list(points.columns) == list(HEADLINE_COLUMNS)  # five columns: a phone's width
    more = next(e for e in at.expander if e.label.startswith("Every figure per depth"))
    assert "ms/token" in more.label and "roofline tokens/s" in more.label
    assert "ms/token" in more.table[0].value.columns and len(more.table[0].value) == len(points)
    assert len(at.get("download_button")) == 2
    stored, note = last_run.load()  # the finished run is kept for this machine's next visit
    assert note is None and stored.context.series[0].oom_depth == 1024
    # the page keeps working: run the MoE test next, with the budget slider at its end
    budget = at.select_slider(key="gpu_budget_tiny")
    budget.set_value(budget.options[0]).run()
    at.button(key="gpu_run_moe").click().run()
    finish(at)
    moe = at.session_state["gpu_moe"]
    assert [r.model for r in moe.rows] == ["dense", "experts (MoE)"]
    heading = f"**Measured on {moe.device} at the `tiny` sizes ({moe.experts}, depth {moe.depth:,})**"
    assert heading in [m.value for m in at.markdown]  # the bars name the sizes they were measured at
    moe_spec = driver.chart_spec(at, "gpu_moe_fig")
    bars = {t["name"]: t for t in moe_spec["data"]}
    assert set(bars) == {"measured (mean ± 1 std)", "roofline (bandwidth bound)"}  # no energy panels on a CPU
    assert bars["roofline (bandwidth bound)"]["y"] == pytest.approx(
        [r.predicted_tokens_per_s for r in moe.rows]
    )
    assert all("% of roofline" in label for label in moe_spec["layout"]["xaxis"]["ticktext"])
    assert moe.rows[1].way == "gather" and moe.rows[0].way is None
    assert any("read its chosen experts through a gathered copy" in c.value for c in at.caption)


def test_spilled_run_marks_the_spill_point(monkeypatch):
    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    at = page()
    at.selectbox(key="gpu_preset").select("tiny").run()
    budget = at.select_slider(key="gpu_budget_tiny")
    assert budget.value == budget.options[-1] == "all its memory"
    budget.set_value(budget.options[0]).run()  # the smallest card
    at.button(key="gpu_run_context").click().run()
    finish(at)
    series = at.session_state["gpu_context"].series[0]
    assert series.spill_depth is not None
    assert f"position {series.spill_position:,}" in texts(at.info)
    spec = driver.chart_spec(at, "gpu_this_fig")
    assert any(shape["x0"] == series.spill_position for shape in spec["layout"]["shapes"])
    assert any("stops fitting" in note["text"] for note in spec["layout"]["annotations"])


def test_a_second_reader_waits_in_line_and_runs_next(monkeypatch):
    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    release = threading.Event()
    real = jobs.context_benchmark

    def held(**kwargs):
        release.wait(60)
        return real(**kwargs)

    monkeypatch.setattr(jobs, "context_benchmark", held)
    first, second = page(), page()
    first.selectbox(key="gpu_preset").select("tiny").run()
    first.button(key="gpu_run_context").click().run()
    driver.assert_clean(first, "first reader starts")
    assert first.get("progress")  # the first reader sees progress and a Stop button
    assert first.button(key="gpu_stop")
    second.run()
    assert "Another benchmark is running" in texts(second.warning) and "join the line" in texts(
        second.warning
    )
    second.selectbox(key="gpu_preset").select("tiny").run()
    second.button(key="gpu_run_moe").click().run()
    driver.assert_clean(second, "second reader clicks run")
    assert "You are number 1 in line" in texts(second.info)  # the waiting reader sees their place
    assert second.button(key="gpu_run_moe").disabled and second.button(key="gpu_leave_line")
    assert runner.RUNNER.job(second.session_state["gpu_owner"]) is None
    first.button(key="gpu_stop").click().run()  # the first reader changes their mind
    driver.assert_clean(first, "stop clicked")
    release.set()
    finish(first)
    stopped = first.session_state["gpu_context"]
    assert stopped.stopped and sum(len(s.points) for s in stopped.series) == 0
    assert "Stopped early" in texts(first.caption)
    finish(second)  # the second reader's run started by itself when the first one ended
    assert [r.model for r in second.session_state["gpu_moe"].rows] == ["dense", "experts (MoE)"]
    assert "in line" not in texts(second.info)


def _stored_context(device: str = "cpu (stored test run)") -> ContextResult:
    def series(model: str, slope: float) -> Series:
        points = [
            DepthPoint(d, 100.0 - slope * d, 1.0, [99.0, 101.0], 64 * d, 0, 1000 + 64 * d, 200.0 - slope * d)
            for d in (0, 512, 1024)
        ]
        return Series(model, 1000, 4000, 4000, points)

    return ContextResult(
        "tiny", device, "float32", None, 1e10, 1e9, [series("full attention", 0.05), series("fixed state", 0)]
    )


def test_a_stored_last_run_is_the_default_view(monkeypatch):
    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    last_run.save(_stored_context())
    at = page()
    shown = texts(at.info)
    stored, _ = last_run.load()
    assert "last measurement made on this machine" in shown and stored.date in shown
    assert "cpu (stored test run)" in shown and "Run again here" in shown
    assert "No measurement on this machine yet" not in texts(at.warning)
    spec = driver.chart_spec(at, "gpu_this_fig")
    assert "full attention: measured" in [t["name"] for t in spec["data"]]
    assert stored.batch is None  # a run stored before the batch sweep existed: no panel, no error
    assert not [c for c in driver.charts(at) if c.proto.id.endswith("-gpu_batch_fig")]


def test_a_stored_run_with_a_batch_sweep_shows_it_beside_the_context_curves(monkeypatch):
    from core.gpu.output.batch_words import batch_sentence
    from tests.core.gpu.output.test_batch_words import h200_like

    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    sweep = h200_like()
    last_run.save(_stored_context(), batch=sweep)
    at = page()
    assert at.session_state["gpu_batch"] == sweep
    spec = driver.chart_spec(at, "gpu_batch_fig")
    assert driver.shown_title(at, spec).startswith("Measured on NVIDIA H200 at depth 16,384")
    for series in sweep.series:
        timed = [p for p in series.points if p.fits]
        total = next(t for t in spec["data"] if t["name"] == f"{series.model}: in total")
        each = next(t for t in spec["data"] if t["name"] == f"{series.model}: per sequence")
        assert driver.plotly_array(total["x"]).tolist() == [p.batch for p in timed]
        assert driver.plotly_array(total["y"]).tolist() == pytest.approx(
            [p.tokens_per_s_total for p in timed]
        )
        assert driver.plotly_array(each["y"]).tolist() == pytest.approx(
            [p.tokens_per_s_per_sequence for p in timed]
        )
    assert batch_sentence(sweep) in [m.value for m in at.markdown]  # computed from the sweep, shown as is
    assert "Not timed: full attention at batch 64 (does not fit: room for 30" in texts(at.caption)
    assert any(m.value.startswith("##### Many conversations at once") for m in at.markdown)


def test_no_stored_run_says_there_is_no_measurement_yet(monkeypatch):
    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    at = page()
    assert "No measurement on this machine yet" in texts(at.warning)
    assert "prediction" in texts(at.warning)
    prediction = driver.chart_spec(at, "gpu_prediction")
    title = driver.shown_title(at, prediction)
    assert title.startswith("Before you measure: the roofline for the 'cpu' models")
    # a prediction for a card that is not this machine says so (issue 40)
    assert "for example, an RTX 3060 12GB" in title and title.endswith("— not this machine")


def test_a_corrupt_stored_run_is_ignored_with_a_note(monkeypatch):
    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    last_run.path().parent.mkdir(parents=True, exist_ok=True)
    last_run.path().write_text("{not json", encoding="utf-8")
    at = page()  # page() asserts no exception
    assert "Ignored the stored last measurement" in texts(at.caption)
    assert str(last_run.cache_dir()) not in texts(at.caption)  # readers never see a server path
    assert "No measurement on this machine yet" in texts(at.warning)


def test_public_mode_measures_nothing_and_gives_the_home_command(monkeypatch):
    probed = []
    monkeypatch.setattr(nvml, "load_module", lambda: probed.append(1) or FakeNvml())
    monkeypatch.setenv("COURSE_PUBLIC", "1")
    at = page()
    keys = {b.key for b in at.button}
    assert not keys & {"gpu_run_context", "gpu_run_moe", "gpu_tel_start"}  # nothing starts on the server
    assert not probed  # the server's own GPU is not even read
    assert "Nothing is measured on this shared server" in texts(at.info)
    assert at.code[0].value == "python -m core.gpu.bench --preset small --out my_gpu.json"
    spec = driver.chart_spec(at, "gpu_prediction")
    assert [t["name"] for t in spec["data"]] == ["full attention: roofline", "fixed state: roofline"]
    assert any(m.value.startswith("Sources:") for m in at.markdown)  # the published numbers are there
    budget = at.select_slider(key="gpu_budget_small")
    budget.set_value(budget.options[0]).run()
    assert "--vram-budget-gb" in at.code[0].value  # the command follows the reader's choices
    assert not runner.benchmark_running() and runner.RUNNER.job(at.session_state.get("gpu_owner", "")) is None


def test_a_reload_takes_back_control_of_ones_own_run(monkeypatch):
    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    release = threading.Event()
    real = jobs.context_benchmark
    monkeypatch.setattr(jobs, "context_benchmark", lambda **kw: (release.wait(60), real(**kw))[1])
    before = page()
    before.selectbox(key="gpu_preset").select("tiny").run()
    before.button(key="gpu_run_context").click().run()
    token = before.query_params["gpu_run"]
    token = token[0] if isinstance(token, list) else token
    assert token == before.session_state["gpu_owner"]
    reloaded = AppTest.from_file(PAGE, default_timeout=120)  # a new session, the same URL
    reloaded.query_params["depth"] = ENGINEER
    reloaded.query_params["gpu_run"] = token
    reloaded.run()
    driver.assert_clean(reloaded, "reload")
    assert reloaded.session_state["gpu_owner"] == token
    assert reloaded.get("progress") and reloaded.button(key="gpu_run_context").disabled
    reloaded.button(key="gpu_stop").click().run()  # the reloaded page controls the run
    release.set()
    finish(reloaded)
    assert reloaded.session_state["gpu_context"].stopped
    assert "gpu_run" not in reloaded.query_params  # collected: the URL forgets the run
    stranger = AppTest.from_file(PAGE, default_timeout=120)
    stranger.query_params["gpu_run"] = "0" * 32  # a token this server does not know is ignored
    stranger.run()
    assert stranger.session_state["gpu_owner"] != "0" * 32


def test_a_lost_gpu_turns_the_run_buttons_off_with_a_message(monkeypatch):
    fake = FakeNvml()
    use_nvml(monkeypatch, fake)
    at = page()
    assert not at.button(key="gpu_run_context").disabled
    fake.lose()
    at.run()
    driver.assert_clean(at, "after the GPU was lost")
    assert "GPU is lost" in texts(at.error) and "turned off" in texts(at.error)
    assert not {b.key for b in at.button} & {"gpu_run_context", "gpu_run_moe"}
    assert fake.init_count == 0  # every probe closed its handle


def test_story_says_why_its_one_button_is_off(monkeypatch):
    fake = FakeNvml()
    use_nvml(monkeypatch, fake)
    at = page(STORY)
    assert not at.button(key="gpu_measure_this").disabled and not at.error
    fake.lose()
    at.run()
    driver.assert_clean(at, "after the GPU was lost, in Story")
    assert at.button(key="gpu_measure_this").disabled
    assert "GPU is lost" in texts(at.error) and "turned off" in texts(at.error)
    assert fake.init_count == 0


def test_two_readers_watch_one_shared_sampler(monkeypatch):
    fake = FakeNvml()
    use_nvml(monkeypatch, fake)
    first, second = page(), page()
    first.button(key="gpu_tel_start").click().run()
    sampler = telemetry.HUB.sampler
    second.button(key="gpu_tel_start").click().run()
    driver.assert_clean(second, "second reader starts telemetry")
    assert telemetry.HUB.sampler is sampler and telemetry.HUB.viewers == 2 and fake.init_count == 1
    sampler.sample_now()
    second.run()
    assert {m.label: m.value for m in second.metric}["Power"] == "42 W"
    first.button(key="gpu_tel_stop").click().run()
    assert sampler.running  # the other reader still watches
    second.button(key="gpu_tel_stop").click().run()
    assert not sampler.running and fake.init_count == 0


def test_a_spill_that_would_pin_too_much_host_ram_is_explained(monkeypatch):
    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    from core.gpu.decode import spill

    monkeypatch.setattr(spill, "host_available_bytes", lambda: spill.HOST_MARGIN_BYTES + 1)
    at = page()
    at.selectbox(key="gpu_preset").select("tiny").run()
    budget = at.select_slider(key="gpu_budget_tiny")
    budget.set_value(budget.options[0]).run()
    at.button(key="gpu_run_context").click().run()
    finish(at)
    assert "were not run" in texts(at.warning) and "safely spare" in texts(at.warning)


def _committed_json() -> dict:
    """This project's committed GPU run, read here without core.gpu.output.committed_run."""
    folder = sorted(
        p for p in (driver.ROOT / "docs" / "gpu-runs").glob("20*") if (p / "bench.json").is_file()
    )[-1]
    return json.loads((folder / "bench.json").read_text(encoding="utf-8"))


def test_without_a_gpu_the_page_opens_with_this_machine_then_the_committed_h200_run(monkeypatch):
    from core.gpu.output import committed_run

    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    at = page(STORY)
    assert at.subheader[0].value == "Measure this machine"  # the first thing after the lesson's problem
    assert at.button[0].key == "gpu_measure_this" and not at.button[0].disabled
    run = committed_run.load()
    raw = _committed_json()
    depth = driver.chart_spec(at, "gpu_committed_depth_fig")  # picture 1: one measured line per model
    assert [t["name"] for t in depth["data"]] == [f"{s['model']}: measured" for s in raw["context"]["series"]]
    for series, trace in zip(raw["context"]["series"], depth["data"], strict=True):
        assert driver.plotly_array(trace["y"]).tolist() == pytest.approx(
            [p["tokens_per_s"] for p in series["points"]]
        )
    moe = driver.chart_spec(at, "gpu_committed_moe_story_fig")  # picture 2: speed and power
    speed, power = moe["data"]
    rows = raw["moe"]["rows"]
    assert driver.plotly_array(speed["y"]).tolist() == pytest.approx([r["tokens_per_s"] for r in rows])
    assert driver.plotly_array(power["y"]).tolist() == pytest.approx([r["avg_watts"] for r in rows])
    shown = [m.value for m in at.markdown]
    for sentence in (
        committed_run.depth_story_sentence(run),
        committed_run.moe_why_sentence(run),
        committed_run.moe_power_story(run),
    ):
        assert sentence in shown
    assert "300 W" in committed_run.moe_power_story(run)  # the H200's MoE figure, from the JSON
    assert "same band" not in texts(at.markdown) and "about the same speed" not in texts(at.markdown)
    # each picture has one plain caption saying what its colours mean
    captions = texts(at.caption)
    assert "blue = full attention" in captions and "orange = the MoE" in captions
    # the Engineer charts (eager lines, rooflines, energy per token) are not drawn in Story…
    story_charts = {c.proto.id.rsplit("-", 1)[-1] for c in driver.charts(at)}
    assert not story_charts & {
        "gpu_committed_context_fig",
        "gpu_committed_moe_fig",
        "gpu_committed_energy_fig",
    }
    # …and are at Engineer depth, with the sentences that carry every figure
    at = page(ENGINEER)
    spec = driver.chart_spec(at, "gpu_committed_context_fig")
    assert "measured on the NVIDIA H200 on 2026-11-30" in driver.shown_title(at, spec)
    for series in raw["context"]["series"]:
        trace = next(t for t in spec["data"] if t["name"] == f"{series['model']}: measured")
        assert driver.plotly_array(trace["y"]).tolist() == pytest.approx(
            [p["tokens_per_s"] for p in series["points"]]
        )
    energy = driver.chart_spec(at, "gpu_committed_energy_fig")
    watts = next(t for t in energy["data"] if str(t.get("hovertemplate", "")).endswith(" W<extra></extra>"))
    assert driver.plotly_array(watts["y"]).tolist() == pytest.approx([r["avg_watts"] for r in rows])
    shown = [m.value for m in at.markdown]
    assert committed_run.depth_sentence(run) in shown and committed_run.moe_power_sentence(run) in shown
    assert any(run.source in c.value for c in at.caption)  # the JSON's place, for engineers


def test_story_is_one_button_and_no_one_elses_benchmarks(monkeypatch):
    """Story: the one button, no pickers, run buttons, telemetry, tables or published numbers (issue 40)."""
    use_nvml(monkeypatch, FakeNvml())  # a card the driver reports (no CUDA here: the CPU is measured)
    at = page(STORY)
    assert [b.key for b in at.button] == ["gpu_measure_this"]
    assert not at.selectbox and not at.select_slider and not at.table and not at.metric
    assert "Sources:" not in texts(at.markdown) and "Published" not in texts(at.markdown)
    charts = {c.proto.id.rsplit("-", 1)[-1] for c in driver.charts(at)}
    assert charts == {"gpu_committed_depth_fig", "gpu_committed_moe_story_fig"}
    engineer = page(ENGINEER)  # everything is still there for engineers
    keys = {b.key for b in engineer.button}
    assert {"gpu_measure_this", "gpu_run_context", "gpu_run_moe", "gpu_tel_start"} <= keys
    assert engineer.table and engineer.metric and "Sources:" in texts(engineer.markdown)


def test_every_description_names_the_sizes_it_describes(monkeypatch):
    """The reader's MoE test (the preset picked) and the committed run's (its own preset, experts and depth)
    are different tests: each description names the one it describes (issue 40, item 8)."""
    from core.gpu.output import committed_run

    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    at = page(ENGINEER)
    run = committed_run.load()
    chosen = PRESETS[at.selectbox(key="gpu_preset").value.split()[0]]
    mine = next(m.value for m in at.markdown if "same number of parameters" in m.value)
    assert f"`{chosen.name}` sizes" in mine and f"into {chosen.moe_experts} experts" in mine
    assert f"({chosen.moe_depth} tokens)" in mine
    theirs = next(m.value for m in at.markdown if m.value.startswith("**2 · Dense against experts"))
    assert (
        f"`{run.moe.preset}` sizes" in theirs and run.moe.experts in theirs and f"{run.moe.depth:,}" in theirs
    )
    assert f"`{run.context.preset}` sizes" in next(
        m.value for m in at.markdown if m.value.startswith("**1 · ")
    )
    assert f"`{jobs.QUICK_PRESET}` sizes" in next(
        m.value for m in at.markdown if m.value.startswith("One click")
    )
    at.selectbox(key="gpu_preset").select("tiny").run()  # the description follows the reader's choice
    mine = next(m.value for m in at.markdown if "same number of parameters" in m.value)
    assert "`tiny` sizes" in mine and f"into {PRESETS['tiny'].moe_experts} experts" in mine


def test_measure_this_machine_is_one_click_to_a_curve_and_a_worked_example(monkeypatch):
    from core.gpu.output.worked_example import overhead, worked_example

    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    monkeypatch.setattr(jobs, "QUICK_PRESET", "tiny")  # the trimmed tiny sizes: a second, not a few
    at = page(STORY)  # the one button is Story's
    assert "Nothing measured on this machine yet" in texts(at.caption)
    at.button(key="gpu_measure_this").click().run()
    driver.assert_clean(at, "measure clicked")
    finish(at)
    result = at.session_state["gpu_context"]
    assert result.device.startswith("CPU") and result.preset == "tiny" and result.budget_bytes is None
    story_spec = driver.chart_spec(at, "gpu_this_story_fig")  # measured and roofline, one line each per model
    assert driver.shown_title(at, story_spec).startswith(f"Measured on {result.device}, at the 'tiny' sizes")
    assert [t["name"] for t in story_spec["data"]] == [
        f"{s.model}: {what}" for s in result.series for what in ("measured", "roofline")
    ]
    example = worked_example(result)
    shown = [m.value for m in at.markdown]
    assert example.sentence() in shown  # the worked example, in the reader's own numbers
    split = overhead(result, example)  # where the time over the ceiling goes, computed from this run
    assert split is not None and split.short_sentence() in texts(at.caption)
    deepest = max(p.depth for p in result.series[0].points if p.spilled_bytes == 0)
    assert example.depth == deepest and example.roofline_tokens_per_s == pytest.approx(
        next(p for p in result.series[0].points if p.depth == deepest).predicted_tokens_per_s
    )
    assert not [c for c in driver.charts(at) if c.proto.id.endswith("-gpu_this_fig")]  # Engineer's chart
    assert not at.table  # and Engineer's tables
    from tests.app import story

    for lang in ("en", "ja"):  # with the worked example on it, Story is still a short read
        at.query_params["lang"] = lang
        at.run()
        words = story.words(story.running_text(at.main), lang)
        assert words <= story.STORY_LIMIT, f"{lang}: {words} words after a measurement"
    at.query_params["lang"] = "en"
    at.query_params["depth"] = ENGINEER  # the same session at Engineer depth: every figure of the run
    at.run()
    driver.assert_clean(at, "Engineer depth after the run")
    spec = driver.chart_spec(at, "gpu_this_fig")
    assert driver.shown_title(at, spec).startswith(f"Measured on {result.device}")
    names = [t["name"] for t in spec["data"]]
    assert "full attention: measured" in names and "full attention: roofline" in names
    assert not [c for c in driver.charts(at) if c.proto.id.endswith("-gpu_context_fig")]  # drawn once
    assert any("at the top of the page" in c.value for c in at.caption)
    shown = [m.value for m in at.markdown]
    assert any(example.division() in m and f"{example.measured_tokens_per_s:,.1f}" in m for m in shown)
    assert example.spread_sentence() in texts(at.caption) and split.sentence() in texts(at.caption)
    table = next(t.value for t in at.table if "% of roofline" in t.value.columns)  # section 1's table
    assert "0 %" not in table["% of roofline"].tolist()  # a share far below the roofline keeps its digits
    batch = at.session_state["gpu_batch"]  # the same click measured the batch sweep beside it
    assert batch.device == result.device and batch.depth == min(
        jobs.CPU_BATCH_DEPTH, max(PRESETS["tiny"].depths)
    )
    assert [p.batch for p in batch.series[1].points] == list(jobs.CPU_BATCHES)
    batch_spec = driver.chart_spec(at, "gpu_batch_fig")
    state_total = next(t for t in batch_spec["data"] if t["name"] == f"{batch.series[1].model}: in total")
    assert driver.plotly_array(state_total["y"]).tolist() == pytest.approx(
        [p.tokens_per_s_total for p in batch.series[1].points]
    )
    from core.gpu.output.batch_words import batch_sentence

    assert batch_sentence(batch) in shown
    assert last_run.load()[0].batch == batch  # stored with the run for the next visit


def test_on_a_gpu_the_one_button_times_the_card_at_its_own_sizes(monkeypatch):
    """With CUDA, 'Measure this machine' puts the card's context benchmark in line (the CPU sizes on the
    CPU otherwise): the sizes it names are the card's."""
    from core.gpu.presets import preset_choices
    from ui.gpu import this_machine

    fake = FakeNvml()
    use_nvml(monkeypatch, fake)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    submitted = []
    monkeypatch.setattr(
        runner.RUNNER,
        "submit",
        lambda owner, label, job, **kw: submitted.append((label, job, kw)) or runner.Busy("x"),
    )
    at = page(STORY)
    card = preset_choices(True, nvml.probe().vram_total_bytes)[1]
    assert f"`{card}` sizes" in next(m.value for m in at.markdown if m.value.startswith("One click"))
    at.button(key="gpu_measure_this").click().run()
    assert submitted == [
        (this_machine.LABEL, jobs.context_benchmark, dict(preset_name=card, budget_bytes=None, device="cuda"))
    ]


def test_public_mode_shows_the_committed_run_and_measures_nothing(monkeypatch):
    monkeypatch.setenv("COURSE_PUBLIC", "1")
    at = page(STORY)
    assert not at.button  # nothing to press on a shared server: the command to run at home instead
    assert "Nothing is measured on this shared server" in texts(at.info)
    assert at.code[0].value == "python -m core.gpu.bench --preset small --out my_gpu.json"
    assert driver.chart_spec(at, "gpu_committed_depth_fig")["data"]
    at = page(ENGINEER)
    spec = driver.chart_spec(at, "gpu_committed_context_fig")
    assert "measured on the NVIDIA H200" in driver.shown_title(at, spec)
    prediction = driver.shown_title(at, driver.chart_spec(at, "gpu_prediction"))
    assert prediction.endswith("— not this machine")  # the reader's card is not known here either


def test_the_depth_and_power_notices_follow_the_committed_run(monkeypatch):
    from core.gpu.output import committed_run

    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    at = page()
    run = committed_run.load()
    questions = [m.value for m in at.markdown if m.value.startswith("**:material/psychology_alt:")]
    assert any(committed_run.depth_question(run) in q for q in questions)  # its premise is measured: 0.73×
    at.toggle(key="gpu_notice_depth_reveal").set_value(True).run()
    at.toggle(key="gpu_notice_moe_reveal").set_value(True).run()
    driver.assert_clean(at, "answers shown")
    answers = texts(at.markdown)
    assert committed_run.depth_sentence(run) in answers and committed_run.moe_power_sentence(run) in answers
    assert (
        "community report" in answers and "arXiv 2508.16700" in answers
    )  # the published figures, for engineers
    assert (
        "power draw stays in the same band" not in answers
        and "because each token finishes sooner" not in answers
    )
    story = page(STORY)  # Story asks the depth question; its answer leaves out other people's benchmarks
    story.toggle(key="gpu_notice_depth_reveal").set_value(True).run()
    answers = texts(story.markdown)
    assert committed_run.depth_sentence(run) in answers and "community report" not in answers


def test_a_curious_engineer_pokes_every_picker(monkeypatch):
    """What tests/app/test_pages.py's curious reader pokes in Story (nothing: one button), poked at Engineer
    depth: the model-size picker and the budget slider, with no exception."""
    use_nvml(monkeypatch, FakeNvml(init_error="LibraryNotFound"))
    at = page(ENGINEER)
    assert driver.try_selectboxes(at) == 1
    assert driver.sweep_sliders(at) == 1
    driver.assert_clean(at, "every picker poked")
