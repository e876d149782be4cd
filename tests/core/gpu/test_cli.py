"""The GPU CLIs run where only torch, numpy and nvidia-ml-py are installed, check every argument up
front, write their JSON as they go, and stop cleanly on SIGTERM or Ctrl-C keeping what they measured."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.gpu import bench, pipeline
from core.gpu.output import cli_io
from core.gpu.pipeline import SuiteSpec
from core.gpu.presets import PRESETS
from core.gpu.timing import bench_env
from tests.core.gpu.fake_nvml import FakeNvml

ROOT = Path(__file__).resolve().parents[3]
BLOCKER = """
import sys
from importlib.machinery import PathFinder

BLOCKED = {"plotly", "streamlit", "pandas"}


class _Hidden(PathFinder):
    # finds nothing for the blocked packages, exactly as if they were not installed

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            return None
        return PathFinder.find_spec(name, path, target)


sys.meta_path[:] = [_Hidden if f is PathFinder else f for f in sys.meta_path]
"""


@pytest.fixture(scope="module")
def bare_env(tmp_path_factory):
    """Environment for a subprocess in which plotly, streamlit and pandas cannot be imported."""
    folder = tmp_path_factory.mktemp("blocked")
    (folder / "sitecustomize.py").write_text(BLOCKER)
    return dict(os.environ, PYTHONPATH=f"{folder}{os.pathsep}{ROOT}", OMP_NUM_THREADS="1")


def _run(args, env, **kw):
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, **kw)


def test_the_blocker_really_blocks(bare_env):
    done = _run(["-c", "import plotly"], bare_env)
    assert done.returncode != 0 and "ModuleNotFoundError" in done.stderr


def test_cli_runs_without_plotly_or_streamlit(bare_env, tmp_path):
    out = tmp_path / "r.json"
    args = [
        "-m",
        "core.gpu.bench",
        "--preset",
        "tiny",
        "--device",
        "cpu",
        "--threads",
        "1",
        "--out",
        str(out),
    ]
    done = _run([*args, "--vram-budget-gb", "0.001", "--depths", "0,256,512"], bare_env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["complete"] and not data["stopped"]
    assert {"bandwidth", "context", "context_budget", "moe"} <= set(data)
    assert [p["depth"] for p in data["context"]["series"][0]["points"]] == [0, 256, 512]
    point = data["context"]["series"][0]["points"][0]
    assert point["timing"] == "eager" and point["graphed_tokens_per_s"] is None and point["graph_note"]
    assert point["traffic"]["total"] == point["bytes_per_token"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--vram-budget-gb", "nan"], "finite"),
        (["--vram-budget-gb", "inf"], "finite"),
        (["--vram-budget-gb", "-1"], "above zero"),
        (["--vram-budget-gb", "0"], "above zero"),
        (["--vram-budget-gb", "lots"], "not a number"),
        (["--vram-budget-gb=-inf"], "finite"),
        (["--vram-budget-gb", "-inf"], "expected one argument"),  # argparse reads -inf as an option
        (["--threads", "0"], "at least 1"),
        (["--threads", "-1"], "at least 1"),
        (["--threads", "two"], "whole number"),
        (["--depth-seconds", "0"], "above zero"),
        (["--depth-seconds", "nan"], "finite"),
        (["--depth-seconds", "-2"], "above zero"),
        (["--depths", "512,256"], "increasing"),
        (["--preset", "huge"], "invalid choice"),
        (["--device", "cuda"], "sees no CUDA GPU"),
        (["--skip-ways", "cuda"], "choose from grouped, triton"),
        (["--skip-ways", ","], "choose from"),
        (["--skip-ways", "state:grouped"], "moe:grouped, moe:triton, state:triton"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(args, words, capsys, tmp_path):
    with pytest.raises(SystemExit) as stop:
        bench.parse_args([*args, "--out", str(tmp_path / "r.json")])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and "Traceback" not in err


class _Ran(Exception):
    """Raised by a fake run_exclusive: what main() passed on is in its args."""


def test_the_benchmark_is_given_the_ways_to_skip_and_the_cpu_layers_choice(monkeypatch, tmp_path):
    def run_exclusive(fn, spec, env, *rest):
        raise _Ran(spec.preset.skip_ways, spec.cpu_layers, spec.retime_dense)

    monkeypatch.setattr(bench, "run_exclusive", run_exclusive)
    base = ["--preset", "tiny", "--device", "cpu", "--out", str(tmp_path / "r.json")]
    with pytest.raises(_Ran) as ran:
        bench.main(
            [*base, "--skip-ways", "state:triton,grouped,moe:triton", "--no-cpu-layers", "--retime-dense"]
        )
    assert ran.value.args == (("state:triton", "grouped", "moe:triton"), False, True)
    with pytest.raises(_Ran) as ran:
        bench.main(base)
    assert ran.value.args == ((), True, False)


def test_an_unwritable_out_is_refused_up_front(capsys, tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    for out in (tmp_path, a_file / "r.json"):  # a folder; a path under a file
        with pytest.raises(SystemExit) as stop:
            bench.parse_args(["--out", str(out)])
        assert stop.value.code == 2
    assert cli_io.check_out_path(tmp_path / "new" / "deeper" / "r.json") is None
    assert "folder" in capsys.readouterr().err


def test_a_path_the_file_system_refuses_is_caught_before_the_run(monkeypatch, tmp_path, capsys):
    # os.access says yes to root everywhere; only really creating a file finds a read-only mount
    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(cli_io.tempfile, "mkstemp", read_only)
    assert "Read-only file system" in cli_io.check_out_path(tmp_path / "r.json")
    measured = []
    monkeypatch.setattr(pipeline, "run", lambda *a, **k: measured.append(1))
    with pytest.raises(SystemExit) as stop:
        bench.main(["--preset", "tiny", "--device", "cpu", "--out", str(tmp_path / "r.json")])
    assert stop.value.code == 2 and not measured
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot write in" in err


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs Linux's /sys")
def test_an_unwritable_out_fails_in_a_subprocess_before_measuring(bare_env):
    done = _run(
        ["-m", "core.gpu.bench", "--preset", "tiny", "--device", "cpu", "--out", "/sys/gpu.json"], bare_env
    )
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert "cannot write" in done.stderr and "copy bandwidth" not in done.stderr and not done.stdout


def test_check_only_checks(tmp_path):
    out = tmp_path / "r.json"
    assert bench.main(["--check", "--preset", "tiny", "--out", str(out)]) == 0
    assert not out.exists()


def test_a_results_file_that_fails_mid_run_is_one_line_and_exit_2(monkeypatch, tmp_path, capsys):
    def disk_full(self, text):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli_io.ResultFile, "write", disk_full)
    with pytest.raises(SystemExit) as stop:
        bench.main(["--preset", "tiny", "--device", "cpu", "--no-moe", "--out", str(tmp_path / "r.json")])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "No space left on device" in err[-1] and "Traceback" not in "\n".join(err)


def test_bad_argument_in_a_subprocess_has_no_traceback(bare_env, tmp_path):
    done = _run(["-m", "core.gpu.bench", "--threads", "0", "--out", str(tmp_path / "r.json")], bare_env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().count("\n") == 0


def test_the_json_is_written_after_every_part_and_depth(tmp_path):
    env = bench_env.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))
    seen = []
    result = pipeline.run(
        SuiteSpec(PRESETS["tiny"], vram_budget_bytes=1024**2, moe=True),
        env,
        on_update=lambda r: seen.append(json.loads(r.to_json())),
    )
    assert "bandwidth" in seen[0] and "context" not in seen[0]
    counts = [sum(len(s["points"]) for s in r.get("context", {}).get("series", [])) for r in seen]
    assert (
        counts == sorted(counts) and len(set(counts)) == 2 * len(PRESETS["tiny"].depths) + 1
    )  # one per point
    assert any("context_budget" in r and "moe" not in r for r in seen)
    assert not seen[-2]["complete"] and seen[-1]["complete"] and result.complete


def test_result_file_is_replaced_whole(tmp_path):
    f = cli_io.ResultFile(tmp_path / "sub" / "r.json")
    f.write('{"a": 1}')
    f.write('{"a": 2}')
    assert json.loads(f.path.read_text()) == {"a": 2} and f.writes == 2
    assert [p.name for p in f.path.parent.iterdir()] == ["r.json"]  # no temp files left


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_cleanly_and_keeps_what_was_measured(sig, bare_env, tmp_path):
    out = tmp_path / "r.json"
    args = ["-m", "core.gpu.bench", "--preset", "cpu", "--device", "cpu", "--threads", "1", "--no-moe"]
    proc = subprocess.Popen(
        [sys.executable, *args, "--out", str(out)],
        cwd=ROOT,
        env=bare_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            points = sum(len(s["points"]) for s in json.loads(out.read_text())["context"]["series"])
        except (OSError, KeyError, ValueError):
            points = 0
        if points >= 1 or proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, stderr.decode()[-2000:]
    assert b"Traceback" not in stderr
    data = json.loads(out.read_text())
    assert data["stopped"] and not data["complete"]
    assert data["context"]["stopped"]
    assert 1 <= sum(len(s["points"]) for s in data["context"]["series"]) < 2 * len(PRESETS["cpu"].depths)


@pytest.mark.slow
def test_validate_dry_run_runs_every_check_and_writes_its_json(bare_env, tmp_path):
    done = _run(["-m", "bench.gpu_validate", "--out", str(tmp_path), "--cpu-ok"], bare_env, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    data = json.loads((tmp_path / "validate.json").read_text())
    assert data["mode"] == "cpu dry run" and list(data["checks"]) == [
        "1 decode",
        "2 bandwidth",
        "3 spill",
        "4 energy",
        "7 batch",
        "6 newer kernels",
        "5 end to end",
    ]  # fmt: skip  (the newer kernels run after the established checks and batch, before the benchmark)
    for name, check in data["checks"].items():
        assert "error" not in check, (name, check.get("traceback"))
        assert check["expectations"] and all(
            e["status"] in ("PASS", "SKIP", "INFO") for e in check["expectations"]
        )
        assert all("low" in e and "high" in e for e in check["expectations"])  # every check states its range
    assert data["summary"]["FAIL"] == 0 and data["summary"]["PASS"] >= 4
    assert json.loads((tmp_path / "bench.json").read_text())["complete"]
    assert "PASS" in done.stdout and "SKIP" in done.stdout


@pytest.mark.parametrize(
    ("args", "words"),
    [
        ([], "--cpu-ok"),
        (["--cpu-ok", "--checks", "8"], "pick from"),
        (["--cpu-ok", "--checks", "0,6"], "pick from"),
        (["--cpu-ok", "--budget-seconds", "-3"], "above zero"),
    ],
)
def test_validate_refuses_bad_arguments(args, words, bare_env, tmp_path):
    done = _run(["-m", "bench.gpu_validate", "--out", str(tmp_path / "v"), *args], bare_env)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr


def test_validate_writes_after_each_check(bare_env, tmp_path):
    done = _run(
        ["-m", "bench.gpu_validate", "--out", str(tmp_path), "--cpu-ok", "--checks", "2,3"],
        bare_env,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    data = json.loads((tmp_path / "validate.json").read_text())
    assert list(data["checks"]) == ["2 bandwidth", "3 spill"]


def test_verdicts():
    from bench.gpu_validate.verdicts import expect, pct, range_text, ratio

    assert expect("x", 5, 1, 10)["status"] == "PASS" and expect("x", 11, 1, 10)["status"] == "FAIL"
    assert expect("x", None, 1)["status"] == "FAIL"  # a value that could not be measured fails
    assert expect("x", 5, 1, 10, cuda=False)["status"] == "SKIP"  # the dry run does not judge GPU ranges
    assert expect("x", 5, 1, 10, needs_cuda=False, cuda=False)["status"] == "PASS"
    assert expect("x", None, 1, skip=True)["status"] == "SKIP"  # this machine cannot run what it measures
    assert (
        range_text(expect("x", 1, 1.2, None, "×")) == "≥ 1.2×"
        and range_text(expect("x", 1, None, 0.9)) == "≤ 0.9"
    )
    assert ratio(1, 0) is None and pct(1, 4) == 25.0


def test_every_core_gpu_module_imports_without_plotly_or_streamlit(bare_env):
    code = (
        "import importlib, pkgutil, sys, core.gpu\n"
        "for m in pkgutil.walk_packages(core.gpu.__path__, 'core.gpu.'):\n"
        "    importlib.import_module(m.name)\n"
        "third = {n.split('.')[0] for n in sys.modules} - set(sys.stdlib_module_names)\n"
        "print(sorted(third))\n"
    )
    done = _run(["-c", code], bare_env)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = set(eval(done.stdout.strip()))  # noqa: S307 — our own print of a list of names
    assert not imported & {"plotly", "streamlit", "pandas"}
    assert {"torch", "numpy", "core"} <= imported


def _check(args, env, **kw):
    env = dict(env, PYTHON=sys.executable)
    return subprocess.run(
        ["bash", "bench/gpu_check.sh", *args], cwd=ROOT, env=env, capture_output=True, text=True, **kw
    )


@pytest.mark.slow
def test_gpu_check_uses_the_python_it_finds_and_installs_nothing(bare_env, tmp_path):
    out = tmp_path / "check.json"
    done = _check([str(out), "--cpu-ok", "--preset", "tiny"], bare_env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pip install" not in done.stderr and "-m venv" not in done.stderr and "creating" not in done.stderr
    assert json.loads(out.read_text())["complete"]


def test_gpu_check_without_cuda_says_so(bare_env, tmp_path):
    done = _check([str(tmp_path / "x.json")], bare_env, timeout=120)
    assert done.returncode == 4 and "sees no CUDA GPU" in done.stderr and "--cpu-ok" in done.stderr


@pytest.mark.parametrize("args", [["--bogus"], ["--timeout", "abc"], ["--preset"]])
def test_gpu_check_bad_options_exit_2(args, bare_env):
    assert _check(args, bare_env, timeout=60).returncode == 2


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--vram-budget-gb", "nan"], "finite"),
        (["--vram-budget-gb", "inf"], "finite"),
        (["--vram-budget-gb", "-4"], "above zero"),
        (["--depth-seconds", "0"], "above zero"),
        (["--preset", "huge"], "invalid choice"),
        (["/sys/gpu.json"], "cannot write"),
    ],
)
def test_gpu_check_checks_every_argument_first(args, words, bare_env, tmp_path):
    # no --cpu-ok on this machine without CUDA: a check that came later would exit 4 instead
    done = _check(
        args if args[0].startswith("/") else [str(tmp_path / "r.json"), *args], bare_env, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and words in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_gpu_check_time_limit_keeps_what_was_measured(bare_env, tmp_path):
    out = tmp_path / "check.json"
    # the whole run takes at least twice the limit, even on an idle machine
    args = [str(out), "--cpu-ok", "--preset", "cpu", "--vram-budget-gb", "0.05", "--timeout", "5"]
    done = _check(args, bare_env, timeout=300)
    assert done.returncode in (124, 143), done.stderr[-2000:]
    assert "limit" in done.stderr and "Traceback" not in done.stderr
    if out.exists():  # written from the first part on (a very slow start may not get that far)
        data = json.loads(out.read_text())
        assert data["stopped"] and not data["complete"] and "bandwidth" in data
