"""The decode benchmarks on the CPU (tiny preset): well-formed results, roofline, spill, OOM, the lock."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import threading

import pytest
import torch

from core.gpu import bench
from core.gpu.decode.models import build
from core.gpu.device import nvml
from core.gpu.device.energy import EnergyMeter
from core.gpu.output import export
from core.gpu.presets import PRESETS
from core.gpu.serving import runner
from core.gpu.suites import context_bench, moe_bench
from core.gpu.timing import bandwidth, bench_env, decode_timer
from core.roofline import bandwidth_bound_tokens_per_s
from tests.core.gpu.fake_nvml import FakeNvml

TINY = PRESETS["tiny"]


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def env():
    return bench_env.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))


@pytest.fixture(scope="module")
def bw(env):
    return bandwidth.measure_copy_bandwidth(env, TINY.copy_bytes, repeats=2)


@pytest.fixture(scope="module")
def context(env, bw):
    return context_bench.run_context(TINY, env, bw)


def test_env_without_a_gpu_is_the_cpu(env):
    assert env.device.type == "cpu" and env.dtype == torch.float32
    assert env.gpu is None and not env.snapshot.available
    assert moe_bench.make_energy_meter(env) is None


def test_copy_bandwidth_is_measured(bw):
    assert bw.device_bytes_per_s > 1e8 and bw.link_bytes_per_s > 0
    assert "memcpy" in bw.method


def test_context_run_is_well_formed(context):
    assert [s.model for s in context.series] == ["full attention", "fixed state"]
    for s in context.series:
        assert [p.depth for p in s.points] == list(TINY.depths)
        assert s.oom_depth is None and s.spill_depth is None and not context.stopped
        for p in s.points:
            assert p.tokens_per_s > 0 and p.std_tokens_per_s >= 0
            assert len(p.samples_tokens_per_s) == TINY.repeats
            assert p.predicted_tokens_per_s > 0 and 0 < p.percent_of_roofline
            assert p.spilled_bytes == 0
    attention, state = context.series
    # the cache grows by 2 × layers × width × 4 bytes per token; the state does not grow
    assert attention.points[-1].memory_bytes == 2 * TINY.n_layers * TINY.depths[-1] * TINY.d_model * 4
    assert len({p.memory_bytes for p in state.points}) == 1
    assert attention.points[-1].predicted_tokens_per_s < attention.points[0].predicted_tokens_per_s
    assert state.points[-1].predicted_tokens_per_s == state.points[0].predicted_tokens_per_s
    blob = json.loads(export.to_json(context.to_dict()))
    assert blob["series"][0]["points"][0]["percent_of_roofline"] > 0
    csv_text = export.to_csv(context)
    assert csv_text.count("\n") == 1 + 2 * len(TINY.depths)


def test_roofline_of_a_snapshot_matches_a_hand_calculation():
    snap = nvml.probe(FakeNvml())  # RTX 3060: 2 × 7501 MHz × 192 bit / 8, PCIe 4.0 x16
    bw = bandwidth.Bandwidth(snap.peak_bandwidth_bytes_per_s, snap.pcie_bandwidth_bytes_per_s, "spec")
    active, cache = 1_600_000_000, 4 * 1024**3
    expected = 360.048e9 / (active + cache)  # ≈ 60.9 tokens/s
    assert context_bench.predicted_tokens_per_s(active, cache, 0, None, bw) == pytest.approx(expected)
    assert bandwidth_bound_tokens_per_s(active + cache, bw.device_bytes_per_s) == pytest.approx(expected)
    # under a 4 GiB budget: (4 GiB in VRAM) / 360 GB/s + (the rest) / 31.5 GB/s
    budget = 4 * 1024**3
    spilled = active + cache - budget
    by_hand = 1.0 / (budget / 360.048e9 + spilled / 31.5e9)
    assert context_bench.predicted_tokens_per_s(active, cache, 0, budget, bw) == pytest.approx(by_hand)


def test_spill_point_is_where_the_cache_exceeds_the_budget(env, bw):
    model = build("attention", TINY, "cpu", torch.float32)
    weights = model.total_params() * 4
    per_position = model.memory_bytes(1)
    stage = per_position // TINY.n_layers  # one layer's spilled rows land in a device staging block
    max_len = decode_timer.steps_room(TINY, TINY.depths[-1])
    # room for 700 cache positions and the staging block for the other max_len − 700
    budget = weights + 700 * per_position + (max_len - 700) * stage + 123
    assert context_bench.resident_positions(budget, weights, per_position, stage, max_len) == 700
    assert context_bench.resident_positions(budget, weights, per_position) == 700 + (max_len - 700) // 2
    assert context_bench.resident_positions(None, weights, per_position) is None
    result = context_bench.run_context(TINY, env, bw, budget, kinds=("attention",))
    series = result.series[0]
    assert series.spill_position == 700
    assert series.spill_depth == 1024  # first depth in (0, 256, 512, 1024, 2048) past 700 positions
    by_depth = {p.depth: p for p in series.points}
    assert by_depth[512].spilled_bytes == 0 and by_depth[1024].spilled_bytes > 0
    assert by_depth[2048].spilled_bytes == pytest.approx((2048 - 700) * per_position, abs=per_position)
    assert by_depth[1024].predicted_tokens_per_s < context_bench.predicted_tokens_per_s(
        model.active_weight_bytes(), model.memory_bytes(1024), 0, None, bw
    )


def test_streamed_cache_computes_the_same_tokens_as_a_resident_one():
    torch.manual_seed(0)
    model = build("attention", TINY, "cpu", torch.float64)
    tokens = torch.randint(0, TINY.vocab, (40,))
    model.allocate(64)
    model.fill(0)
    resident = torch.stack([model.step(t) for t in tokens])
    model.allocate(64, resident_positions=10)  # 30 of the 40 positions live in "host" memory
    model.fill(0)
    streamed = torch.stack([model.step(t) for t in tokens])
    torch.testing.assert_close(streamed, resident, rtol=1e-12, atol=1e-12)


def test_simulated_oom_ends_the_series_with_a_recorded_depth(env, bw):
    def oom_at_1024(series: str, depth: int) -> None:
        if series == "full attention" and depth >= 1024:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB (simulated)")

    result = context_bench.run_context(TINY, env, bw, oom_hook=oom_at_1024)
    attention, state = result.series
    assert attention.oom_depth == 1024 and "simulated" in attention.oom_message
    assert [p.depth for p in attention.points] == [0, 256, 512]
    assert state.oom_depth is None and len(state.points) == len(TINY.depths)
    assert "out of memory" in export.to_csv(result)


def test_other_errors_are_not_swallowed(env, bw):
    def broken(series: str, depth: int) -> None:
        raise ValueError("a real bug")

    with pytest.raises(ValueError):
        context_bench.run_context(TINY, env, bw, oom_hook=broken)


def test_stop_keeps_the_points_measured_so_far(env, bw):
    seen = []

    def progress(fraction, message):
        seen.append((fraction, message))

    result = context_bench.run_context(TINY, env, bw, progress=progress, should_stop=lambda: len(seen) >= 3)
    assert result.stopped
    assert 1 <= sum(len(s.points) for s in result.series) < 2 * len(TINY.depths)
    assert seen[-1] == (1.0, "stopped")


def test_moe_run_on_the_cpu(env, bw):
    result = moe_bench.run_moe(TINY, env, bw)
    dense, moe = result.rows
    assert (dense.model, moe.model) == ("dense", "experts (MoE)")
    router = TINY.n_layers * TINY.d_model * (TINY.moe_experts - TINY.moe_shared)
    assert moe.total_params == dense.total_params + router  # equal size, up to the router
    # awake per token: 2 shared + 2 routed of 32 experts → 4/32 of the feed-forward weights
    ffn_total = TINY.n_layers * 2 * TINY.d_model * TINY.moe_ffn_hidden
    awake = TINY.n_layers * 2 * TINY.d_model * TINY.expert_hidden * (TINY.moe_shared + TINY.moe_top_k)
    assert dense.active_params - moe.active_params == ffn_total - awake - router
    for row in result.rows:
        assert row.tokens_per_s > 0 and row.std_tokens_per_s >= 0
        assert row.avg_watts is None and row.joules_per_token is None  # no NVML on the CPU
    assert moe.predicted_tokens_per_s > dense.predicted_tokens_per_s
    assert "NVIDIA" in result.note
    assert json.loads(export.to_json(result.to_dict()))["rows"][1]["model"] == "experts (MoE)"


def test_moe_energy_per_token_with_an_injected_meter(env, bw):
    """The energy path of the benchmark, driven on the CPU by a synthetic 100 W card."""
    import time

    t0 = time.perf_counter()
    meter = EnergyMeter(lambda: 1e6 + 100_000.0 * (time.perf_counter() - t0), lambda: 100.0, interval_s=0.01)
    preset = dataclasses.replace(TINY, idle_seconds=0.05, energy_seconds=0.05)
    result = moe_bench.run_moe(preset, env, bw, meter=meter)
    assert result.idle_watts == pytest.approx(100.0, rel=0.05)
    for row in result.rows:
        assert row.energy_method == "energy counter"
        assert row.avg_watts == pytest.approx(100.0, rel=0.05)
        assert row.joules_per_token == pytest.approx(row.avg_watts * row.energy_seconds / row.energy_tokens)
        assert row.net_joules_per_token < row.joules_per_token * 0.1  # all of it was "idle" power


def test_two_concurrent_requests_one_runs_one_waits():
    release = threading.Event()
    started = threading.Event()
    results = {}

    def slow_benchmark():
        started.set()
        release.wait(10)
        return "measured"

    first = threading.Thread(target=lambda: results.setdefault("first", runner.run_exclusive(slow_benchmark)))
    first.start()
    assert started.wait(10)
    second = threading.Thread(
        target=lambda: results.setdefault("second", runner.run_exclusive(slow_benchmark))
    )
    second.start()
    second.join(10)
    assert isinstance(results["second"], runner.Busy) and "Wait" in results["second"].message
    assert runner.benchmark_running()
    release.set()
    first.join(10)
    assert results["first"] == "measured" and not runner.benchmark_running()


def test_runner_queues_a_second_job_and_reports_progress():
    bench_runner = runner.BenchRunner()
    release = threading.Event()

    def job_fn(progress, should_stop, value):
        progress(0.5, "half way")
        release.wait(10)
        return value * 2

    job = bench_runner.submit("reader-a", "test", job_fn, value=21)
    assert isinstance(job, runner.Job)
    assert bench_runner.submit("reader-b", "test", job_fn, value=1) == 1  # first in line
    assert bench_runner.job("reader-b") is None and bench_runner.position("reader-b") == 1
    release.set()
    assert job.wait(10) and job.result == 42 and job.error is None
    assert job.fraction == 0.5 and job.message == "half way"
    queued = bench_runner.job("reader-b")  # started by itself when the first run ended
    assert queued is not None and queued.wait(10) and queued.result == 2
    assert bench_runner.position("reader-b") is None and not runner.benchmark_running()


def test_runner_reports_errors_and_honours_stop():
    bench_runner = runner.BenchRunner()

    def failing(progress, should_stop):
        raise RuntimeError("boom")

    job = bench_runner.submit("r", "fail", failing)
    job.wait(10)
    assert job.done and "boom" in job.error and not runner.benchmark_running()

    def until_stopped(progress, should_stop):
        while not should_stop():
            threading.Event().wait(0.01)
        return "stopped"

    job = bench_runner.submit("r", "stop", until_stopped)
    job.stop.set()
    assert job.wait(10) and job.result == "stopped"


def _installed_version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def test_cli_writes_the_json(tmp_path, capsys):
    out = tmp_path / "results.json"
    code = bench.main(["--preset", "tiny", "--device", "cpu", "--out", str(out), "--vram-budget-gb", "0.001"])
    assert code == 0
    data = json.loads(out.read_text())
    assert set(data) >= {"settings", "versions", "device", "bandwidth", "context", "context_budget", "moe"}
    assert data["versions"]["torch"] == torch.__version__
    # which Triton the fused kernels would have compiled with, read without importing it
    assert data["versions"]["triton"] == _installed_version("triton")
    assert data["settings"]["preset"]["name"] == "tiny"
    assert data["context_budget"]["series"][0]["spill_depth"] is not None
    assert len(data["context"]["series"][1]["points"]) == len(TINY.depths)
    assert "full attention" in capsys.readouterr().out


def test_prediction_without_a_run():
    bw = bandwidth.Bandwidth(360e9, 31.5e9, "spec")
    pred = context_bench.predict_context(PRESETS["small"], bw, budget_bytes=8 * 1024**3)
    attention, state = pred["full attention"], pred["fixed state"]
    assert [d for d, _ in attention] == list(PRESETS["small"].depths)
    assert attention[-1][1] < attention[0][1] / 3  # 64K tokens × 128 KiB = 8 GiB of cache, partly spilled
    assert state[0][1] == state[-1][1]


def test_each_preset_is_described_from_the_model_it_builds():
    """Sizes on the page and in the CLI are counted, not typed: the small preset read '0.8B' while
    it builds 936M parameters (the token table and the head count too)."""
    from core.gpu.decode.models import build, preset_summary
    from core.specs import SPECS

    small = build("attention", PRESETS["small"], "meta", torch.bfloat16)
    assert preset_summary(PRESETS["small"], torch.bfloat16) == (
        f"A {small.total_params() / 1e6:.0f}M-parameter model, KV cache 128.0 KiB per token. "
        + PRESETS["small"].description
    )
    assert small.memory_bytes(1) == SPECS["llama3_8b"].kv_cache_bytes_per_token(2)  # its description says so
    assert "KV cache 8.0 KiB per token" in preset_summary(PRESETS["cpu"], torch.float32)  # fp32 on the CPU


def test_a_preset_summary_stays_english_when_a_japanese_reader_asks_first():
    """The summary is cached and kept in English (the page translates it whole): a Japanese reader's
    first call must not leave '9.36億' in it for the CLI."""
    from core.gpu.decode.models import preset_summary
    from core.i18n import use_language

    preset_summary.cache_clear()
    with use_language("ja"):
        first = preset_summary(PRESETS["small"], torch.bfloat16)
    assert first.startswith("A 936M-parameter model") and preset_summary(PRESETS["small"], torch.bfloat16) == first
