"""The Your GPU page in Japanese AFTER a measurement: every view a finished run draws (the context
sweep with a simulated out-of-memory depth, a spilled cache, a spill host RAM cannot hold, a
stopped run, the MoE bars and notes, a stored last run with its batch sweep, "Measure this machine"
with its worked example, the device card of a fake NVIDIA card, the reader's own GPT-2 checkpoint
and a dense Qwen3 beside a hybrid Qwen3.5) renders with no exception and no English sentence left
on screen (tests/app/japanese.py). The set-ups are those of the English tests
(tests/app/test_your_gpu.py, test_gpu_checkpoint_page.py, test_gpu_checkpoint_qwen_page.py)."""

from __future__ import annotations

import dataclasses
import threading

import pytest
import torch
from streamlit.testing.v1 import AppTest

from core.gpu.device import nvml, telemetry
from core.gpu.presets import PRESETS
from core.gpu.serving import jobs, last_run, runner
from core.i18n import _, use_language
from tests.app import driver
from tests.app.japanese import KANA_OR_KANJI, english_left
from tests.core.gpu.fake_nvml import FakeNvml
from ui.gpu.checkpoint import TYPED

pytestmark = pytest.mark.slow

PAGE = driver.page_path("your_gpu")


@pytest.fixture(autouse=True)
def small_and_quiet(monkeypatch):
    """The trimmed tiny preset on one thread (a page benchmark takes a second or two); no run, place
    in line or telemetry viewer leaks into the next test."""
    tiny = PRESETS["tiny"]
    trimmed = dataclasses.replace(tiny, depths=(0, 512, 1024, 2048), repeats=2, n_steps=4, copy_bytes=1024**2)
    monkeypatch.setitem(PRESETS, "tiny", trimmed)
    monkeypatch.setattr(runner.RUNNER, "owner_ttl_s", 60.0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
    driver.leave_no_gpu_run_behind()


def no_gpu(monkeypatch) -> None:
    monkeypatch.setattr(nvml, "load_module", lambda: FakeNvml(init_error="LibraryNotFound"))


def page(timeout: float = 300, depth: str = "engineer") -> AppTest:
    """The page in Japanese at `depth` (Engineer unless told: every view a run draws is there)."""
    at = AppTest.from_file(PAGE, default_timeout=timeout)
    at.query_params["lang"] = "ja"
    at.query_params["depth"] = depth
    at.run()
    driver.assert_clean(at, "first run in Japanese")
    return at


def finish(at: AppTest) -> AppTest:
    """Wait for this reader's run, then redraw (as tests/app/test_your_gpu.py does)."""
    job = runner.RUNNER.job(at.session_state["gpu_owner"])
    if job is not None:
        assert job.wait(300)
    at.run()
    driver.assert_clean(at, "after the run")
    return at


def no_english(at: AppTest, when: str) -> None:
    driver.assert_clean(at, when)
    left = english_left(at)
    assert left == [], f"{when}: English left on screen: {left[:12]}"


def japanese_words(text: str) -> bool:
    return bool(KANA_OR_KANJI.search(text))


def test_context_run_with_out_of_memory_then_moe(monkeypatch):
    no_gpu(monkeypatch)

    def oom(series: str, depth: int) -> None:
        if series == "full attention" and depth >= 1024:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")

    monkeypatch.setattr(jobs, "OOM_HOOK", oom)
    at = page()
    at.selectbox(key="gpu_preset").set_value("tiny").run()
    at.button(key="gpu_run_context").click().run()
    finish(at)
    assert at.session_state["gpu_context"].series[0].oom_depth == 1024
    no_english(at, "context sweep with an out-of-memory depth")
    spec = driver.chart_spec(at, "gpu_this_fig")
    axes = [spec["layout"][axis]["title"]["text"] for axis in ("yaxis", "yaxis2", "xaxis2")]
    assert all(japanese_words(text) for text in axes), axes
    budget = at.select_slider(key="gpu_budget_tiny_ja")
    budget.set_value(budget.options[0]).run()
    at.button(key="gpu_run_moe").click().run()
    finish(at)
    assert len(at.session_state["gpu_moe"].rows) == 2
    no_english(at, "dense vs experts")
    moe = driver.chart_spec(at, "gpu_moe_fig")
    assert all(japanese_words(t["name"]) for t in moe["data"]), [t["name"] for t in moe["data"]]


def test_spilled_run_and_a_spill_host_ram_cannot_hold(monkeypatch):
    no_gpu(monkeypatch)
    at = page()
    at.selectbox(key="gpu_preset").set_value("tiny").run()
    budget = at.select_slider(key="gpu_budget_tiny_ja")
    budget.set_value(budget.options[0]).run()
    at.button(key="gpu_run_context").click().run()
    finish(at)
    assert at.session_state["gpu_context"].series[0].spill_depth is not None
    no_english(at, "a spilled cache")
    from core.gpu.decode import spill

    monkeypatch.setattr(spill, "host_available_bytes", lambda: spill.HOST_MARGIN_BYTES + 1)
    at.button(key="gpu_run_context").click().run()
    finish(at)
    assert (at.session_state["gpu_context"].series[0].oom_message or "").startswith("not run:")
    no_english(at, "a spill that would pin too much host RAM")


def test_a_stopped_run(monkeypatch):
    no_gpu(monkeypatch)
    release = threading.Event()
    real = jobs.context_benchmark
    monkeypatch.setattr(jobs, "context_benchmark", lambda **kw: (release.wait(60), real(**kw))[1])
    at = page()
    at.selectbox(key="gpu_preset").set_value("tiny").run()
    at.button(key="gpu_run_context").click().run()
    driver.assert_clean(at, "run clicked")
    at.button(key="gpu_stop").click().run()
    release.set()
    finish(at)
    assert at.session_state["gpu_context"].stopped
    no_english(at, "a run stopped early")


def test_a_stored_run_with_its_batch_sweep(monkeypatch):
    from tests.app.test_your_gpu import _stored_context
    from tests.core.gpu.output.test_batch_words import h200_like

    no_gpu(monkeypatch)
    last_run.save(_stored_context("CPU (x86_64, 2 threads)"), batch=h200_like())
    at = page()
    assert at.session_state["gpu_batch"] is not None
    no_english(at, "a stored last run with a batch sweep")
    spec = driver.chart_spec(at, "gpu_batch_fig")
    names = [t["name"] for t in spec["data"]]
    assert all(japanese_words(name) for name in names), names
    assert japanese_words(spec["layout"]["xaxis2"]["title"]["text"])


def test_a_gpu_run_stored_as_the_last_run(monkeypatch):
    """The committed H200 run stored as this machine's last run: the GPU-only views (CUDA-graph and
    eager columns, energy columns, the ways the steps ran) in Japanese, without a GPU here."""
    from core.gpu.output import committed_run

    run = committed_run.load()
    assert run is not None
    no_gpu(monkeypatch)
    last_run.save(run.context, run.moe)
    at = page()
    no_english(at, "a GPU run stored as the last run")
    tables = [t.value for t in at.table]
    assert any(
        len(t.columns) > 5 and all(japanese_words(str(c)) or "J" in str(c) for c in t.columns) for t in tables
    )


def test_measure_this_machine_and_its_worked_example(monkeypatch):
    no_gpu(monkeypatch)
    monkeypatch.setattr(jobs, "QUICK_PRESET", "tiny")
    at = page(depth="story")  # the one button is Story's
    at.button(key="gpu_measure_this").click().run()
    finish(at)
    assert at.session_state["gpu_context"].preset == "tiny" and at.session_state["gpu_batch"] is not None
    no_english(at, "measure this machine at Story depth: the curve and the worked example")
    at.query_params["depth"] = "engineer"
    at.run()
    no_english(at, "measure this machine: the curve, the worked example and the batch sweep")


def test_a_fake_nvidia_card_after_a_run(monkeypatch):
    monkeypatch.setattr(nvml, "load_module", lambda: FakeNvml())
    at = page()
    no_english(at, "the card of a fake NVIDIA GPU")
    at.button(key="gpu_tel_start").click().run()
    telemetry.HUB.sampler.sample_now()
    at.run()
    no_english(at, "telemetry of a fake NVIDIA GPU")
    at.selectbox(key="gpu_preset").set_value("tiny").run()
    at.button(key="gpu_run_context").click().run()
    finish(at)
    no_english(at, "a context run beside a fake NVIDIA card (it runs on the CPU)")
    at.button(key="gpu_tel_stop").click().run()


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    from bench.hf_tiny_gpt2 import make_checkpoint as make_gpt2

    root = tmp_path_factory.mktemp("ja_ckpt")
    made = {"gpt2": make_gpt2(root / "tiny-gpt2", n_positions=64)}
    try:
        from bench.hf_tiny_qwen3 import make_checkpoint as make_qwen3
        from bench.hf_tiny_qwen35 import make_checkpoint as make_qwen35

        made["dense"] = make_qwen3(root / "tiny-qwen3", vocab_size=320, max_position_embeddings=48)
        made["hybrid"] = make_qwen35(root / "tiny-qwen35", max_position_embeddings=48)
    except ImportError:  # transformers writes the Qwen folders; without it only GPT-2 runs
        pass
    return made


def run_checkpoint(at: AppTest) -> None:
    at.button(key="gpu_run_checkpoint").click().run()
    job = runner.RUNNER.job(at.session_state["gpu_owner"])
    assert job is not None and job.wait(300)
    at.run()
    driver.assert_clean(at, "after the checkpoint run")


def test_the_readers_own_checkpoints(monkeypatch, folders, tmp_path):
    from bench.hf_tiny_gpt2 import point_pages_at

    no_gpu(monkeypatch)
    point_pages_at(monkeypatch, folders["gpt2"], tmp_path / "hf-cache")
    with use_language("ja"):  # the picker's format_func runs here too, when AppTest reads its value
        at = page()
        at.toggle(key="gpu_ckpt_open").set_value(True).run()
        run_checkpoint(at)
        assert at.session_state["gpu_checkpoint"].points
        no_english(at, "the tiny GPT-2 checkpoint measured")
        spec = driver.chart_spec(at, "gpu_ckpt_fig")
        assert all(japanese_words(t["name"]) for t in spec["data"])
        if "hybrid" not in folders:
            pytest.skip("transformers is needed to write the tiny Qwen folders")
        driver.choose_label(at.selectbox(key="gpu_ckpt_pick"), _(TYPED)).run()
        for kind in ("dense", "hybrid"):
            at.text_input(key="gpu_ckpt_path").input(str(folders[kind])).run()
            no_english(at, f"the {kind} folder typed")
            run_checkpoint(at)
            no_english(at, f"the {kind} checkpoint measured")
        speed = driver.chart_spec(at, "gpu_ckpt_cmp_speed")
        assert all(japanese_words(t["name"]) for t in speed["data"]), [t["name"] for t in speed["data"]]
        memory = driver.chart_spec(at, "gpu_ckpt_cmp_memory")
        assert japanese_words(memory["layout"]["yaxis"]["title"]["text"])


def test_english_status_lines_of_a_run_read_in_japanese():
    """Lines a run stores in its JSON stay English there and read in Japanese on the page."""
    from core.gpu.decode.spill import check_host
    from ui.gpu.words import reader_line

    lines = (
        check_host(8 * 1024**3, 4 * 1024**3).message,
        "does not fit: room for 30 sequences at this depth",
        "No energy reading: power is read through NVML, so only on an NVIDIA GPU.",
    )
    with use_language("en"):
        assert [reader_line(line) for line in lines] == list(lines)
    with use_language("ja"):
        for line in lines:
            shown = reader_line(line)
            assert japanese_words(shown), (line, shown)


def test_the_way_a_step_ran_reads_in_japanese():
    """A GPU run's note on how the fixed-state step ran (the ways it tried, one failing) in Japanese:
    the way's words translated, the error it raised quoted as it is."""
    from core.gpu.output.report import state_way_note
    from core.gpu.suites.context_bench import ContextResult, Series
    from tests.app.japanese import english_in

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
