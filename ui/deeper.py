"""The "Go deeper" sections for engineers (Chunks, Forgetting, Kimi K3, Experts and the planner): shown
inline at Engineer depth only (ui/depth.py), so a beginner's Story never meets them. Numbers come from core (`core/ops/chunk_example.py`, `core/ops/kda.py`,
`core/plan/attn_res.py`, `core/plan/expert_bytes.py`); each statement names its source,
and the planner's "serving a hybrid" section links every statement (tests/app/test_serving_section.py).

Also the link that every "a token reads every weight — at batch 1" sentence carries: `planner_batch_link`
opens the planner with its batch setting filled in (tests/test_batch_one_wording.py)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

from core.i18n import N_, _
from core.ops.chunk_example import chunk_costs, chunk_example
from core.ops.kda import gate_bounds
from core.plan.attn_res import attn_res_costs
from core.plan.expert_bytes import expert_reads
from core.prefill import words as prefill_words
from core.specs import KIMI_K3
from core.units import format_bytes, format_count, format_small
from ui.charts import data_table
from ui.course import lesson
from ui.depth import engineer_section
from ui.lesson import link_to

_TITLE = N_("Go deeper (for engineers)")

PLANNER_BATCH = 16  # the batch the "at batch 1" links open the planner with, for the contrast


def planner_batch_link(label: str | None = None) -> None:
    """The link every "a token reads every weight (at batch 1)" sentence carries: the planner with its batch
    setting filled in from the link (ui/planner.py `restore_from_link`); plain text outside the router."""
    if label is None:
        label = _("How a batch shares the weights: open the planner at batch {batch}").format(
            batch=PLANNER_BATCH
        )
    target = lesson("planner")
    try:
        st.page_link(
            target.file, label=label, icon=":material/east:", query_params={"batch": str(PLANNER_BATCH)}
        )
    except Exception:  # the page was opened on its own (tests, `streamlit run lessons/…`)
        st.markdown(f"**→ {label}**")


def _matrix(name: str, m: np.ndarray) -> str:
    rows = m.reshape(m.shape[0], -1) if m.ndim > 1 else m.reshape(1, -1)
    body = r" \\ ".join(" & ".join(f"{x:+.3f}" for x in row) for row in rows)
    return rf"{name} = \begin{{bmatrix}} {body} \end{{bmatrix}}"


def go_deeper_chunks() -> None:
    """Chunks: the chunked algorithm on real numbers, its cost, and why decoding stays recurrent."""
    if not engineer_section(_(_TITLE)):
        return
    with st.container():
        ex = chunk_example()
        st.markdown(
            _(
                "**The chunked delta rule on a small example** — 4 tokens, chunks of 2, keys and values of width "
                "3, computed by `core/ops/delta_rule.py`. For the first chunk, with strictly lower "
                "L = strictLower(diag(β) K Kᵀ), the UT transform is T = (I + L)⁻¹ diag(β); then W = T K and U = T V:"
            )
        )
        for name in ("K", "V", "beta", "L", "T", "W", "U"):
            st.latex(_matrix(r"\beta" if name == "beta" else name, ex[name]))
        st.markdown(
            _("The board handed from chunk 1 to chunk 2, S ← S + Kᵀ(U − W S), then the board after chunk 2:")
        )
        st.latex(_matrix("S_1", ex["boards"][0]) + r",\quad " + _matrix("S_2", ex["boards"][1]))
        st.caption(
            _("Chunked vs token-by-token outputs differ by {gap} (fp64 rounding).").format(
                gap=format_small(ex["max_gap"])
            )
        )
        c = chunk_costs(8192, 64, 128)
        st.markdown(
            _(
                "**Cost, per head, for T = 8,192 tokens, C = 64, d = 128** (leading order): work inside chunks "
                "grows with T·C·d ≈ {inside} multiply-adds; the hand-overs with T·d² ≈ {handovers}; steps that "
                "must wait for the one before: T/C = {chunked} instead of {recurrent}. Everything inside a chunk "
                "is a matrix product, which is what GPU tensor cores are built for (DeltaNet paper, arXiv "
                "2406.06484, App. B; fla `fla/ops/delta_rule/README.md`)."
            ).format(
                inside=format_count(c["inside_chunks"]),
                handovers=format_count(c["handovers"]),
                chunked=f"{c['sequential_chunked']:,.0f}",
                recurrent=f"{c['sequential_recurrent']:,.0f}",
            )
        )
        st.markdown(
            _(
                "**Why training and prefill use chunks, decoding the recurrence.** In training and prefill all T "
                "tokens are known at once, so the chunks' matrix products run in parallel and only T/C hand-overs "
                "wait. Decoding makes one token at a time: there is nothing to batch along time, and one recurrent "
                "step (about 3·d² multiply-adds per head for the delta rule) is exactly a chunk of size 1. fla's "
                "layers pick `fused_recurrent` kernels for inputs of up to 64 tokens (a decoding step is 1) and "
                "`chunk` kernels otherwise. Gated DeltaNet's layer allows only chunk mode in training (fla "
                "`fla/layers/gated_deltanet.py`); DeltaNet's layer switches to the recurrent kernel for 64 tokens "
                "or fewer in training too (fla `fla/layers/delta_net.py`)."
            )
        )
        prefill = prefill_words.latest()  # the committed CPU prefill run, every number read from it
        if prefill is not None:
            st.markdown(prefill_words.prefill_sentence(prefill[1], prefill[0]))


def go_deeper_forgetting() -> None:
    """Forgetting: KDA's decay parameterisation, the chunked form's stability, the layer around it."""
    if not engineer_section(_(_TITLE)):
        return
    with st.container():
        b = gate_bounds(-5.0, 64)
        st.markdown(
            _(
                "**How KDA parameterises its per-channel decay.** The gate is produced in log space, one value per "
                "key channel: Kimi Linear uses g = −exp(A_log)·softplus(f_b(f_a(x)) + dt_bias) with a low-rank "
                "f_a: hidden→128, f_b: 128→H·d_k (fla `fla/layers/kda.py`, `naive_kda_gate`). Kimi K3 swaps the "
                "activation for a lower-bounded one, g = lb·sigmoid(exp(A_log)·(f_b(f_a(x)) + dt_bias)) with "
                "lb = −5 (K3 config `gate_lower_bound: -5.0`; fla `chunk_kda` docstring), so one step keeps at "
                "least e⁻⁵ = {keep} of a channel."
            ).format(keep=f"{b['min_keep_per_step']:.4f}")
        )
        st.markdown(
            _(
                "**Why the chunked form needs care.** Inside a chunk each pair of tokens (r, j) decays by "
                "e^(Γ_r − Γ_j) per channel. Splitting it into e^(Γ_r)·e^(−Γ_j) would make one matrix product, but "
                "e^(−Γ_j) grows without bound: at the strongest fade (−5 a step) it passes the fp32 maximum "
                "(e^{f32_max}) after {steps} steps, and a chunk of 64 can fade by e^{chunk_fade}. fla's naive code "
                "materialises a (C, C, d_k) tensor of the pairwise decays and its kernels tile it; this course's "
                "`core/ops/kda.py` cuts the chunk into halves, quarters, …, and between neighbouring blocks splits "
                "at their shared edge, where both factors are ≤ 1, so every block is an ordinary matmul and no "
                "factor overflows. Tested equal to the recurrence in `tests/core/ops/test_chunk_parity.py`."
            ).format(
                f32_max=f"{b['f32_max_log']:.1f}",
                steps=b["steps_to_overflow_f32"],
                chunk_fade=f"{b['chunk_log_fade']:.0f}",
            )
        )
        st.markdown(
            _(
                "**The layer around it** (fla `fla/layers/kda.py`; K3 config): q, k and v each pass a short causal "
                "convolution (kernel {kernel}) and SiLU; q and k are L2-normalised (that keeps I − β k kᵀ "
                "contractive); β = sigmoid(b_proj(x)); the output is o_proj(RMSNorm(o) ⊙ sigmoid(g_proj(x))) — "
                "low-rank g_proj in Kimi Linear, full-rank in K3 (`use_full_rank_gate: true`). The convolution is "
                "why a KDA layer also keeps a small buffer of the last inputs beside its boards (one per head)."
            ).format(kernel=KIMI_K3.linear.conv_kernel)
        )
        link_to("planner", _("Size a real model's boards and convolution buffers in the planner"))


def go_deeper_k3() -> None:
    """Kimi K3: what Attention Residuals cost in memory and compute."""
    if not engineer_section(_(_TITLE)):
        return
    with st.container():
        c = attn_res_costs(KIMI_K3)
        st.markdown(
            _(
                "**What Attention Residuals cost.** Each decoder layer mixes the earlier sources twice (before "
                "attention and before the MoE) and once more before the final norm: {mixes} mixes per token "
                "(`self_attention_res_proj`, `mlp_res_proj` and `output_attn_res_proj` in the weight listing). "
                "With blocks of {block} layers a mix sees at most {sources} sources (the embedding, the completed "
                "blocks and the running partial block). A mix is one dot product per source with its pseudo-query "
                "(on the RMS-normalised source), a softmax, and a weighted sum: about {flops} FLOPs per token, "
                "{share} of the 2 FLOPs per active weight. Parameters: {params} (a pseudo-query and a norm weight "
                "per mix)."
            ).format(
                mixes=f"{c['mixes_per_token']:,.0f}",
                block=KIMI_K3.attn_res_block_size,
                sources=f"{c['max_sources']:.0f}",
                flops=format_count(c["flops_per_token"]),
                share=f"{c['share_of_weight_flops']:.3%}",
                params=format_count(c["params"]),
            )
        )
        st.markdown(
            _(
                "**Memory.** The mix looks back over depth, not over time, so nothing is added to the KV cache. "
                "What stays in flight is the block summaries of the token being computed: ≤ {sources} × hidden in "
                "bf16 = {bytes} per token during a forward pass. Kimi's launch thread reports a 'negligible (<2%) "
                "inference latency overhead', measured in Kimi's own setting (the paper validates AttnRes on Kimi "
                "Linear 48B-A3B; arXiv 2603.15031), not on K3. It does not say how much of that is arithmetic, and "
                "this course has not measured it."
            ).format(sources=f"{c['max_sources']:.0f}", bytes=format_bytes(c["in_flight_bytes_per_token"]))
        )


def go_deeper_experts() -> None:
    """Experts: expert parallelism, and why the batch changes the bytes read."""
    if not engineer_section(_(_TITLE)):
        return
    with st.container():
        rows = expert_reads(KIMI_K3, 4.25, [1, 4, 16, 64, 256])
        st.markdown(
            _(
                "**At batch 1 a token reads only the experts it wakes. A batch reads the union.** One decoding step "
                "serves every sequence of the batch at once: the shared weights are read once for all of them, and "
                "each routed expert that *any* token picked is read once. With uniform, independent routing a batch "
                "of B tokens touches about E·(1 − (1 − k/E)^B) of the E experts (`core/plan/experts.py`; real "
                "routers are skewed, so fewer). For Kimi K3 ({experts} routed, {top_k} per token, experts in MXFP4):"
            ).format(experts=KIMI_K3.moe.experts, top_k=KIMI_K3.moe.top_k)
        )
        data_table(
            {
                _("batch"): [r["batch"] for r in rows],
                _("distinct experts per layer"): [f"{r['experts']:,.0f}" for r in rows],
                _("expert bytes per step"): [format_bytes(r["step_bytes"]) for r in rows],
                _("expert bytes per token"): [format_bytes(r["per_token_bytes"]) for r in rows],
            },
        )
        st.markdown(
            _(
                "So the bytes *per token* fall as the batch grows, until every expert is read at every step; after "
                "that the step is bound by compute or by the cache. **Expert parallelism** spreads the experts over "
                "GPUs and sends each token to the GPUs that hold its experts (an all-to-all dispatch and combine), "
                "so each GPU reads only its own experts. DeepSeek-V3's report describes decoding with expert "
                "parallelism over 320 GPUs, one routed expert per GPU plus redundant copies of busy ones (arXiv "
                "2412.19437, §3.4.2)."
            )
        )
        link_to("planner", _("Try the batch setting in the planner"))


# -- serving a hybrid: every statement carries its links (tests/app/test_serving_section.py) ----------------

_VLLM_BLOG = (N_("vLLM blog, Qwen3-Next, 2025-09-11"), "https://blog.vllm.ai/2025/09/11/qwen3-next.html")
_VLLM_APC = (
    N_("vLLM docs, automatic prefix caching"),
    "https://docs.vllm.ai/en/latest/features/automatic_prefix_caching/",
)
_VLLM_KDA_SNAPSHOTS = ("vLLM PR #45845", "https://github.com/vllm-project/vllm/pull/45845")
_VLLM_RETENTION = (N_("vLLM PR #52216, merged 2026-08"), "https://github.com/vllm-project/vllm/pull/52216")
_VLLM_BLOCK_ISSUE = (N_("vLLM issue #40696"), "https://github.com/vllm-project/vllm/issues/40696")
_VLLM_KIMI = (
    N_("vLLM recipe, Kimi Linear"),
    "https://docs.vllm.ai/projects/recipes/en/latest/moonshotai/Kimi-Linear.html",
)
_SGL_BLOG = (
    N_("SGLang team, 'Hybrid Models Meet SGLang', PyTorch blog, 2025-12-03"),
    "https://pytorch.org/blog/hybrid-models-meet-sglang-more-than-full-attention",
)
_SGL_DOCS = (N_("SGLang docs, Qwen3-Next"), "https://docs.sglang.io/basic_usage/qwen3.html")
_SGL_QWEN_PR = ("SGLang PR #10233", "https://github.com/sgl-project/sglang/pull/10233")
_SGL_SPEC_PR = ("SGLang PR #14792", "https://github.com/sgl-project/sglang/pull/14792")
_SGL_KIMI_PR = ("SGLang PR #12469", "https://github.com/sgl-project/sglang/pull/12469")
_HF_CACHE = (
    "transformers v5.24.0, cache_utils.py",
    "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/cache_utils.py",
)
_HF_QWEN = (
    "transformers: qwen3_next",
    "https://github.com/huggingface/transformers/tree/v5.24.0/src/transformers/models/qwen3_next",
)
_HF_KIMI = ("transformers PR #48250: kimi_linear", "https://github.com/huggingface/transformers/pull/48250")
_LLAMA_QWEN = ("llama.cpp PR #16095", "https://github.com/ggml-org/llama.cpp/pull/16095")
_LLAMA_KIMI = ("llama.cpp PR #18755", "https://github.com/ggml-org/llama.cpp/pull/18755")
_LLAMA_K3 = (
    N_("llama.cpp release b10448: Kimi K3"),
    "https://github.com/ggml-org/llama.cpp/releases/tag/b10448",
)
_TRT_QWEN = ("TensorRT-LLM PR #7892", "https://github.com/NVIDIA/TensorRT-LLM/pull/7892")
_FLA_GDN = (
    "fla/ops/gated_delta_rule",
    "https://github.com/fla-org/flash-linear-attention/tree/main/fla/ops/gated_delta_rule",
)
_FLA_KDA = ("fla/ops/kda", "https://github.com/fla-org/flash-linear-attention/tree/main/fla/ops/kda")


@dataclass(frozen=True)
class Cited:
    """One statement and the sources that say it: (label, URL) pairs."""

    text: str
    sources: tuple[tuple[str, str], ...]

    def markdown(self) -> str:
        links = "; ".join(f"[{_(label)}]({url})" for label, url in self.sources)
        return _("{text} ({links})").format(text=_(self.text), links=links)


SERVING_INTRO = Cited(
    N_(
        "In plain words: a hybrid keeps two kinds of memory for each conversation — a cache in its attention layers "
        "that grows by a row per token, and a fixed-size state in its linear layers that every token overwrites in "
        "place. A state cannot be wound back to an earlier token, and that changes three tricks serving engines rely on"
    ),
    (_SGL_BLOG,),
)

SERVING: tuple[tuple[str, tuple[Cited, ...]], ...] = (
    (
        N_("Batching"),
        (
            Cited(
                N_(
                    "Every sequence in the batch keeps its own state, whatever its length, so the planner's fixed-state "
                    "line is the batch times one state"
                ),
                (_SGL_BLOG,),
            ),
            Cited(
                N_(
                    "vLLM keeps the linear layers' states and the attention layers' cache pages in one memory pool, and "
                    "picks the attention block size so that one block and one state take the same physical memory"
                ),
                (_VLLM_BLOG,),
            ),
            Cited(
                N_(
                    "That makes a block long: a vLLM issue (v0.19.1) reports 528-token blocks for Qwen3.5-4B, so a shared "
                    "prefix shorter than one block is never reused"
                ),
                (_VLLM_BLOCK_ISSUE,),
            ),
            Cited(
                N_(
                    "SGLang keeps two pools instead, one of per-request states and one for the KV cache: "
                    "`--max-mamba-cache-size` sets how many states (and so running requests) fit, at the cost of KV "
                    "space, and `--mamba-ssm-dtype` stores the state in float32 by default or in bfloat16 for half the "
                    "bytes"
                ),
                (_SGL_DOCS,),
            ),
        ),
    ),
    (
        N_("Prefix caching (state snapshots)"),
        (
            Cited(
                N_(
                    "A KV cache can be shared block by block, because a token's keys and values never change when later "
                    "tokens arrive. A state sums up the whole prefix and is updated in place, so it cannot be cut back "
                    "to where a shared prefix ends"
                ),
                (_SGL_BLOG,),
            ),
            Cited(
                N_(
                    "Engines therefore keep snapshots of the state at chosen positions and reuse a prefix only up to a "
                    "snapshot. In vLLM, with prefix caching on, states are stored only at block boundaries, so a cache "
                    "hit resumes at a block boundary"
                ),
                (_VLLM_APC,),
            ),
            Cited(
                N_(
                    "vLLM applies one retention policy to KDA and Mamba state snapshots. Since August 2026 it is the "
                    "argument `--prefix-cache-retention-interval` (it replaced an environment variable, now deprecated), "
                    "and its default is 0: keep only the latest replayable prompt boundary, plus Marconi-style "
                    "shared-prefix junctions, so a system prompt is still reused; a positive N keeps a snapshot "
                    "every N tokens"
                ),
                (_VLLM_KDA_SNAPSHOTS, _VLLM_RETENTION),
            ),
            Cited(
                N_(
                    "SGLang's MambaRadixCache stores states in its prefix tree: the default `no_buffer` mode switches "
                    "off the overlap scheduler, while `extra_buffer` keeps two extra states per request (a ping-pong "
                    "buffer) and can store a state where two prompts branch"
                ),
                (_SGL_DOCS,),
            ),
        ),
    ),
    (
        N_("Speculative decoding"),
        (
            Cited(
                N_(
                    "When the big model rejects draft tokens, a KV cache simply drops their rows; a state has already "
                    "absorbed them. So the engine keeps the states of the draft positions while verifying and carries "
                    "on from the one after the last accepted token — SGLang sizes this intermediate-state memory by the "
                    "number of running requests"
                ),
                (_SGL_BLOG, _SGL_SPEC_PR),
            ),
            Cited(
                N_(
                    "SGLang runs Qwen3-Next with multi-token prediction and EAGLE drafts, updating the state and the "
                    "convolution buffer in the verify step; its `extra_buffer` prefix cache works together with "
                    "speculative decoding"
                ),
                (_SGL_QWEN_PR, _SGL_DOCS),
            ),
            Cited(N_("vLLM runs Qwen3-Next's own multi-token prediction as the draft"), (_VLLM_BLOG,)),
            Cited(
                N_(
                    "In transformers a linear-attention cache layer reports that it cannot be cropped once it holds a "
                    "recurrent state (`is_croppable`), and can record its convolution inputs so that `crop` can roll "
                    "them back (`activate_past_recording`)"
                ),
                (_HF_CACHE,),
            ),
        ),
    ),
)

# engine → (Gated DeltaNet, e.g. Qwen3-Next; KDA, e.g. Kimi Linear / Kimi K3); None where we found no source
ENGINES: tuple[tuple[str, tuple[tuple[str, str], ...] | None, tuple[tuple[str, str], ...] | None], ...] = (
    ("vLLM", (_VLLM_BLOG,), (_VLLM_KIMI,)),
    ("SGLang", (_SGL_QWEN_PR,), (_SGL_KIMI_PR,)),
    ("llama.cpp", (_LLAMA_QWEN,), (_LLAMA_KIMI, _LLAMA_K3)),
    ("TensorRT-LLM", (_TRT_QWEN,), None),
    ("transformers", (_HF_QWEN,), (_HF_KIMI,)),
    (N_("kernels: flash-linear-attention"), (_FLA_GDN,), (_FLA_KDA,)),
)


def _cell(sources: tuple[tuple[str, str], ...] | None) -> str:
    if sources is None:
        return "—"
    return _("yes: {links}").format(links=", ".join(f"[{_(label)}]({url})" for label, url in sources))


def engines_table() -> str:
    """Which engines run Gated DeltaNet and KDA layers, each "yes" linked to where it landed."""
    head = _("| engine | Gated DeltaNet (Qwen3-Next) | KDA (Kimi Linear, Kimi K3) |") + "\n|---|---|---|\n"
    return head + "\n".join(f"| {_(name)} | {_cell(gdn)} | {_cell(kda)} |" for name, gdn, kda in ENGINES)


def go_deeper_serving() -> None:
    """The planner: serving a hybrid — batching, prefix caching, speculative decoding, engine support."""
    if not engineer_section(_("Go deeper: serving a hybrid (fixed state + KV cache)")):
        return
    with st.container():
        st.markdown(_("{sentence}.").format(sentence=SERVING_INTRO.markdown()))
        for title, claims in SERVING:
            sentences = " ".join(_("{sentence}.").format(sentence=c.markdown()) for c in claims)
            st.markdown(_("**{title}.** {sentences}").format(title=_(title), sentences=sentences))
        st.caption(
            _(
                "The planner counts the exact bytes of the states and the cache and leaves each engine's page "
                "rounding out."
            )
        )
        st.markdown(_("**Which engines run these layers** (merged pull requests and docs, 2025–2026):"))
        st.markdown(engines_table())
        st.caption(
            _(
                "—: we found no source. The planner's cache check builds both layer kinds with transformers "
                "(`tests/core/plan/test_vs_transformers.py`)."
            )
        )
