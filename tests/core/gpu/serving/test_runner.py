"""Your GPU on a shared server, without a GPU: the benchmark line, its time limit and owners who
leave; a lost GPU; NVML handles closed; one telemetry sampler for every reader; public mode."""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
import sys
import threading
import time

import pytest
import torch

from core.gpu import bench
from core.gpu.device import nvml
from core.gpu.device.health import HEALTH, GpuHealth
from core.gpu.device.telemetry import TelemetryHub
from core.gpu.presets import PRESETS
from core.gpu.serving import jobs, machine_lock, runner
from core.gpu.serving.public import home_command
from core.gpu.timing import bandwidth, bench_env
from core.public import public_mode
from tests.core.gpu.fake_nvml import FakeNvml

pytestmark = pytest.mark.usefixtures("one_thread")


class Clock:
    """A clock the test moves by hand (read from the benchmark thread too)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def healthy():
    HEALTH.reset()
    yield
    HEALTH.reset()


def until_stopped(progress, should_stop):
    """A benchmark that runs until it is told to stop."""
    while not should_stop():
        time.sleep(0.005)
    return "stopped"


def wait_for(condition, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.005)
    return condition()


# -- the line ------------------------------------------------------------------------------------


def test_waiting_readers_see_their_place_and_move_up():
    line = runner.BenchRunner()
    first = line.submit("a", "x", until_stopped)
    assert isinstance(first, runner.Job)
    assert line.submit("b", "x", until_stopped) == 1
    assert line.submit("c", "x", until_stopped) == 2
    assert line.submit("c", "y", until_stopped) == 2  # a new choice keeps one place, not two
    line.leave_line("b")
    assert line.position("c") == 1 and line.position("b") is None
    first.stop.set()
    assert first.wait(10)
    assert wait_for(lambda: line.job("c") is not None)  # c's run started by itself
    line.job("c").stop.set()
    assert line.job("c").wait(10) and not runner.benchmark_running()


def test_a_run_stops_at_the_time_limit_and_frees_the_lock():
    clock = Clock()
    line = runner.BenchRunner(max_run_s=60, owner_ttl_s=1e9, clock=clock)
    job = line.submit("a", "x", until_stopped)
    time.sleep(0.05)
    assert not job.done
    clock.now += 61
    assert job.wait(10) and job.result == "stopped"
    assert "limit" in job.stop_reason and not runner.benchmark_running()


def test_a_run_stops_when_its_reader_leaves_and_not_while_they_stay():
    clock = Clock()
    line = runner.BenchRunner(max_run_s=1e9, owner_ttl_s=20, clock=clock)
    job = line.submit("a", "x", until_stopped)
    for _ in range(3):  # the page says "still here" every half second: the run goes on
        clock.now += 15
        line.seen("a")
        time.sleep(0.03)
        assert not job.done
    clock.now += 21  # the tab was closed: nobody says it any more
    assert job.wait(10) and job.stop_reason == "its reader left the page"
    assert not runner.benchmark_running()


def test_a_waiting_reader_who_leaves_loses_their_place():
    clock = Clock()
    line = runner.BenchRunner(max_run_s=1e9, owner_ttl_s=20, clock=clock)
    first = line.submit("a", "x", until_stopped)
    assert line.submit("b", "x", until_stopped) == 1
    assert line.submit("c", "x", until_stopped) == 2
    clock.now += 15
    line.seen("a")
    line.seen("c")
    clock.now += 10  # b has not been seen for 25 s
    assert line.position("c") == 1 and line.position("b") is None
    first.stop.set()
    assert first.wait(10)
    assert wait_for(lambda: line.job("c") is not None) and line.job("b") is None
    line.job("c").stop.set()
    assert line.job("c").wait(10)


def test_a_reload_finds_its_own_run_by_its_token():
    line = runner.BenchRunner()
    job = line.submit("token-a", "x", until_stopped)
    assert line.knows("token-a") and not line.knows("token-b")
    assert line.submit("token-a", "x", until_stopped) is job  # pressing Run again: the same run
    job.stop.set()
    assert job.wait(10) and line.knows("token-a")  # finished, not yet collected: still theirs
    line.forget("token-a")
    assert not line.knows("token-a")


def test_a_failed_run_tells_the_reader_one_line():
    def broken(progress, should_stop):
        raise RuntimeError("first line\nTraceback (most recent call last): /srv/secret/path.py")

    job = runner.BenchRunner().submit("a", "x", broken)
    assert job.wait(10) and job.error == "RuntimeError: first line" and not runner.benchmark_running()


# -- a lost GPU ----------------------------------------------------------------------------------


def test_a_lost_gpu_turns_runs_off_with_a_message():
    fake = FakeNvml()
    health = GpuHealth()
    health.observe(nvml.probe(fake))
    assert health.runs_off is None
    fake.lose()
    snap = nvml.probe(fake)
    assert snap.lost and not snap.available and "GPU is lost" in snap.reason
    health.observe(snap)
    assert "stopped answering" in health.runs_off
    assert fake.init_count == 0


def test_a_gpu_lost_mid_query_is_noticed():
    fake = FakeNvml()
    gpu = nvml.open_gpu(fake)
    assert not gpu.sample().lost
    fake.lose()
    assert gpu.sample().lost and gpu.lost
    assert gpu.snapshot().lost
    gpu.close()
    assert fake.init_count == 0


def test_a_gpu_that_disappears_turns_runs_off():
    health = GpuHealth()
    health.observe(nvml.probe(FakeNvml()))
    health.observe(nvml.probe(FakeNvml(device_count=0)))
    assert "no longer listed" in health.runs_off


def test_no_gpu_at_all_is_not_a_lost_gpu():
    health = GpuHealth()
    health.observe(nvml.probe(FakeNvml(init_error="LibraryNotFound")))
    assert health.runs_off is None


def test_no_run_starts_while_the_gpu_is_lost():
    HEALTH.mark_lost("The GPU stopped answering the NVIDIA driver (GPU is lost).")
    refused = runner.BenchRunner().submit("a", "x", until_stopped)
    assert isinstance(refused, runner.Busy) and "GPU is lost" in refused.message
    assert not runner.benchmark_running()


def test_a_run_stops_when_the_gpu_is_lost():
    job = runner.BenchRunner().submit("a", "x", until_stopped)
    HEALTH.mark_lost("gone")
    assert job.wait(10) and job.stop_reason == "the GPU was lost"


# -- NVML handles are closed ----------------------------------------------------------------------


def _env_with(fake: FakeNvml) -> bench_env.BenchEnv:
    """A CPU env holding an open NVML handle, as make_env holds one on CUDA."""
    gpu = nvml.open_gpu(fake)
    return bench_env.BenchEnv(torch.device("cpu"), torch.float32, gpu.snapshot(), gpu)


@pytest.fixture
def trimmed(monkeypatch):
    trimmed = dataclasses.replace(PRESETS["tiny"], depths=(0, 256), repeats=1, n_steps=2)
    monkeypatch.setitem(PRESETS, "tiny", trimmed)


@pytest.mark.parametrize("fails", [False, True])
def test_a_page_job_closes_its_nvml_handle(monkeypatch, trimmed, fails):
    fake = FakeNvml()
    monkeypatch.setattr(bench_env, "make_env", lambda device="auto": _env_with(fake))
    if fails:
        monkeypatch.setattr(bandwidth, "measure_copy_bandwidth", lambda *a, **k: 1 / 0)
        with pytest.raises(ZeroDivisionError):
            jobs.context_benchmark("tiny")
    else:
        assert jobs.moe_benchmark("tiny").moe is not None
    assert fake.init_count == 0


def test_the_cli_closes_its_nvml_handle(monkeypatch, tmp_path):
    fake = FakeNvml()
    monkeypatch.setattr(bench, "make_env", lambda device="auto": _env_with(fake))
    args = [
        "--preset",
        "tiny",
        "--device",
        "cpu",
        "--no-moe",
        "--depths",
        "0,256",
        "--out",
        str(tmp_path / "r.json"),
    ]
    assert bench.main(args) == 0
    assert fake.init_count == 0


# -- one telemetry sampler ---------------------------------------------------------------------------


def _hub(fake: FakeNvml, **kw) -> TelemetryHub:
    return TelemetryHub(opener=lambda: nvml.open_gpu(fake), interval_s=0.01, **kw)


def _sampler_threads() -> int:
    return sum(t.name == "gpu-sampler" and t.is_alive() for t in threading.enumerate())


def test_every_reader_shares_one_sampler_and_the_last_to_leave_closes_it():
    fake = FakeNvml()
    hub = _hub(fake)
    assert hub.start("reader-a") is None and hub.start("reader-b") is None
    sampler = hub.sampler
    assert hub.viewers == 2 and _sampler_threads() == 1 and fake.init_count == 1
    assert wait_for(lambda: len(hub.samples()) >= 2)
    hub.leave("reader-a")
    assert hub.running and hub.sampler is sampler and hub.watching("reader-b")
    hub.leave("reader-b")
    assert not hub.running and fake.init_count == 0 and _sampler_threads() == 0


def test_the_sampler_stops_when_nobody_is_seen_any_more():
    fake = FakeNvml()
    clock = Clock()
    hub = _hub(fake, viewer_ttl_s=30, clock=clock)
    hub.start("reader-a")
    clock.now += 25
    hub.seen("reader-a")
    clock.now += 25
    time.sleep(0.05)
    assert hub.running  # seen 25 s ago: still watching
    clock.now += 10
    assert wait_for(lambda: not hub.running)  # a closed tab: nobody left
    assert wait_for(lambda: fake.init_count == 0)


def test_the_sampler_stops_after_its_readings_and_closes():
    fake = FakeNvml()
    hub = _hub(fake, max_readings=3)
    hub.start("reader-a")
    assert wait_for(lambda: not hub.running) and len(hub.samples()) == 3
    assert wait_for(lambda: fake.init_count == 0)


def test_a_gpu_lost_while_sampling_stops_the_sampler_and_the_runs():
    fake = FakeNvml()
    hub = _hub(fake)
    hub.start("reader-a")
    assert wait_for(lambda: len(hub.samples()) >= 1)
    fake.lose()
    assert wait_for(lambda: not hub.running) and wait_for(lambda: fake.init_count == 0)
    assert HEALTH.runs_off and "GPU is lost" in HEALTH.runs_off


def test_a_refused_start_says_why_and_holds_nothing():
    hub = _hub(FakeNvml(init_error="DriverNotLoaded"))
    assert "not loaded" in hub.start("reader-a")
    assert not hub.running and hub.viewers == 0


# -- public mode -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "public"), [("1", True), ("true", True), ("", False), ("0", False)])
def test_public_mode_is_read_from_one_variable(monkeypatch, value, public):
    monkeypatch.setenv("COURSE_PUBLIC", value)
    assert public_mode() is public


def test_the_home_command_is_a_valid_cli_line(tmp_path, monkeypatch):
    command = home_command("small", 8 * 1024**3)
    assert command == "python -m core.gpu.bench --preset small --vram-budget-gb 8 --out my_gpu.json"
    monkeypatch.chdir(tmp_path)
    args = bench.parse_args(shlex.split(home_command("tiny", PRESETS["tiny"].budget_choices[0]))[3:])
    assert args.preset == "tiny" and args.vram_budget_gb * 1024**3 == pytest.approx(
        PRESETS["tiny"].budget_choices[0], rel=1e-5
    )


# -- one benchmark per machine -----------------------------------------------------------------------

HOLDER = """
import fcntl, sys
handle = open(sys.argv[1], "a+")
fcntl.flock(handle, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()  # hold the lock until the test closes our stdin
"""


@pytest.mark.skipif(machine_lock.fcntl is None, reason="no flock on this system")
def test_a_benchmark_in_another_process_makes_this_one_wait():
    path = machine_lock.lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    other = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout.readline().strip() == "held"  # e.g. a second server process, or the CLI
        assert runner.benchmark_running()
        assert isinstance(runner.run_exclusive(lambda: "ran"), runner.Busy)
        line = runner.BenchRunner()
        assert line.submit("a", "x", lambda progress, should_stop: "measured") == 1
    finally:
        other.stdin.close()
        other.wait(10)
    assert not runner.benchmark_running()
    assert line.position("a") is None  # the waiting reader's page looked again: the run started
    assert line.job("a").wait(10) and line.job("a").result == "measured"
    assert runner.run_exclusive(lambda: "ran") == "ran"
