"""Check 1, run first — decode: kernels per step (profiler); eager vs CUDA-graph tokens/s at depth 0 and
64K for full attention and the fixed state, against the roofline of the bytes a step moves; MoE
(experts gathered) vs dense — the ways that ran on the first H200 — with DeepSeek-V3's experts (84 MiB
in bf16), as many layers as the card's free memory holds (core.gpu.suites.moe_sizing)."""

from __future__ import annotations

from typing import Any

from bench.gpu_validate.decode_runs import best, moe_share, run_at
from bench.gpu_validate.runner import Expectations, Validator
from bench.gpu_validate.verdicts import pct, ratio
from core.gpu.decode.ffn import MOE_FFN_WAYS, MOE_WAY_WORDS
from core.gpu.timing.decode_timer import random_tokens
from core.gpu.timing.steps import Stopped

CHECK, NAME = "1", "1 decode"


def run(v: Validator) -> tuple[dict[str, Any], Expectations]:
    """The ways that ran on the first H200 only (PyTorch ops, experts gathered): a sticky CUDA error
    in newer code (check 6, run after check 4) cannot take these figures, or checks 2–4, with it."""
    env, s = v.env, v.s
    preset, mp = v.decode_preset(), v.moe_preset()
    tokens = random_tokens(preset, env.device)
    data = v.partial = {
        "copy_bandwidth_bytes_per_s": v.bw.device_bytes_per_s,
        "moe_sizes": v.moe_sizes(),
    }
    gathered = [k for k, way in MOE_FFN_WAYS.items() if way == "gather"]
    for kind, ffn, depths, p in (
        ("attention", "dense", (0, s.deep), preset),
        ("state", "dense", (0, s.deep), preset),
        ("attention", "dense_moe_size", (mp.moe_depth,), mp),
        *[("attention", k, (mp.moe_depth,), mp) for k in gathered],
    ):
        if v.stop.is_set():
            raise Stopped
        try:
            v.time_decode(data, kind, ffn, depths, p, tokens)
        finally:
            env.free_memory()
    v.decoded = data
    a0, ad = run_at(data, "attention", "dense", 0), run_at(data, "attention", "dense", s.deep)
    s0, sd = run_at(data, "state", "dense", 0), run_at(data, "state", "dense", s.deep)
    moes = {k: run_at(data, "attention", k, mp.moe_depth) for k in gathered}
    share = moe_share(data, mp)
    sizes = data["moe_sizes"]
    layers = preset.n_layers
    e = v.e
    return data, [
        e("kernels per step per layer, full attention", a0.kernels_per_step / layers, 4, 40),
        e("host-blocking calls in a step", sum(a0.host_blocking_calls.values()), 0, 0),
        e("graphed ÷ eager at depth 0, full attention", ratio(a0.graphed_tokens_per_s, a0.eager_tokens_per_s), 1.2, None, "×"),
        e("graphed % of roofline at depth 0, full attention", pct(best(a0), a0.roofline_tokens_per_s), 35, 110, " %"),
        e(f"graphed % of roofline at depth {s.deep:,}, full attention", pct(best(ad), ad.roofline_tokens_per_s), 35, 110, " %"),
        e("graphed % of roofline at depth 0, fixed state (PyTorch ops)", pct(best(s0), s0.roofline_tokens_per_s), 25, 110, " %"),
        e("fixed state (PyTorch ops) ÷ full attention at depth 0", ratio(best(s0), best(a0)), 0.7, None, "×"),
        e(f"fixed state (PyTorch ops) ÷ full attention at depth {s.deep:,}", ratio(best(sd), best(ad)), 1.5, None, "×"),
        e("host-blocking calls in an MoE step, experts gathered", sum(sum(m.host_blocking_calls.values()) for m in moes.values()), 0, 0),
        *[e(f"MoE, {MOE_WAY_WORDS[MOE_FFN_WAYS[k]]} ÷ dense speed, as a share of the byte ratio", share(m)) for k, m in moes.items()],
        e(f"one {sizes.get('shape') or 'sized'} expert's read at the measured copy speed", sizes.get("expert_read_us"), unit=" µs"),
        e("attention, cache and head, share of the MoE step's bytes", sizes.get("attention_share")),
    ]  # fmt: skip
