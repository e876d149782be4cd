"""The validator's run: one check at a time against its time budget, the JSON rewritten after each.

`Validator` holds what the checks share — the device, the sizes, the copy bandwidth, check 1's runs
(check 6's reference), the MoE's sizes and check 5's skip list — and runs each check so that one that
raises keeps what it measured so far and cannot lose the others.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from bench.gpu_validate import probes
from bench.gpu_validate.decode_runs import DecodeRun, run_key
from bench.gpu_validate.sizes import Sizes
from bench.gpu_validate.verdicts import STATUSES, expect, range_text
from core.gpu.decode.ffn import MOE_WAYS
from core.gpu.decode.models import MOE_PART, STATE_PART, STATE_WAYS, build, part_way
from core.gpu.output import cli_io
from core.gpu.output.export import to_json, versions
from core.gpu.presets import GIB, PRESETS
from core.gpu.suites import moe_sizing
from core.gpu.suites.context_bench import traffic_tokens_per_s
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.decode_timer import steps_room, time_at_depth
from core.gpu.timing.errors import error_line
from core.gpu.timing.steps import Stopped

ROOT = Path(__file__).resolve().parents[2]

STOP_GRACE_S = 45.0  # how long check 5's benchmark may take to stop after SIGTERM before it is killed
CHECK5_MARGIN_S = 15.0  # check 5's benchmark is told to stop this long before the deadline
CHECK5_MIN_S = 150.0  # check 6 leaves at least this long for check 5
CHECK6_GRACE_S = 15.0  # how long check 6's process may take to stop after SIGTERM before it is killed
# Seconds each check should take on an H200 (run 1 measured 15, 1, 35, 21 and 229 s for 1–5), so the
# whole call ends within 9 minutes: checks 6 and 5 run in their own processes, held to theirs; the
# others are timed against theirs in `seconds` / `budget_seconds`. Check 5 gets what is left.
CHECK_BUDGET_S = {"1": 60.0, "2": 15.0, "3": 50.0, "4": 45.0, "7": 45.0, "6": 110.0}
DEFAULT_BUDGET_S = 500.0  # the whole run: ≤ 500 − CHECK5_MARGIN_S + STOP_GRACE_S = 530 s, under 9 minutes
# The newer ways (core.gpu.decode.ffn.MOE_WAYS and core.gpu.decode.models.STATE_WAYS past the PyTorch ones),
# named in their parts: default-deny — check 5 skips each unless check 6 ran it and its outputs matched.
NEWER_WAYS = (*(part_way(MOE_PART, w) for w in MOE_WAYS if w != "gather"),
              *(part_way(STATE_PART, w) for w in STATE_WAYS if w != "torch"))  # fmt: skip

Expectations = list[dict[str, Any]]
CheckResult = tuple[dict[str, Any], Expectations] | dict[str, Any]  # (data, expectations), or a whole record


class Validator:
    """Runs the checks in order, writing the JSON after each; Stop (a signal) ends between steps."""

    def __init__(self, env: BenchEnv, sizes: Sizes, folder: Path, budget_s: float, stop: cli_io.StopOnSignal):
        self.env, self.s, self.folder, self.stop = env, sizes, folder, stop
        self.cuda = env.device.type == "cuda"
        self.deadline = time.perf_counter() + budget_s
        self.file = cli_io.ResultFile(folder / "validate.json")
        self.out: dict[str, Any] = {
            "mode": "gpu" if self.cuda else "cpu dry run",
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "device": env.snapshot.to_dict() | {"torch_device": env.device_label, "dtype": str(env.dtype)},
            "versions": versions(),
            "sizes": dataclasses.asdict(sizes),
            "checks": {},
        }
        self.bw: Bandwidth | None = None
        self.partial: dict[str, Any] = {}  # what the check running now has measured so far
        self.decoded: dict[str, Any] | None = None  # check 1's runs: check 6's reference
        # default-deny, settled before anything can raise: a newer way leaves this list only when
        # check 6 ran it and its outputs matched (a crash anywhere in check 6 leaves them all out)
        self.skip_ways: list[str] = list(NEWER_WAYS)
        self.check: str | None = None  # the check running now
        self.sizing: moe_sizing.MoeSizing | None = None  # the MoE test's model (core.gpu.suites.moe_sizing)
        self.sizing_note = ""

    def e(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return expect(*args, cuda=self.cuda, **kwargs)

    def run(self, name: str, fn: Callable[[], CheckResult]) -> None:
        """Run one check and save its record: (data, expectations) from `fn`, or the whole record it
        returns (check 6, read from its own process); an error is kept with what was measured so far."""
        if self.stop.is_set():
            return
        budget = CHECK_BUDGET_S.get(name.split()[0])
        print(f"\n== {name}" + ("" if budget is None else f"  (budget {budget:.0f} s)"), flush=True)
        t0 = time.perf_counter()
        record: dict[str, Any] = {}
        self.partial, self.check = {}, name
        try:
            result = fn()  # (data, expectations), or a whole record (check 6 from its own process)
            record = result if isinstance(result, dict) else {"data": result[0], "expectations": result[1]}
        except Stopped:
            record = {"stopped": True, "expectations": []}
        except Exception as error:  # one broken check must not lose the others
            record = {"error": error_line(error, 2000, whole=True), "traceback": traceback.format_exc()[-4000:],
                      "expectations": [expect("check ran without an error", None, needs_cuda=False)],
                      "data_so_far": self.partial}  # fmt: skip
            print(f"  ERROR {record['error']}", flush=True)
        finally:
            self.env.free_memory()
        record["seconds"], record["budget_seconds"] = time.perf_counter() - t0, budget
        if budget is not None and record["seconds"] > budget:
            print(f"  over its budget: {record['seconds']:.0f} s of {budget:.0f} s", flush=True)
        for x in record["expectations"]:
            value = "—" if x["value"] is None else f"{x['value']:.4g}{x['unit']}"
            print(f"  {x['status']:<4}  {x['what']}: {value}   expected {range_text(x)}", flush=True)
        self.out["checks"][name] = record
        self.save()

    def save(self) -> None:
        statuses = [x["status"] for c in self.out["checks"].values() for x in c["expectations"]]
        self.out["summary"] = {k: statuses.count(k) for k in STATUSES}
        self.out["stopped"] = self.stop.is_set()
        self.file.write(to_json(self.out))

    def should_stop(self) -> bool:
        return self.stop.is_set()

    def load_reference(self, file: Path) -> None:
        """Check 1's runs and the MoE's sizes, as the parent process measured and chose them."""
        given = json.loads(file.read_text())
        self.decoded = given.get("runs") or None
        if given.get("moe_sizing"):
            self.sizing = moe_sizing.MoeSizing(**given["moe_sizing"])

    def save_partial(self) -> None:
        """Write what the running check has measured so far, so a process killed mid-check keeps it."""
        if self.check is not None:
            self.out["checks"][self.check] = {
                "running": True,
                "data_so_far": self.partial,
                "expectations": [],
            }
            self.save()
            del self.out["checks"][self.check]

    # -- what checks 1 and 6 share: the decode preset, the MoE's sizes, one run timed -------------------
    def copy_bandwidth(self, nbytes: int) -> Bandwidth:
        """The device copy speed the rooflines divide by, measured once for the whole run."""
        self.bw = self.bw or _bandwidth(self.env, nbytes)
        return self.bw

    def decode_preset(self) -> Any:
        """Checks 1 and 6 run the validate size's preset, 20 s a depth, against the device copy speed."""
        self.copy_bandwidth(PRESETS[self.s.preset].copy_bytes)
        return dataclasses.replace(PRESETS[self.s.preset], depth_seconds=20.0)

    def moe_preset(self) -> Any:
        """The MoE test's model: on a GPU DeepSeek-V3's experts, as many layers as its free memory holds
        (core.gpu.suites.moe_sizing); the dry run keeps the tiny preset's and records what this
        machine's free memory would get. Check 6's process is given the parent's sizes, so both time one model."""
        base = self.decode_preset()
        if self.sizing is None and not self.sizing_note:
            free = self.env.free_bytes()
            try:
                self.sizing = moe_sizing.size_moe(
                    free, self.bw.device_bytes_per_s, _elem_bytes(self.env.dtype)
                )
            except ValueError as error:  # too little memory for a real MoE: the preset's, said so
                self.sizing_note = str(error)
        if self.sizing is None or not self.cuda:
            return base
        return moe_sizing.sized_preset(base, self.sizing)

    def moe_sizes(self) -> dict[str, Any]:
        """The sizes chosen (and whether this run uses them), for the JSON."""
        if self.sizing is None:
            return {"used": False, "note": self.sizing_note}
        return dataclasses.asdict(self.sizing) | {"bytes_ratio": self.sizing.bytes_ratio, "used": self.cuda}

    def time_decode(self, data: dict[str, Any], kind: str, ffn: str, depths: tuple[int, ...], preset: Any,
                    tokens: torch.Tensor, way: str | None = None) -> None:  # fmt: skip
        """Kernels, eager and graphed tokens/s and the roofline of one model (run `way`, else its
        first way) at each depth, into `data`."""
        env = self.env
        model = build(kind, preset, env.device, env.dtype, ffn)
        if way is not None:
            model.use_way(way)
        try:
            for depth in depths:
                model.allocate(steps_room(preset, depth))
                model.fill(depth)
                model.step(tokens[:1])
                model.pos = depth
                prof = probes.step_profile(lambda m=model: m.step(tokens[:1]), env.device)
                measured = time_at_depth(
                    model, kind, preset, env, tokens, depth, self.should_stop, allocate=False
                )
                g = measured.graphed
                data[run_key(kind, ffn, depth, way)] = DecodeRun(
                    kernels_per_step=prof.kernels if self.cuda else prof.ops,
                    host_blocking_calls=prof.blocking_calls,
                    eager_tokens_per_s=measured.eager.mean,
                    graphed_tokens_per_s=None if g is None else g.mean,
                    graph_note=measured.graph_note,
                    roofline_tokens_per_s=traffic_tokens_per_s(model.traffic(depth), self.bw),
                    bytes_per_step=model.traffic(depth).to_dict(),
                ).to_dict()
                model.release()
        finally:
            model.release()
            del model


def child_env() -> dict[str, str]:
    """This environment, with the project on the child's import path."""
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _elem_bytes(dtype: torch.dtype) -> int:
    return torch.finfo(dtype).bits // 8


def _bandwidth(env: BenchEnv, nbytes: int) -> Bandwidth:
    device = probes.copy_bandwidth(env.device, nbytes)
    link = probes.h2d_bandwidth(min(nbytes, GIB), pinned=True) if env.device.type == "cuda" else device / 2
    return Bandwidth(device, link, "validate: device copy; pinned host→device")
