"""Check 6, run sixth (after 7, in its own process under a hard time limit) — newer kernels: a ≤ 20 s
preflight (Triton's version, the C toolchain, libcuda; each newer way launched and graph-captured
once), then the fused Triton fixed-state step and the in-place MoE ways (grouped GEMM, Triton)
timed and checked against the PyTorch ways; the fastest MoE way vs dense. Default-deny: check 5
skips every newer way (`--skip-ways`) except those this check ran and found to compute what the
PyTorch ways do.

`run` starts the check's own process (`--child-reference`), which runs `run_here`; a newer way's
verdict is taken only from a record that process finished (`child_record`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

from bench.gpu_validate import child_run, preflight, probes
from bench.gpu_validate.decode_runs import DecodeRun, best, failed_key, moe_share, run_at, run_key
from bench.gpu_validate.runner import (
    CHECK5_MIN_S,
    CHECK6_GRACE_S,
    CHECK_BUDGET_S,
    NEWER_WAYS,
    ROOT,
    Expectations,
    Validator,
    child_env,
)
from bench.gpu_validate.verdicts import expect, pct, ratio
from core.gpu.decode import triton_support
from core.gpu.decode.ffn import MOE_FFN_WAYS, MOE_WAY_WORDS, MOE_WAYS, DenseFFN, way_available
from core.gpu.decode.models import MOE_PART, STATE_PART, build, moe_layer, part_way
from core.gpu.output.export import to_json
from core.gpu.timing.bench_env import BenchEnv
from core.gpu.timing.decode_timer import random_tokens
from core.gpu.timing.errors import error_line
from core.gpu.timing.steps import Stopped

CHECK, NAME = "6", "6 newer kernels"
MOE_SHARE_TARGET = 0.6  # the fastest MoE way's speed ratio ÷ its byte ratio (issue 31's target)


def run(v: Validator) -> dict[str, Any]:
    """Check 6 in its own process under a hard time limit, given check 1's runs as its reference.
    Its verdict on each newer way is taken only from a record it finished: a process that crashed,
    hung or was stopped leaves every newer way out of check 5 (default-deny)."""
    sub = v.folder / "check6"
    sub.mkdir(parents=True, exist_ok=True)
    reference = sub / "reference.json"
    sizing = None if v.sizing is None else dataclasses.asdict(v.sizing)
    reference.write_text(to_json({"runs": v.decoded or {}, "moe_sizing": sizing}))
    limit = max(20.0, min(CHECK_BUDGET_S["6"], v.deadline - time.perf_counter() - CHECK5_MIN_S))
    cmd = [sys.executable, "-m", "bench.gpu_validate", "--out", str(sub), "--checks", "6",
           "--budget-seconds", f"{limit:.0f}", "--child-reference", str(reference)]  # fmt: skip
    cmd += [] if v.cuda else ["--cpu-ok"]
    print(f"  in its own process, limit {limit:.0f} s", flush=True)
    done = child_run.run_with_limit(cmd, limit, CHECK6_GRACE_S, v.should_stop, ROOT, child_env(),
                                    echo=lambda line: print(f"  | {line}", flush=True))  # fmt: skip
    return child_record(v, done, sub / "validate.json", limit)


def child_record(v: Validator, done: child_run.ChildRun, file: Path, limit: float) -> dict[str, Any]:
    """Check 6's record from its process's JSON, with how the process ended; `skip_ways` from it
    only when the record is whole and the process ended by itself."""
    try:
        record = json.loads(file.read_text())["checks"][NAME]
    except (OSError, ValueError, KeyError):
        record = {"expectations": []}
    process = {"exit_status": done.exit_status, "seconds": done.seconds, "timed_out": done.timed_out,
               "killed": done.killed, "limit_seconds": limit, "output_tail": done.tail}  # fmt: skip
    whole = "data" in record and "skip_ways" in record["data"] and not done.timed_out and not done.killed
    if whole:
        v.skip_ways = [w for w in record["data"]["skip_ways"] if w in NEWER_WAYS]
    else:
        why = "timed out" if done.timed_out else f"ended with status {done.exit_status}"
        record.setdefault("error", f"check 6's process {why} before its record was whole")
        record.setdefault("data_so_far", record.pop("data", None) or {})
        print(f"  ERROR {record['error']}; every newer way is left out of check 5", flush=True)
    record.pop("running", None)
    record["process"] = process
    record["skip_ways"] = v.skip_ways
    record["expectations"] = [
        *record.get("expectations", []),
        expect("check 6's process finished within its limit", float(not done.timed_out), 1, 1, needs_cuda=False),
        expect("check 6's process ended without an error", float(done.exit_status in (0, 1) and whole), 1, 1,
               needs_cuda=False),
    ]  # fmt: skip
    return record


def run_here(v: Validator) -> tuple[dict[str, Any], Expectations]:
    """The fused fixed-state kernel and the in-place MoE ways (grouped GEMM, Triton): a preflight
    (bench.gpu_validate.preflight: each launched and graph-captured once), then timed in the decode
    models, checked against the PyTorch ways, and each MoE way as one layer alone. Only the ways that
    pass every step here leave check 5's skip list."""
    env, s = v.env, v.s
    preset, mp = v.decode_preset(), v.moe_preset()
    tokens = random_tokens(preset, env.device)
    data = v.partial = {"moe_sizes": v.moe_sizes()}
    data["preflight"] = pre = preflight.run(mp, env.device, env.dtype)
    print(f"  preflight: {preflight.summary(pre)}", flush=True)
    v.save_partial()
    failed_pre = {w for w, r in pre["ways"].items() if not preflight.passed(r)}
    moe_ffns = [k for k, way in MOE_FFN_WAYS.items() if way_available(way, env.device, env.dtype,
                 mp.d_model, mp.expert_hidden, mp.moe_gated) and (v.cuda or way != "triton")
                 and part_way(MOE_PART, way) not in failed_pre]  # fmt: skip
    newer = [k for k in moe_ffns if MOE_FFN_WAYS[k] != "gather"]  # the MoE feed-forwards of a newer way
    data["moe_kinds_timed"] = moe_ffns  # validate.json's name for them
    fused_state = (v.cuda and triton_support.available(env.device)
                   and part_way(STATE_PART, "triton") not in failed_pre)  # fmt: skip
    # what check 1 measured is the reference; without it (--checks 6) this check measures it itself
    refs = dict(v.decoded or {})
    runs = [(kind, ffn, depths, None, p) for kind, ffn, depths, p in (
        ("state", "dense", (0, s.deep), preset), ("attention", "dense_moe_size", (mp.moe_depth,), mp),
        *[("attention", k, (mp.moe_depth,), mp) for k in moe_ffns if MOE_FFN_WAYS[k] == "gather"],
    ) if any(run_key(kind, ffn, d) not in refs for d in depths)]  # fmt: skip
    runs += [("state", "dense", (0, s.deep), "triton", preset)] if fused_state else []
    runs += [("attention", ffn, (mp.moe_depth,), None, mp) for ffn in newer]
    for kind, ffn, depths, way, p in runs:
        if v.stop.is_set():
            raise Stopped
        try:
            v.time_decode(refs, kind, ffn, depths, p, tokens, way)
        except Stopped:
            raise
        except Exception as error:  # one way that fails must not lose the others
            if way is None and ffn in ("dense", "dense_moe_size", "moe"):
                raise  # a reference: nothing here can be judged without it
            refs[failed_key(refs, kind, ffn, depths, way)] = DecodeRun(error=error_line(error, 400, whole=True)).to_dict()
        finally:
            data.update({k: val for k, val in refs.items() if k not in (v.decoded or {})})
            env.free_memory()
            v.save_partial()
    data["moe_parity"] = _moe_parity(mp, env)
    data["moe_layer"] = _moe_layer_speeds(mp, env)
    data["state_parity"] = _state_parity(preset, env)
    state_ways = {way: run_at(refs, "state", "dense", 0, way) for way in (None, "triton")}
    timed_ways = [w for w, r in state_ways.items() if r and r.ok]
    state_way = max(timed_ways, key=lambda w: best(state_ways[w]), default=None)
    data["state_fastest"] = state_way or "torch"
    ops0, fused0 = state_ways[None], state_ways["triton"]
    moes = {k: run_at(refs, "attention", k, mp.moe_depth) for k in MOE_FFN_WAYS}
    share = moe_share(refs, mp)
    shares = {k: share(m) for k, m in moes.items()}
    fastest = max((k for k in moes if shares[k] is not None), key=lambda k: best(moes[k]), default=None)
    data["moe_fastest"] = fastest
    data["skip_ways"] = v.skip_ways = _ways_to_skip(refs, data, mp, fused_state, newer)
    parity = data["moe_parity"]
    e = v.e
    return data, [
        *[e(f"preflight: {way} launched and graph-captured, outputs within {preflight.MATCH:g}",
            float(preflight.passed(r)), 1, 1) for way, r in pre["ways"].items()],
        *([e("preflight: each newer way launched and graph-captured", None, skip=True)] if "skipped" in pre else []),
        e("fixed state at depth 0, one fused Triton kernel ÷ PyTorch ops", ratio(best(fused0), best(ops0)) if fused0 and fused0.ok else None, unit="×", skip=not fused_state),
        e("fixed state, fused Triton step vs PyTorch ops: max |difference| ÷ max |output| after 3 steps", _number(data["state_parity"]), None, 0.03, needs_cuda=False, skip=data["state_parity"] is None),
        e("MoE, fastest way ÷ dense speed, as a share of the byte ratio", fastest and shares[fastest], MOE_SHARE_TARGET, 1.2, "×"),
        e("host-blocking calls in an MoE step, newer ways", sum(sum(moes[k].host_blocking_calls.values()) for k in newer if moes[k] and moes[k].ok), 0, 0, skip=not newer),
        *[e(f"MoE, {MOE_WAY_WORDS[MOE_FFN_WAYS[k]]} ÷ dense speed, as a share of the byte ratio", shares[k], skip=k not in newer)
          for k in MOE_FFN_WAYS if MOE_FFN_WAYS[k] != "gather"],
        *[e(f"one MoE layer, {MOE_WAY_WORDS[way]}: weight bytes/s as % of one dense layer's",
            pct(_number(data["moe_layer"].get(way, {}).get("weight_bytes_per_s")),
                data["moe_layer"]["dense"]["weight_bytes_per_s"]), unit=" %", skip=way not in data["moe_layer"])
          for way in MOE_WAYS],
        *[e(f"MoE, {MOE_WAY_WORDS[way]} vs gathered: max |difference| ÷ max |output|", _number(parity.get(way)), None, 0.03,
            needs_cuda=False, skip=way not in parity)
          for way in MOE_WAYS if way != "gather"],
    ]  # fmt: skip


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


def _ways_to_skip(
    runs: dict[str, Any], data: dict[str, Any], preset: Any, fused_state: bool, newer: list[str]
) -> list[str]:
    """The newer ways check 5's benchmark must not try, default-deny: every one (NEWER_WAYS) except
    those that ran in a decode run here and gave the PyTorch way's outputs (a crash in check 5's
    process would end the whole benchmark; a way never run here is never trusted there)."""
    good = set()
    if fused_state:
        fused = run_at(runs, "state", "dense", 0, "triton")
        state_parity = _number(data["state_parity"])
        if fused and fused.ok and state_parity is not None and state_parity <= 0.03:
            good.add(part_way(STATE_PART, "triton"))
    for ffn in newer:
        way, measured = MOE_FFN_WAYS[ffn], run_at(runs, "attention", ffn, preset.moe_depth)
        parity = _number(data["moe_parity"].get(way))
        if measured and measured.ok and parity is not None and parity <= 0.03:
            good.add(part_way(MOE_PART, way))
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
    for way in layer.runnable_ways():
        if way != "gather":
            layer.use(way)
            try:
                out[way] = float((layer(h).float() - reference).abs().max() / reference.abs().max())
            except Exception as error:  # a way that cannot run here is a finding, kept in words
                out[way] = error_line(error, 400, whole=True)
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
    dense = [DenseFFN(d, preset.moe_ffn_hidden, env.device, env.dtype, preset.moe_gated) for _ in range(n)]
    seconds = probes.seconds_per_layer(dense, h)
    out["dense"] = {"us_per_layer": seconds * 1e6, "weight_bytes_per_s": dense[0].traffic().weights / seconds}
    del dense
    env.free_memory()
    layers = [moe_layer(preset, env.device, env.dtype) for _ in range(n)]
    for way in layers[0].runnable_ways():
        if way == "triton" and env.device.type != "cuda":
            continue
        try:
            for layer in layers:
                layer.use(way)
            seconds = probes.seconds_per_layer(layers, h)
            out[way] = {
                "us_per_layer": seconds * 1e6,
                "weight_bytes_per_s": layers[0].traffic().weights / seconds,
            }
        except Exception as error:  # a way that cannot run here is a finding, kept in words
            out[way] = {"error": error_line(error, 400, whole=True)}
        finally:
            env.free_memory()
    del layers
    env.free_memory()
    return out
