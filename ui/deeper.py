"""The collapsed "Go deeper" sections for engineers (lessons 6–9): closed by default, so a beginner's
path never needs them. Numbers come from `core/walkthrough.py`; each statement names its source."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.specs import KIMI_K3
from core.units import format_bytes, format_si
from core.walkthrough import attn_res_costs, chunk_costs, chunk_example, expert_reads, gate_bounds
from ui.lesson import link_to

_TITLE = "Go deeper (for engineers)"


def _matrix(name: str, m: np.ndarray) -> str:
    rows = m.reshape(m.shape[0], -1) if m.ndim > 1 else m.reshape(1, -1)
    body = r" \\ ".join(" & ".join(f"{x:+.3f}" for x in row) for row in rows)
    return rf"{name} = \begin{{bmatrix}} {body} \end{{bmatrix}}"


def go_deeper_chunks() -> None:
    """Lesson 6: the chunked algorithm on real numbers, its cost, and why decoding stays recurrent."""
    with st.expander(_TITLE, icon=":material/engineering:"):
        ex = chunk_example()
        st.markdown(
            "**The chunked delta rule on a small example** — 4 tokens, chunks of 2, keys and values of width 3, "
            "computed by `core/ops/delta_rule.py`. For the first chunk, with strictly lower "
            "L = strictLower(diag(β) K Kᵀ), the UT transform is T = (I + L)⁻¹ diag(β); then W = T K and U = T V:"
        )
        for name in ("K", "V", "beta", "L", "T", "W", "U"):
            st.latex(_matrix(r"\beta" if name == "beta" else name, ex[name]))
        st.markdown(
            "The board handed from chunk 1 to chunk 2, S ← S + Kᵀ(U − W S), then the board after chunk 2:"
        )
        st.latex(_matrix("S_1", ex["boards"][0]) + r",\quad " + _matrix("S_2", ex["boards"][1]))
        st.caption(f"Chunked vs token-by-token outputs differ by {ex['max_gap']:.1e} (fp64 rounding).")
        c = chunk_costs(8192, 64, 128)
        st.markdown(
            "**Cost, per head, for T = 8,192 tokens, C = 64, d = 128** (leading order): work inside chunks grows "
            f"with T·C·d ≈ {format_si(c['inside_chunks'])} multiply-adds; the hand-overs with T·d² ≈ "
            f"{format_si(c['handovers'])}; steps that must wait for the one before: T/C = "
            f"{c['sequential_chunked']:,.0f} instead of {c['sequential_recurrent']:,.0f}. "
            "Everything inside a chunk is a matrix product, which is what GPU tensor cores are built for "
            "(DeltaNet paper, arXiv 2406.06484, App. B; fla `fla/ops/delta_rule/README.md`)."
        )
        st.markdown(
            "**Why training and prefill use chunks, decoding the recurrence.** In training and prefill all T tokens "
            "are known at once, so the chunks' matrix products run in parallel and only T/C hand-overs wait. "
            "Decoding makes one token at a time: there is nothing to batch along time, and one recurrent step "
            "(about 3·d² multiply-adds per head for the delta rule) is exactly a chunk of size 1. fla's layers pick "
            "`fused_recurrent` kernels at inference for inputs of up to 64 tokens (a decoding step is 1) and `chunk` "
            "kernels otherwise; training runs chunk mode only (fla `fla/layers/delta_net.py`, `gated_deltanet.py`)."
        )


def go_deeper_forgetting() -> None:
    """Lesson 7: KDA's decay parameterisation, the chunked form's stability, the layer around it."""
    with st.expander(_TITLE, icon=":material/engineering:"):
        b = gate_bounds(-5.0, 64)
        st.markdown(
            "**How KDA parameterises its per-channel decay.** The gate is produced in log space, one value per key "
            "channel: Kimi Linear uses g = −exp(A_log)·softplus(f_b(f_a(x)) + dt_bias) with a low-rank f_a: "
            "hidden→128, f_b: 128→H·d_k (fla `fla/layers/kda.py`, `naive_kda_gate`). Kimi K3 swaps the activation "
            "for a lower-bounded one, g = lb·sigmoid(exp(A_log)·(f_b(f_a(x)) + dt_bias)) with lb = −5 "
            "(K3 config `gate_lower_bound: -5.0`; fla `chunk_kda` docstring), so one step keeps at least "
            f"e⁻⁵ = {b['min_keep_per_step']:.4f} of a channel."
        )
        st.markdown(
            "**Why the chunked form needs care.** Inside a chunk each pair of tokens (r, j) decays by e^(Γ_r − Γ_j) "
            "per channel. Splitting it into e^(Γ_r)·e^(−Γ_j) would make one matrix product, but e^(−Γ_j) grows "
            f"without bound: at the strongest fade (−5 a step) it passes the fp32 maximum (e^{b['f32_max_log']:.1f}) "
            f"after {b['steps_to_overflow_f32']} steps, and a chunk of 64 can fade by e^{b['chunk_log_fade']:.0f}. "
            "fla's naive code materialises a (C, C, d_k) tensor of the pairwise decays and its kernels tile it; "
            "this course's `core/ops/kda.py` cuts the chunk into halves, quarters, …, and between neighbouring "
            "blocks splits at their shared edge, where both factors are ≤ 1, so every block is an ordinary matmul "
            "and no factor overflows. Tested equal to the recurrence in `tests/test_ops_chunk_parity.py`."
        )
        st.markdown(
            "**The layer around it** (fla `fla/layers/kda.py`; K3 config): q, k and v each pass a short causal "
            "convolution (kernel 4) and SiLU; q and k are L2-normalised (that keeps I − β k kᵀ contractive); "
            "β = sigmoid(b_proj(x)); the output is o_proj(RMSNorm(o) ⊙ sigmoid(g_proj(x))) — low-rank g_proj in "
            "Kimi Linear, full-rank in K3 (`use_full_rank_gate: true`). The convolution is why a KDA layer also "
            "keeps a small buffer of the last inputs beside its board."
        )
        link_to("planner", "Size the board and the convolution buffer of a real model in the planner")


def go_deeper_k3() -> None:
    """Lesson 8: what Attention Residuals cost in memory and compute."""
    with st.expander(_TITLE, icon=":material/engineering:"):
        c = attn_res_costs(KIMI_K3)
        st.markdown(
            "**What Attention Residuals cost.** Each decoder layer mixes the earlier sources twice (before attention "
            f"and before the MoE) and once more before the final norm: {c['mixes_per_token']:,.0f} mixes per token. "
            f"With blocks of 12 layers a mix sees at most {c['max_sources']:.0f} sources (the embedding, the "
            "completed blocks and the running partial block). A mix is one dot product per source with its "
            "pseudo-query (on the RMS-normalised source), a softmax, and a weighted sum: about "
            f"{format_si(c['flops_per_token'])}FLOPs per token, {c['share_of_weight_flops']:.3%} of the 2 FLOPs per "
            f"active weight. Parameters: {format_si(c['params'])} (a pseudo-query and a norm weight per mix)."
        )
        st.markdown(
            "**Memory.** The mix looks back over depth, not over time, so nothing is added to the KV cache. What "
            f"stays in flight is the block summaries of the token being computed: ≤ {c['max_sources']:.0f} × hidden "
            f"in bf16 = {format_bytes(c['in_flight_bytes_per_token'])} per token during a forward pass. Kimi reports "
            "'<2 % on typical workloads' of inference latency (Kimi_Moonshot launch thread; facts.md §1.8) — more "
            "than the FLOPs suggest, because the mixes are small, memory-bound operations between the big ones."
        )


def go_deeper_experts() -> None:
    """Lesson 9: expert parallelism, and why the batch changes the bytes read."""
    with st.expander(_TITLE, icon=":material/engineering:"):
        rows = expert_reads(KIMI_K3, 4.25, [1, 4, 16, 64, 256])
        st.markdown(
            "**At batch 1 a token reads only the experts it wakes. A batch reads the union.** One decoding step "
            "serves every sequence of the batch at once: the shared weights are read once for all of them, and each "
            "routed expert that *any* token picked is read once. With uniform, independent routing a batch of B "
            "tokens touches about E·(1 − (1 − k/E)^B) of the E experts (`core/plan/experts.py`; real routers are "
            "skewed, so fewer). For Kimi K3 (896 routed, 16 per token, experts in MXFP4):"
        )
        st.dataframe(
            {
                "batch": [r["batch"] for r in rows],
                "distinct experts per layer": [f"{r['experts']:,.0f}" for r in rows],
                "expert bytes per step": [format_bytes(r["step_bytes"]) for r in rows],
                "expert bytes per token": [format_bytes(r["per_token_bytes"]) for r in rows],
            },
            hide_index=True,
        )
        st.markdown(
            "So the bytes *per token* fall as the batch grows, until every expert is read at every step; after that "
            "the step is bound by compute or by the cache. **Expert parallelism** spreads the experts over GPUs and "
            "sends each token to the GPUs that hold its experts (an all-to-all dispatch and combine), so each GPU "
            "reads only its own experts. DeepSeek-V3's report describes decoding with expert parallelism over 320 "
            "GPUs, one routed expert per GPU plus redundant copies of busy ones (arXiv 2412.19437, §3.4.2)."
        )
        link_to("planner", "Try the batch setting in the planner")


def go_deeper_serving() -> None:
    """The planner: serving a hybrid — batching, prefix caching, speculative decoding, engine support."""
    with st.expander("Go deeper: serving a hybrid (fixed state + KV cache)", icon=":material/engineering:"):
        st.markdown(
            "**Batching.** Every sequence keeps its own fixed state, whatever its length — the planner's fixed-state "
            "line is batch × one state. vLLM keeps the linear layers' states and the full-attention pages in one "
            "memory pool (its hybrid KV cache manager), choosing the full-attention block size so that a block and "
            "a state take the same physical memory (vLLM blog, 'vLLM Now Supports Qwen3-Next', 2025-09-11). The "
            "planner counts bytes exactly and leaves that page rounding out."
        )
        st.markdown(
            "**Prefix caching.** A KV cache can be shared block by block: a token's keys and values do not depend on "
            "later tokens. A recurrent state is a summary of the whole prefix, so reusing a prefix needs a snapshot "
            "of the state taken exactly where the prefix ends — one snapshot per reusable point instead of one "
            "block per 16 tokens. The same vLLM post lists 'better memory management and prefix caching for hybrid "
            "models' as work still to do."
        )
        st.markdown(
            "**Speculative decoding.** Rejected draft tokens leave a KV cache by truncation. A state that already "
            "absorbed them cannot be truncated, so an engine keeps the state after each draft position (or a "
            "snapshot before the drafts) and keeps the one after the last accepted token. In transformers 5.x a "
            "linear-attention cache layer reports itself not croppable once it holds a recurrent state, while its "
            "convolution buffer can record past inputs for rollback (`cache_utils.LinearAttentionCacheLayerMixin`: "
            "`is_croppable`, `activate_past_recording`). vLLM runs Qwen3-Next's multi-token prediction natively "
            "(same post)."
        )
        st.markdown(
            "**Who runs these layers today.** vLLM: Qwen3-Next (Gated DeltaNet) with flash-linear-attention's Triton "
            "kernels (same post). transformers 5.24: `qwen3_next` and `kimi_linear` (KDA + MLA) model classes — "
            "the cache check of this planner builds both (`tests/test_plan_oracle.py`). llama.cpp: the Kimi K3 text "
            "model from release b10448 (facts.md §3). flash-linear-attention: chunked and recurrent kernels for "
            "Gated DeltaNet and KDA (`fla/ops/gated_delta_rule`, `fla/ops/kda`)."
        )
