"""Does lesson 10's GPU benchmark measure the memory wall? Seven checks, each against a stated range.

    timeout -s TERM -k 20 570 python bench/gpu_validate.py --out docs/gpu-runs/<name>   # one GPU, ≤ 9 min
    python bench/gpu_validate.py --out /tmp/dry --cpu-ok           # CPU dry run, tiny sizes, seconds

1. decode: kernels per step (profiler); eager vs CUDA-graph tokens/s at depth 0 and 64K for
   full attention and the fixed state, against the roofline of the bytes a step moves; MoE (experts
   gathered) vs dense — the ways that ran on the first H200 — with the MoE sized like real ones from
   the card's free memory and copy speed (core.gpu.moe_sizing).
2. bandwidth: device copy at 2 GiB vs an L2-sized copy; a bf16 GEMV; pinned vs pageable host→device.
3. spill: one depth under a 16 GiB budget — copies per step by direction, host-blocking calls,
   device memory held vs the budget, pinned host memory before/after release, speed vs the spill roofline.
4. energy: idle power after a 5 s and a 15 s rest (settled?) vs right after work; energy counter vs
   power sampled from 1 s before an 8 s window.
7. batch (run after 4): decode at batch 1, 4, 16, 64 at depth 16K, full attention and the fixed state
   — tokens/s per sequence and in total, and the largest batch that fits the card (core.gpu.batch_bench).
6. newer kernels (run after 7, in their own process under a hard time limit): a ≤ 20 s preflight
   (Triton's version, the C toolchain, libcuda; each newer way launched and graph-captured once), then
   the fused Triton fixed-state step and the in-place MoE ways (grouped GEMM, Triton) timed and checked
   against the PyTorch ways; the fastest MoE way vs dense. Default-deny: check 5 skips every newer way
   (`--skip-ways`) except those this check ran and found to compute what the PyTorch ways do.
5. end to end: `python -m core.gpu.bench --preset large --vram-budget-gb 16 --moe-sized-by-card
   --retime-dense` in its own process, given what is left of the budget.

Every check prints PASS/FAIL per expectation (SKIP: needs a GPU, the dry run still runs the code;
INFO: a value recorded without a range) and the JSON in the --out folder (validate.json, plus
bench.json from check 5) is rewritten after each check. Each check has a budget (CHECK_BUDGET_S) so
the whole call ends within 9 minutes on an H200. Needs only torch, numpy and nvidia-ml-py. Exit
status: 0 all passed, 1 something failed, 2 bad arguments, 128 + N after signal N (what was
measured is kept).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from core.gpu import batch_bench, child_run, cli_io, moe_sizing, preflight, probes, spill, triton_support  # noqa: E402
from core.gpu.context_bench import plan_series, traffic_tokens_per_s  # noqa: E402
from core.gpu.energy import POWER_AVERAGE_S, EnergyMeter  # noqa: E402
from core.gpu.export import to_json, versions  # noqa: E402
from core.gpu.ffn import IMPL_WORDS, IMPLS, MOE_KINDS, DenseFFN, impl_available  # noqa: E402
from core.gpu.kv_cache import pinned_host_bytes  # noqa: E402
from core.gpu.models import MOE_PART, STATE_PART, STATE_WAYS, build, moe_layer, part_way  # noqa: E402
from core.gpu.presets import GIB, MIB, PRESETS  # noqa: E402
from core.gpu.timing import (  # noqa: E402
    Bandwidth,
    BenchEnv,
    Stopped,
    error_line,
    make_env,
    random_tokens,
    steps_room,
    time_at_depth,
)
from core.gpu.traffic import trace_persistent_bytes  # noqa: E402
from core.gpu.verdicts import STATUSES, expect, pct, range_text, ratio  # noqa: E402

PROG = "bench/gpu_validate.py"


@dataclasses.dataclass(frozen=True)
class Sizes:
    """How big each check runs: a real GPU, or the CPU dry run."""

    preset: str
    deep: int  # the deep depth of checks 1 and 6
    copy_big: int
    gemv: tuple[int, int]
    h2d: int
    spill_budget: int | None  # None: computed to spill half the depth (dry run)
    spill_depth: int
    burst_s: float
    after_s: float
    rests_s: tuple[float, ...]  # idle power read after each of these rests (a settled card reads the same)
    idle_s: float
    window_s: float
    batch_depth: int  # check 7's depth
    batch_seconds: float  # check 7's time cap per batch
    bench_args: tuple[str, ...]


GPU = Sizes("large", 65536, 2 * GIB, (8192, 8192), 1 * GIB, 16 * GIB, 65536, 3.0, 2.0, (5.0, 15.0), 3.0, 8.0, 16384, 4.0,
            ("--preset", "large", "--vram-budget-gb", "16", "--depth-seconds", "10", "--moe-sized-by-card",
             "--retime-dense"))  # fmt: skip
DRY = Sizes("tiny", 1024, 16 * MIB, (256, 256), 0, None, 1024, 0.1, 0.1, (0.1, 0.3), 0.1, 0.2, 256, 1.0,
            ("--preset", "tiny", "--device", "cpu", "--vram-budget-gb", "0.001", "--threads", "1", "--retime-dense"))  # fmt: skip


STOP_GRACE_S = 45.0  # how long check 5's benchmark may take to stop after SIGTERM before it is killed
CHECK5_MARGIN_S = 15.0  # check 5's benchmark is told to stop this long before the deadline
CHECK5_MIN_S = 150.0  # check 6 leaves at least this long for check 5
MOE_SHARE_TARGET = 0.6  # the fastest MoE way's speed ratio ÷ its byte ratio (issue 31's target)
CHECK6_GRACE_S = 15.0  # how long check 6's process may take to stop after SIGTERM before it is killed
# Seconds each check should take on an H200 (run 1 measured 15, 1, 35, 21 and 229 s for 1–5), so the
# whole call ends within 9 minutes: checks 6 and 5 run in their own processes, held to theirs; the
# others are timed against theirs in `seconds` / `budget_seconds`. Check 5 gets what is left.
CHECK_BUDGET_S = {"1": 60.0, "2": 15.0, "3": 50.0, "4": 45.0, "7": 45.0, "6": 110.0}
DEFAULT_BUDGET_S = 500.0  # the whole run: ≤ 500 − CHECK5_MARGIN_S + STOP_GRACE_S = 530 s, under 9 minutes
# The newer ways (core.gpu.ffn.IMPLS and core.gpu.models.STATE_WAYS past the PyTorch ones), named in
# their parts: default-deny — check 5 skips each unless check 6 ran it and its outputs matched.
NEWER_WAYS = (*(part_way(MOE_PART, w) for w in IMPLS if w != "gather"),
              *(part_way(STATE_PART, w) for w in STATE_WAYS if w != "torch"))  # fmt: skip


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
        self.reference: dict[str, Any] | None = None  # check 1's runs, given to check 6's process
        self.sizing: moe_sizing.MoeSizing | None = None  # the MoE test's model (core.gpu.moe_sizing)
        self.sizing_note = ""

    def e(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return expect(*args, cuda=self.cuda, **kwargs)

    def run(
        self, name: str, fn: Callable[[], tuple[dict[str, Any], list[dict[str, Any]]] | dict[str, Any]]
    ) -> None:
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

    # -- 1 ---------------------------------------------------------------------------------------
    def decode(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The ways that ran on the first H200 only (PyTorch ops, experts gathered): a sticky CUDA error
        in newer code (check 6, run after check 4) cannot take these figures, or checks 2–4, with it."""
        env, s = self.env, self.s
        preset, mp = self._decode_preset(), self._moe_preset()
        tokens = random_tokens(preset, env.device)
        data = self.partial = {
            "copy_bandwidth_bytes_per_s": self.bw.device_bytes_per_s,
            "moe_sizes": self.moe_sizes(),
        }
        gathered = [k for k, impl in MOE_KINDS.items() if impl == "gather"]
        for kind, ffn, depths, p in (
            ("attention", "dense", (0, s.deep), preset),
            ("state", "dense", (0, s.deep), preset),
            ("attention", "dense_moe_size", (mp.moe_depth,), mp),
            *[("attention", k, (mp.moe_depth,), mp) for k in gathered],
        ):
            if self.stop.is_set():
                raise Stopped
            try:
                self._time_decode(data, kind, ffn, depths, p, tokens)
            finally:
                env.free_memory()
        self.decoded = data
        a0, ad = data["attention/dense/d0"], data[f"attention/dense/d{s.deep}"]
        s0, sd = data["state/dense/d0"], data[f"state/dense/d{s.deep}"]
        moes = {k: data[f"attention/{k}/d{mp.moe_depth}"] for k in gathered}
        share = _moe_share(data, mp)
        sizes = data["moe_sizes"]
        layers = preset.n_layers
        return data, [
            self.e("kernels per step per layer, full attention", a0["kernels_per_step"] / layers, 4, 40),
            self.e("host-blocking calls in a step", sum(a0["host_blocking_calls"].values()), 0, 0),
            self.e("graphed ÷ eager at depth 0, full attention", ratio(a0["graphed_tokens_per_s"], a0["eager_tokens_per_s"]), 1.2, None, "×"),
            self.e("graphed % of roofline at depth 0, full attention", pct(_best(a0), a0["roofline_tokens_per_s"]), 35, 110, " %"),
            self.e(f"graphed % of roofline at depth {s.deep:,}, full attention", pct(_best(ad), ad["roofline_tokens_per_s"]), 35, 110, " %"),
            self.e("graphed % of roofline at depth 0, fixed state (PyTorch ops)", pct(_best(s0), s0["roofline_tokens_per_s"]), 25, 110, " %"),
            self.e("fixed state (PyTorch ops) ÷ full attention at depth 0", ratio(_best(s0), _best(a0)), 0.7, None, "×"),
            self.e(f"fixed state (PyTorch ops) ÷ full attention at depth {s.deep:,}", ratio(_best(sd), _best(ad)), 1.5, None, "×"),
            self.e("host-blocking calls in an MoE step, experts gathered", sum(sum(m["host_blocking_calls"].values()) for m in moes.values()), 0, 0),
            *[self.e(f"MoE, {IMPL_WORDS[MOE_KINDS[k]]} ÷ dense speed, as a share of the byte ratio", share(m)) for k, m in moes.items()],
            self.e("one expert's read at the measured copy speed", sizes.get("expert_read_us"), moe_sizing.MIN_READ_S * 1e6, None, " µs"),
            self.e("attention, cache and head, share of the MoE step's bytes", sizes.get("attention_share"), None, moe_sizing.MAX_ATTENTION_SHARE),
        ]  # fmt: skip

    def _moe_preset(self) -> Any:
        """The MoE test's model: on a GPU sized from its free memory and measured copy speed like real
        MoEs (core.gpu.moe_sizing); the dry run keeps the tiny preset's and records what this machine's
        free memory would get. Check 6's process is given the parent's sizes, so both time one model."""
        base = self._decode_preset()
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

    # -- 6 (run after 4: newer code last, in its own process, so a sticky CUDA error costs only itself)
    def newer_kernels(self) -> dict[str, Any]:
        """Check 6 in its own process under a hard time limit, given check 1's runs as its reference.
        Its verdict on each newer way is taken only from a record it finished: a process that crashed,
        hung or was stopped leaves every newer way out of check 5 (default-deny)."""
        sub = self.folder / "check6"
        sub.mkdir(parents=True, exist_ok=True)
        reference = sub / "reference.json"
        sizing = None if self.sizing is None else dataclasses.asdict(self.sizing)
        reference.write_text(to_json({"runs": self.decoded or {}, "moe_sizing": sizing}))
        limit = max(20.0, min(CHECK_BUDGET_S["6"], self.deadline - time.perf_counter() - CHECK5_MIN_S))
        cmd = [sys.executable, str(Path(__file__).resolve()), "--out", str(sub), "--checks", "6",
               "--budget-seconds", f"{limit:.0f}", "--child-reference", str(reference)]  # fmt: skip
        cmd += [] if self.cuda else ["--cpu-ok"]
        print(f"  in its own process, limit {limit:.0f} s", flush=True)
        run = child_run.run_with_limit(cmd, limit, CHECK6_GRACE_S, self.should_stop, ROOT, _child_env(),
                                       echo=lambda line: print(f"  | {line}", flush=True))  # fmt: skip
        return self.child_record(run, sub / "validate.json", limit)

    def child_record(self, run: child_run.ChildRun, file: Path, limit: float) -> dict[str, Any]:
        """Check 6's record from its process's JSON, with how the process ended; `skip_ways` from it
        only when the record is whole and the process ended by itself."""
        try:
            record = json.loads(file.read_text())["checks"]["6 newer kernels"]
        except (OSError, ValueError, KeyError):
            record = {"expectations": []}
        process = {"exit_status": run.exit_status, "seconds": run.seconds, "timed_out": run.timed_out,
                   "killed": run.killed, "limit_seconds": limit, "output_tail": run.tail}  # fmt: skip
        whole = "data" in record and "skip_ways" in record["data"] and not run.timed_out and not run.killed
        if whole:
            self.skip_ways = [w for w in record["data"]["skip_ways"] if w in NEWER_WAYS]
        else:
            why = "timed out" if run.timed_out else f"ended with status {run.exit_status}"
            record.setdefault("error", f"check 6's process {why} before its record was whole")
            record.setdefault("data_so_far", record.pop("data", None) or {})
            print(f"  ERROR {record['error']}; every newer way is left out of check 5", flush=True)
        record.pop("running", None)
        record["process"] = process
        record["skip_ways"] = self.skip_ways
        record["expectations"] = [
            *record.get("expectations", []),
            expect("check 6's process finished within its limit", float(not run.timed_out), 1, 1, needs_cuda=False),
            expect("check 6's process ended without an error", float(run.exit_status in (0, 1) and whole), 1, 1,
                   needs_cuda=False),
        ]  # fmt: skip
        return record

    def newer_kernels_here(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The fused fixed-state kernel and the in-place MoE ways (grouped GEMM, Triton): a preflight
        (core.gpu.preflight: each launched and graph-captured once), then timed in the decode models,
        checked against the PyTorch ways, and each MoE way as one layer alone. Only the ways that pass
        every step here leave check 5's skip list."""
        env, s = self.env, self.s
        preset, mp = self._decode_preset(), self._moe_preset()
        tokens = random_tokens(preset, env.device)
        data = self.partial = {"moe_sizes": self.moe_sizes()}
        data["preflight"] = pre = preflight.run(mp, env.device, env.dtype)
        print(f"  preflight: {preflight.summary(pre)}", flush=True)
        self.save_partial()
        failed_pre = {w for w, r in pre["ways"].items() if not preflight.passed(r)}
        moe_kinds = [k for k, impl in MOE_KINDS.items() if impl_available(impl, env.device, env.dtype,
                     mp.d_model, mp.expert_hidden) and (self.cuda or impl != "triton")
                     and part_way(MOE_PART, impl) not in failed_pre]  # fmt: skip
        newer = [k for k in moe_kinds if MOE_KINDS[k] != "gather"]
        data["moe_kinds_timed"] = moe_kinds
        fused_state = (self.cuda and triton_support.available(env.device)
                       and part_way(STATE_PART, "triton") not in failed_pre)  # fmt: skip
        # what check 1 measured is the reference; without it (--checks 6) this check measures it itself
        refs = dict(self.decoded or {})
        runs = [(kind, ffn, depths, None, p) for kind, ffn, depths, p in (
            ("state", "dense", (0, s.deep), preset), ("attention", "dense_moe_size", (mp.moe_depth,), mp),
            *[("attention", k, (mp.moe_depth,), mp) for k in moe_kinds if MOE_KINDS[k] == "gather"],
        ) if any(_key(kind, ffn, d) not in refs for d in depths)]  # fmt: skip
        runs += [("state", "dense", (0, s.deep), "triton", preset)] if fused_state else []
        runs += [("attention", kind, (mp.moe_depth,), None, mp) for kind in newer]
        for kind, ffn, depths, way, p in runs:
            if self.stop.is_set():
                raise Stopped
            try:
                self._time_decode(refs, kind, ffn, depths, p, tokens, way)
            except Stopped:
                raise
            except Exception as error:  # one way that fails must not lose the others
                if way is None and ffn in ("dense", "dense_moe_size", "moe"):
                    raise  # a reference: nothing here can be judged without it
                refs[_failed_key(refs, kind, ffn, depths, way)] = {
                    "error": error_line(error, 400, whole=True)
                }
            finally:
                data.update({k: v for k, v in refs.items() if k not in (self.decoded or {})})
                env.free_memory()
                self.save_partial()
        data["moe_parity"] = _moe_parity(mp, env)
        data["moe_layer"] = _moe_layer_speeds(mp, env)
        data["state_parity"] = _state_parity(preset, env)
        state_ways = {way: refs.get(_key("state", "dense", 0, way)) for way in (None, "triton")}
        timed_ways = [w for w, r in state_ways.items() if r and "error" not in r]
        state_way = max(timed_ways, key=lambda w: _best(state_ways[w]), default=None)
        data["state_fastest"] = state_way or "torch"
        ops0, fused0 = state_ways[None], state_ways["triton"]
        moes = {k: refs.get(f"attention/{k}/d{mp.moe_depth}") for k in MOE_KINDS}
        share = _moe_share(refs, mp)
        shares = {k: share(m) for k, m in moes.items()}
        fastest = max((k for k in moes if shares[k] is not None), key=lambda k: _best(moes[k]), default=None)
        data["moe_fastest"] = fastest
        data["skip_ways"] = self.skip_ways = _ways_to_skip(refs, data, mp, fused_state, newer)
        parity = data["moe_parity"]
        return data, [
            *[self.e(f"preflight: {way} launched and graph-captured, outputs within {preflight.MATCH:g}",
                     float(preflight.passed(r)), 1, 1) for way, r in pre["ways"].items()],
            *([self.e("preflight: each newer way launched and graph-captured", None, skip=True)] if "skipped" in pre else []),
            self.e("fixed state at depth 0, one fused Triton kernel ÷ PyTorch ops", ratio(_best(fused0), _best(ops0)) if fused0 and "error" not in fused0 else None, unit="×", skip=not fused_state),
            self.e("fixed state, fused Triton step vs PyTorch ops: max |difference| ÷ max |output| after 3 steps", _number(data["state_parity"]), None, 0.03, needs_cuda=False, skip=data["state_parity"] is None),
            self.e("MoE, fastest way ÷ dense speed, as a share of the byte ratio", fastest and shares[fastest], MOE_SHARE_TARGET, 1.2, "×"),
            self.e("host-blocking calls in an MoE step, newer ways", sum(sum(moes[k]["host_blocking_calls"].values()) for k in newer if moes[k] and "error" not in moes[k]), 0, 0, skip=not newer),
            *[self.e(f"MoE, {IMPL_WORDS[MOE_KINDS[k]]} ÷ dense speed, as a share of the byte ratio", shares[k], skip=k not in newer)
              for k in MOE_KINDS if MOE_KINDS[k] != "gather"],
            *[self.e(f"one MoE layer, {IMPL_WORDS[impl]}: weight bytes/s as % of one dense layer's",
                     pct(_number(data["moe_layer"].get(impl, {}).get("weight_bytes_per_s")),
                         data["moe_layer"]["dense"]["weight_bytes_per_s"]), unit=" %", skip=impl not in data["moe_layer"])
              for impl in IMPLS],
            *[self.e(f"MoE, {IMPL_WORDS[impl]} vs gathered: max |difference| ÷ max |output|", _number(parity.get(impl)), None, 0.03,
                     needs_cuda=False, skip=impl not in parity)
              for impl in IMPLS if impl != "gather"],
        ]  # fmt: skip

    def _decode_preset(self) -> Any:
        """Checks 1 and 6 run the validate size's preset, 20 s a depth, against the device copy speed."""
        self.bw = self.bw or _bandwidth(self.env, PRESETS[self.s.preset].copy_bytes)
        return dataclasses.replace(PRESETS[self.s.preset], depth_seconds=20.0)

    def _time_decode(self, data: dict[str, Any], kind: str, ffn: str, depths: tuple[int, ...], preset: Any,
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
                data[_key(kind, ffn, depth, way)] = {
                    "kernels_per_step": prof.kernels if self.cuda else prof.ops,
                    "host_blocking_calls": prof.blocking_calls,
                    "eager_tokens_per_s": measured.eager.mean,
                    "graphed_tokens_per_s": None if g is None else g.mean,
                    "graph_note": measured.graph_note,
                    "roofline_tokens_per_s": traffic_tokens_per_s(model.traffic(depth), self.bw),
                    "bytes_per_step": model.traffic(depth).to_dict(),
                }
                model.release()
        finally:
            model.release()
            del model

    # -- 2 ---------------------------------------------------------------------------------------
    def bandwidth(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        env, s, dev = self.env, self.s, self.env.device
        l2 = probes.l2_bytes(dev)
        small = max(
            1 * MIB, (l2 or 8 * MIB) // 8
        )  # source + destination fit in a quarter of the L2 (H200: two halves)
        big = probes.copy_bandwidth(dev, s.copy_big)
        data = {
            "copy_big_bytes": s.copy_big, "copy_big_bytes_per_s": big,
            "l2_bytes": l2, "copy_l2_bytes": small, "copy_l2_bytes_per_s": probes.copy_bandwidth(dev, small),
            "gemv_shape": s.gemv, "gemv_bytes_per_s": probes.gemv_bandwidth(dev, env.dtype, *s.gemv),
            "nvml_peak_bytes_per_s": _peak_bandwidth(env),
            "pcie_bytes_per_s": env.snapshot.pcie_bandwidth_bytes_per_s,
        }  # fmt: skip
        if self.cuda:
            data["h2d_pinned_bytes_per_s"] = probes.h2d_bandwidth(s.h2d, pinned=True)
            data["h2d_pageable_bytes_per_s"] = probes.h2d_bandwidth(s.h2d, pinned=False)
        return data, [
            self.e("2 GiB copy as % of NVML peak", pct(big, data["nvml_peak_bytes_per_s"]), 55, 100, " %"),
            self.e("L2-sized copy ÷ 2 GiB copy", ratio(data["copy_l2_bytes_per_s"], big), 0.8, 10, "×"),
            self.e("bf16 GEMV bytes/s as % of the 2 GiB copy", pct(data["gemv_bytes_per_s"], big), 50, 130, " %"),
            self.e("pinned ÷ pageable host→device", ratio(data.get("h2d_pinned_bytes_per_s"), data.get("h2d_pageable_bytes_per_s")), 1.2, None, "×"),
            self.e("pinned host→device as % of the PCIe link", pct(data.get("h2d_pinned_bytes_per_s"), data["pcie_bytes_per_s"]), 50, 100, " %"),
        ]  # fmt: skip

    # -- 3 ---------------------------------------------------------------------------------------
    def spill(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        env, s = self.env, self.s
        preset = dataclasses.replace(PRESETS[s.preset], depths=(s.spill_depth,), depth_seconds=30.0)
        self.bw = self.bw or _bandwidth(env, preset.copy_bytes)
        tokens = random_tokens(preset, env.device)
        model = build("attention", preset, env.device, env.dtype)
        max_len = steps_room(preset, s.spill_depth)
        per_pos = model.memory_bytes(1)
        budget = s.spill_budget
        if budget is None:  # dry run: room for half the depth on the "device", plus the stage
            weights = model.total_params() * model.elem_bytes
            half = s.spill_depth // 2
            budget = weights + half * per_pos + (max_len - half) * (per_pos // preset.n_layers)
        try:
            plan = plan_series(model, "attention", preset, env, budget)
            if plan.refusal:
                raise RuntimeError(plan.refusal)
            pinned_before, free_before = pinned_host_bytes(), spill.host_available_bytes()
            model.allocate(max_len, plan.resident)
            held, pinned_alloc = env.held_bytes(), pinned_host_bytes()
            model.fill(s.spill_depth)
            model.step(tokens[:1])
            model.pos = s.spill_depth
            prof = probes.step_profile(lambda: model.step(tokens[:1]), env.device)
            model.pos = s.spill_depth
            traced, _ = trace_persistent_bytes(lambda: model.step(tokens[:1]), model.persistent_tensors())
            accounted = model.traffic(s.spill_depth).persistent
            contiguous = all(model.cache.host_rows(i, s.spill_depth - plan.resident).is_contiguous()
                             for i in range(preset.n_layers))  # fmt: skip
            measured = time_at_depth(
                model, "spill", preset, env, tokens, s.spill_depth, self.should_stop, allocate=False
            )
            traffic = model.traffic(s.spill_depth)
            roof = traffic_tokens_per_s(traffic, self.bw)
        finally:
            model.release()
            env.free_memory()
        pinned_after = pinned_host_bytes()
        best = measured.best.mean
        data = {
            "budget_bytes": budget, "depth": s.spill_depth, "resident_positions": plan.resident,
            "held_bytes": held, "copies_per_step": prof.copies, "host_blocking_calls": prof.blocking_calls,
            "kernels_per_step": prof.kernels, "pinned_before": pinned_before, "pinned_allocated": pinned_alloc,
            "pinned_after_release": pinned_after, "host_free_before": free_before,
            "host_free_after": spill.host_available_bytes(), "traced_bytes": traced, "accounted_bytes": accounted,
            "eager_tokens_per_s": measured.eager.mean,
            "graphed_tokens_per_s": None if measured.graphed is None else measured.graphed.mean,
            "graph_note": measured.graph_note, "spill_roofline_tokens_per_s": roof, "traffic": traffic.to_dict(),
        }  # fmt: skip
        layers = preset.n_layers
        leaked = None if pinned_after is None else (pinned_after - (pinned_before or 0)) / GIB
        return data, [
            self.e("host→device copies per step (one per spilled layer)", prof.copies.get("HtoD"), layers, layers),
            self.e("device→host copies per step (the new rows)", prof.copies.get("DtoH"), layers, layers),
            self.e("host-blocking calls in a step", prof.syncs, 0, 0),
            self.e("device memory held ÷ budget", ratio(held, budget), 0.5, 1.0, "×"),
            self.e("pinned host memory left after release", leaked, None, 0.0625, " GiB"),
            self.e("measured % of the spill roofline", pct(best, roof), 30, 120, " %"),
            self.e("per-step host slices are contiguous", float(contiguous), 1, 1, needs_cuda=False),
            self.e("accounted ÷ traced bytes of a spilled step", ratio(accounted, traced), 1, 1, "×", needs_cuda=False),
        ]  # fmt: skip

    # -- 4 ---------------------------------------------------------------------------------------
    def energy(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        env, s = self.env, self.s
        counter, power, source = _energy_sources(env)
        buf = torch.empty(min(s.copy_big, 1 * GIB), dtype=torch.uint8, device=env.device)
        dst = torch.empty_like(buf)

        def work(seconds: float) -> int:
            n, end = 0, time.perf_counter() + seconds
            while time.perf_counter() < end:
                if self.should_stop():
                    raise Stopped
                for _ in range(8):
                    dst.copy_(buf)
                env.sync()
                n += 8
            return n

        def watts_over(seconds: float) -> float | None:
            meter = EnergyMeter(None, power, interval_s=0.05)
            meter.begin()
            time.sleep(seconds)
            reading = meter.end()
            return None if reading is None else reading.avg_watts

        work(s.burst_s)
        right_after = watts_over(s.after_s)
        idle = {}  # rest (s) → idle watts: settled when the later equals the earlier
        rested = 0.0
        for rest in s.rests_s:
            time.sleep(max(0.0, rest - rested))
            idle[rest] = watts_over(s.idle_s)
            rested = rest + s.idle_s
        first, last = idle[s.rests_s[0]], idle[s.rests_s[-1]]
        by_counter = EnergyMeter(counter, None)
        # NVML power is a 1 s average (Hopper): sampled from a second before the window opens
        by_samples = EnergyMeter(None, power, interval_s=0.05, lead_s=min(POWER_AVERAGE_S, s.window_s))
        env.sync()
        by_samples.start_lead()
        time.sleep(by_samples.lead_s)
        by_counter.begin()
        by_samples.begin()
        copies = work(s.window_s)
        env.sync()
        c, p = by_counter.end(), by_samples.end()
        data = {
            "source": source, "right_after_work_watts": right_after, "idle_after_rest_watts": first,
            "idle_watts_by_rest_s": idle, "sampled_lead_seconds": None if p is None else p.lead_seconds,
            "window_copies": copies, "counter_joules": None if c is None else c.joules,
            "counter_seconds": None if c is None else c.seconds, "sampled_joules": None if p is None else p.joules,
            "sampled_seconds": None if p is None else p.seconds, "power_limit_w": env.snapshot.power_limit_w,
        }  # fmt: skip
        avg = None if c is None else c.avg_watts
        return data, [
            self.e(f"idle after a {s.rests_s[0]:g} s rest ÷ power right after work", ratio(first, right_after), 0, 1.02, "×"),
            self.e(f"idle after {s.rests_s[-1]:g} s ÷ after {s.rests_s[0]:g} s of rest (settled)", ratio(last, first), 0.95, 1.05, "×"),
            self.e("power sampled before the window opened", data["sampled_lead_seconds"], POWER_AVERAGE_S if self.cuda else 0, None, " s"),
            self.e("energy counter moved over the window", data["counter_joules"], 1e-9, None, " J"),
            self.e("counter ÷ sampled-power energy", ratio(data["counter_joules"], data["sampled_joules"]), 0.85, 1.15, "×"),
            self.e("average power while copying, % of the power limit", pct(avg, env.snapshot.power_limit_w), 20, 105, " %"),
        ]  # fmt: skip

    # -- 7 ---------------------------------------------------------------------------------------
    def batch(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Decode at batch 1, 4, 16, 64 at one depth (16K): full attention and the fixed state (PyTorch
        ops, the established ways), tokens/s per sequence and in total, and the largest batch that fits."""
        preset = dataclasses.replace(PRESETS[self.s.preset], depth_seconds=self.s.batch_seconds)
        result = batch_bench.run_batch(
            preset, self.env, batch_bench.BATCHES, self.s.batch_depth, self.should_stop
        )
        data = self.partial = result.to_dict()
        att, st = ({p.batch: p for p in x.points if p.fits} for x in result.series)
        both = max(set(att) & set(st), default=None)
        total = lambda points, b: points[b].tokens_per_s_total if b in points else None  # noqa: E731
        return data, [
            self.e(f"largest batch that fits at depth {self.s.batch_depth:,}, fixed state ÷ full attention",
                   ratio(result.series[1].max_batch, result.series[0].max_batch), 10, None, "×", needs_cuda=False),
            self.e("fixed state, batch 64 ÷ batch 1, tokens/s in all", ratio(total(st, 64), total(st, 1)), 4, None, "×"),
            self.e(f"fixed state ÷ full attention, tokens/s in all at batch {both}", ratio(total(st, both), total(att, both)), 1.5, None, "×"),
            self.e("full attention, largest batch run ÷ batch 1, tokens/s in all", ratio(total(att, max(att, default=None)), total(att, 1)), unit="×"),
        ]  # fmt: skip

    # -- 5 ---------------------------------------------------------------------------------------
    def bench_command(self, out: Path) -> list[str]:
        """Check 5's benchmark, without the ways that failed in check 6."""
        skip = ["--skip-ways", ",".join(self.skip_ways)] if self.skip_ways else []
        return [sys.executable, "-m", "core.gpu.bench", *self.s.bench_args, *skip, "--out", str(out)]

    def end_to_end(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        out = self.folder / "bench.json"
        limit = max(30.0, self.deadline - time.perf_counter() - CHECK5_MARGIN_S)
        cmd = self.bench_command(out)
        print(f"  {' '.join(cmd)}  (limit {limit:.0f} s)", flush=True)
        run = child_run.run_with_limit(cmd, limit, STOP_GRACE_S, self.should_stop, ROOT, _child_env())
        proc, tail = run, run.output
        result = json.loads(out.read_text()) if out.exists() else {}
        data = {"command": cmd, "exit_status": proc.exit_status, "seconds": run.seconds, "timed_out": run.timed_out,
                "output_tail": tail[-3000:], "complete": result.get("complete")}  # fmt: skip
        return data, [
            self.e("bench exit status", proc.exit_status, 0, 0, needs_cuda=False),
            self.e(
                "bench wrote a complete JSON", float(bool(result.get("complete"))), 1, 1, needs_cuda=False
            ),
            *_e2e_expectations(result, self.e),
        ]


def _e2e_expectations(result: dict[str, Any], e: Callable[..., dict[str, Any]]) -> list[dict[str, Any]]:
    """What the lesson claims, read from the bench JSON: attention slows, the state holds, the spill falls off a cliff, MoE wins."""
    series = {s["model"]: s["points"] for s in result.get("context", {}).get("series", [])}
    att, st = series.get("full attention", []), series.get("fixed state", [])
    budget = (result.get("context_budget") or {}).get("series", [{}])[0]
    resident_at = {p["depth"]: p["tokens_per_s"] for p in att}
    spilled = [p for p in budget.get("points", []) if p["spilled_bytes"] and p["depth"] in resident_at]
    rows = (result.get("moe") or {}).get("rows", [])
    dense, moe = (rows + [{}, {}])[:2]
    again = (result.get("moe") or {}).get("dense_again") or {}
    return [
        e("full attention: deepest ÷ depth 0", ratio(att[-1]["tokens_per_s"], att[0]["tokens_per_s"]) if len(att) > 1 else None, None, 0.9, "×"),
        e("fixed state: deepest ÷ depth 0", ratio(st[-1]["tokens_per_s"], st[0]["tokens_per_s"]) if len(st) > 1 else None, 0.85, 1.15, "×"),
        e("spilled ÷ resident at the first spilled depth", ratio(spilled[0]["tokens_per_s"], resident_at[spilled[0]["depth"]]) if spilled else None, None, 0.7, "×"),
        e("MoE ÷ dense tokens/s", ratio(moe.get("tokens_per_s"), dense.get("tokens_per_s")), 1.5, None, "×"),
        e("MoE ÷ dense net J/token", ratio(moe.get("net_joules_per_token"), dense.get("net_joules_per_token")), None, 0.9, "×"),
        e("dense again after the MoE ÷ dense before it, tokens/s", ratio(again.get("tokens_per_s"), dense.get("tokens_per_s")), 0.95, 1.05, "×"),
        e("dense again after the MoE ÷ dense before it, average watts", ratio(again.get("avg_watts"), dense.get("avg_watts")), 0.9, 1.1, "×"),
    ]  # fmt: skip


def _key(kind: str, ffn: str, depth: int, way: str | None = None) -> str:
    """Where check 1 keeps a run: 'state/dense/d0', or 'state+triton/dense/d0' for another way."""
    return f"{kind}{'' if way is None else '+' + way}/{ffn}/d{depth}"


def _failed_key(data: dict[str, Any], kind: str, ffn: str, depths: tuple[int, ...], way: str | None) -> str:
    """Where a run's error goes: under the first depth without figures, so those before it keep theirs."""
    failed = next((d for d in depths if _key(kind, ffn, d, way) not in data), depths[0])
    return _key(kind, ffn, failed, way)


def _state_parity(preset: Any, env: BenchEnv) -> float | str | None:
    """The fused Triton step against the PyTorch ops: a two-layer fixed-state model of the preset's
    widths, the same weights and state, three steps each way; max |difference| ÷ max |output|.
    None where Triton cannot run (on the CPU it runs in Triton's interpreter, on the tiny preset)."""
    preset = dataclasses.replace(preset, n_layers=2)  # the preset's widths; two layers are enough
    torch.manual_seed(0)
    ops = build("state", preset, env.device, env.dtype)
    if "triton" not in ops.kernel_ways():
        return None
    fused = build("state", preset, env.device, env.dtype)
    fused.load_state_dict(ops.state_dict())
    fused.use_way("triton")
    try:
        for model in (ops, fused):
            model.allocate(8)
            torch.manual_seed(1)
            model.fill(5)
        token = torch.tensor([3], device=env.device)
        for _ in range(3):
            a, b = ops.step(token).float(), fused.step(token).float()
        return float((a - b).abs().max() / a.abs().max())
    except Exception as error:  # a way that cannot run here is a finding, kept in words
        return error_line(error, 400, whole=True)
    finally:
        for model in (ops, fused):
            model.release()
        del ops, fused
        env.free_memory()


def _best(run: dict[str, Any] | None) -> float | None:
    """A run's graphed tokens/s, else its eager ones."""
    return run and (run.get("graphed_tokens_per_s") or run.get("eager_tokens_per_s"))


def _moe_share(data: dict[str, Any], preset: Any) -> Callable[[dict[str, Any] | None], float | None]:
    """MoE ÷ dense speed as a share of dense ÷ MoE bytes per step (each way's own bytes), against the
    dense model of the MoE's total width in `data`."""
    dense = data.get(f"attention/dense_moe_size/d{preset.moe_depth}")

    def share(moe: dict[str, Any] | None) -> float | None:
        if not moe or "error" in moe or not dense or "error" in dense:
            return None
        return ratio(
            ratio(_best(moe), _best(dense)),
            ratio(dense["bytes_per_step"]["total"], moe["bytes_per_step"]["total"]),
        )

    return share


def _ways_to_skip(
    runs: dict[str, Any], data: dict[str, Any], preset: Any, fused_state: bool, newer: list[str]
) -> list[str]:
    """The newer ways check 5's benchmark must not try, default-deny: every one (NEWER_WAYS) except
    those that ran in a decode run here and gave the PyTorch way's outputs (a crash in check 5's
    process would end the whole benchmark; a way never run here is never trusted there)."""
    good = set()
    if fused_state:
        fused = runs.get(_key("state", "dense", 0, "triton"))
        state_parity = _number(data["state_parity"])
        if fused and "error" not in fused and state_parity is not None and state_parity <= 0.03:
            good.add(part_way(STATE_PART, "triton"))
    for kind in newer:
        impl, run = MOE_KINDS[kind], runs.get(f"attention/{kind}/d{preset.moe_depth}")
        parity = _number(data["moe_parity"].get(impl))
        if run and "error" not in run and parity is not None and parity <= 0.03:
            good.add(part_way(MOE_PART, impl))
    return [w for w in NEWER_WAYS if w not in good]


def _number(value: Any) -> float | None:
    """A measured number, or None for a reason given in words."""
    return value if isinstance(value, float) else None


def _moe_parity(preset: Any, env: BenchEnv) -> dict[str, float | str]:
    """Each in-place MoE way against the gathered one on one layer of the preset's widths, the same
    weights and token: max |difference| ÷ max |output| (bf16 rounding is ~0.01). The ways this
    device cannot run are left out; on the CPU the Triton kernels run in Triton's interpreter."""
    torch.manual_seed(0)
    layer = moe_layer(preset, env.device, env.dtype)
    h = torch.randn(1, preset.d_model, device=env.device, dtype=env.dtype)
    reference = layer(h).float()
    out: dict[str, float | str] = {}
    for impl in layer.runnable_impls():
        if impl != "gather":
            layer.use(impl)
            try:
                out[impl] = float((layer(h).float() - reference).abs().max() / reference.abs().max())
            except Exception as error:  # a way that cannot run here is a finding, kept in words
                out[impl] = error_line(error, 400, whole=True)
    del layer
    env.free_memory()
    return out


def _moe_layer_speeds(preset: Any, env: BenchEnv) -> dict[str, dict[str, Any]]:
    """One feed-forward layer alone, each way: `n_layers` layers with their own weights called in
    turn (in one CUDA graph on a GPU), so the time per layer and the weight bytes it reads per
    second show what the MoE's way of reading its experts costs, beside a dense layer of the
    same total width. Triton's kernels are left out on the CPU (its interpreter is no timing)."""
    d, n = preset.d_model, preset.n_layers
    h = torch.randn(1, d, device=env.device, dtype=env.dtype)
    out: dict[str, dict[str, Any]] = {}
    dense = [DenseFFN(d, preset.moe_ffn_hidden, env.device, env.dtype) for _ in range(n)]
    seconds = probes.seconds_per_layer(dense, h)
    out["dense"] = {"us_per_layer": seconds * 1e6, "weight_bytes_per_s": dense[0].traffic().weights / seconds}
    del dense
    env.free_memory()
    layers = [moe_layer(preset, env.device, env.dtype) for _ in range(n)]
    for impl in layers[0].runnable_impls():
        if impl == "triton" and env.device.type != "cuda":
            continue
        try:
            for layer in layers:
                layer.use(impl)
            seconds = probes.seconds_per_layer(layers, h)
            out[impl] = {
                "us_per_layer": seconds * 1e6,
                "weight_bytes_per_s": layers[0].traffic().weights / seconds,
            }
        except Exception as error:  # a way that cannot run here is a finding, kept in words
            out[impl] = {"error": error_line(error, 400, whole=True)}
        finally:
            env.free_memory()
    del layers
    env.free_memory()
    return out


def _child_env() -> dict[str, str]:
    """This environment, with the project on the child's import path."""
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _elem_bytes(dtype: torch.dtype) -> int:
    return torch.finfo(dtype).bits // 8


def _bandwidth(env: BenchEnv, nbytes: int) -> Bandwidth:
    device = probes.copy_bandwidth(env.device, nbytes)
    link = probes.h2d_bandwidth(min(nbytes, GIB), pinned=True) if env.device.type == "cuda" else device / 2
    return Bandwidth(device, link, "validate: device copy; pinned host→device")


def _energy_sources(env: BenchEnv) -> tuple[Callable[[], float | None], Callable[[], float | None], str]:
    """NVML's counter and power for the GPU; a synthetic 50 W card on a dry run (code path only).
    A GPU without NVML reads nothing, so its energy expectations fail with the reason in `source`."""
    if env.gpu is not None:
        return env.gpu.energy_mj, env.gpu.power_w, "NVML"
    if env.device.type == "cuda":
        reason = env.snapshot.reason or "NVML gave no device"
        return (lambda: None), (lambda: None), f"none: {reason}"
    t0 = time.perf_counter()
    return (lambda: 1e6 + 50_000.0 * (time.perf_counter() - t0)), (lambda: 50.0), "synthetic 50 W (dry run)"


def _peak_bandwidth(env: BenchEnv) -> float | None:
    """NVML's 2 × max memory clock × bus width ÷ 8, else the same from torch's device properties."""
    if env.snapshot.peak_bandwidth_bytes_per_s or env.device.type != "cuda":
        return env.snapshot.peak_bandwidth_bytes_per_s
    props = torch.cuda.get_device_properties(env.device)
    clock_khz, bus = getattr(props, "memory_clock_rate", None), getattr(props, "memory_bus_width", None)
    return 2.0 * clock_khz * 1e3 * bus / 8.0 if clock_khz and bus else None


def main(argv: list[str] | None = None) -> int:
    parser = cli_io.Parser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder for validate.json and bench.json")
    parser.add_argument(
        "--cpu-ok", action="store_true", help="without a GPU, do a dry run on the CPU (tiny sizes)"
    )
    parser.add_argument(
        "--budget-seconds",
        type=cli_io.positive_float,
        default=DEFAULT_BUDGET_S,
        help=f"whole-run time budget; check 5 may overrun it by at most {STOP_GRACE_S - CHECK5_MARGIN_S:.0f} s "
        "(the time its benchmark gets to stop cleanly)",
    )
    parser.add_argument(
        "--checks",
        default="1,2,3,4,5,6,7",
        help="which checks to run, e.g. 1,3 (they run as 1, 2, 3, 4, 7, 6, 5)",
    )
    parser.add_argument("--child-reference", default=None, help=argparse.SUPPRESS)  # check 6's own process
    args = parser.parse_args(argv)
    cuda = torch.cuda.is_available()
    if not cuda and not args.cpu_ok:
        cli_io.fail(PROG, "this PyTorch sees no CUDA GPU; pass --cpu-ok for a CPU dry run")
    chosen = {c.strip() for c in args.checks.split(",") if c.strip()}
    if not chosen or not chosen <= set("1234567"):
        cli_io.fail(PROG, f"--checks {args.checks!r}: pick from 1,2,3,4,5,6,7")
    why = cli_io.check_out_path(Path(args.out), is_dir=True)
    if why:
        cli_io.fail(PROG, why)
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    if not cuda:
        torch.set_num_threads(1)
        os.environ.setdefault("TRITON_INTERPRET", "1")  # the Triton MoE's parity check, interpreted
    env = make_env("cuda" if cuda else "cpu")
    try:
        with cli_io.StopOnSignal() as stop:
            v = Validator(env, GPU if cuda else DRY, folder, args.budget_seconds, stop)
            six = v.newer_kernels
            if args.child_reference:  # this is check 6's process: run it here, from check 1's runs
                v.load_reference(Path(args.child_reference))
                six = v.newer_kernels_here
            v.save()  # the device and versions are on disk before anything can go wrong
            print(
                f"{PROG}: {v.out['mode']} on {env.device_label} ({env.dtype}); JSON in {folder}/validate.json"
            )
            for key, name, fn in (("1", "1 decode", v.decode), ("2", "2 bandwidth", v.bandwidth), ("3", "3 spill", v.spill),
                                  ("4", "4 energy", v.energy), ("7", "7 batch", v.batch), ("6", "6 newer kernels", six),
                                  ("5", "5 end to end", v.end_to_end)):  # fmt: skip
                if key in chosen:
                    v.run(name, fn)
            v.save()
    finally:
        env.close()  # pairs make_env's nvmlInit
    summary = v.out["summary"]
    print(
        f"\n{summary['PASS']} passed, {summary['FAIL']} failed, {summary['SKIP']} skipped (need a GPU), "
        f"{summary['INFO']} recorded without a range"
    )
    if stop.exit_code:
        return stop.exit_code
    return 1 if summary["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
