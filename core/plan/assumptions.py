"""Every assumption behind a plan's figures, in words shown beside the result and exported."""

from __future__ import annotations

from core.i18n import _, ngettext
from core.plan.calibration import calibration_words
from core.plan.cards import GiB, PlanCard
from core.plan.config import PlannedModel
from core.plan.footprint import PREFILL_CHUNK
from core.plan.formats import cache_format, state_format_for, weight_format
from core.plan.inputs import PlanInputs
from core.plan.latency import (
    ALL_REDUCE_BASE_S,
    ALL_REDUCE_HOP_S,
    KERNEL_FLOOR_S,
    KERNELS,
    latency_floor,
)
from core.plan.memory import LAYOUTS
from core.specs import LatentAttention


def _layout_words(model: PlannedModel, key: str) -> str:
    """The cache layout's name and what it keeps of the parts this model has (none for plain attention)."""
    mla = isinstance(model.spec.attention, LatentAttention)
    # without MLA, keeping MLA per head changes nothing: it is the serving engines' layout then
    layout = LAYOUTS["engine"] if key == "per_head" and not mla else LAYOUTS[key]
    details = layout.details(mla=mla, window=bool(model.sliding_layers), conv=model.spec.linear is not None)
    if not details:
        return _(layout.name)
    return _("{name} ({details})").format(name=_(layout.name), details=details)


def assumptions(
    model: PlannedModel, inputs: PlanInputs, target: PlanCard, touched: float | None
) -> tuple[str, ...]:
    """Every assumption behind the figures, in words (shown beside the result and exported)."""
    spec, fmt, cfmt = model.spec, weight_format(inputs.weight_format), cache_format(inputs.cache_format)
    weights = _("Weights: {format} at {bits:g} bits per weight").format(format=_(fmt.label), bits=fmt.bits)
    if fmt.expert_bits:
        weights += _(" ({bits:g} for routed experts)").format(bits=fmt.expert_bits)
    weights += _(" — {source}").format(source=_(fmt.source))
    if fmt.table_bits == 16:
        weights += _(
            "; the input table and the output head stay in BF16, as engines' quantised checkpoints keep them"
        )
    weights += _(". Every expert is resident in memory.")
    peak = (
        _(", {tflops:,.0f} TFLOPS dense BF16").format(tflops=target.peak_flops / 1e12)
        if target.peak_flops
        else _(", no published peak")
    )
    items = [
        _(
            "Parameters counted from the config's tensor shapes (core/specs): {total:,} total, {active:,} active "
            "per token; no multi-token-prediction head, no vision tower."
        ).format(total=spec.total_params(), active=spec.active_params()),
        weights,
        ngettext(
            "KV cache: {format}, {size:g} byte per element, layout: {layout}.",
            "KV cache: {format}, {size:g} bytes per element, layout: {layout}.",
            1 if cfmt.bytes_per_element == 1 else 2,
        ).format(
            format=_(cfmt.label), size=cfmt.bytes_per_element, layout=_layout_words(model, inputs.layout)
        ),
        _("Card: {card}, {gib:,.0f} GiB, {gbs:,.0f} GB/s{peak} — {source}.").format(
            card=target.name,
            gib=target.memory_bytes / GiB,
            gbs=target.bandwidth_bytes_per_s / 1e9,
            peak=peak,
            source=_(target.source),
        ),
        _(
            "Usable memory: {share:.0%} of the card (vLLM's gpu_memory_utilization defaults to 0.9); reserve, on "
            "every GPU: 1 GiB for the runtime + one {chunk:,}-token prefill chunk of activations ({chunk:,} × 16 × "
            "hidden × 2 bytes) — a round figure, not a measurement."
        ).format(share=inputs.memory_share, chunk=PREFILL_CHUNK),
        _(
            "Decode speed is the slowest of three ceilings: bandwidth (each step reads the dense weights once "
            "for the whole batch, each touched expert once and every sequence's cache, and reads and writes back "
            "every fixed state), compute, and the latency floor; time = max(bytes ÷ bandwidth, FLOPs ÷ peak, "
            "latency floor)."
        ),
        latency_words(model, inputs),
        calibration_words(),
        _(
            "Prefill: FLOPs of one prompt (2 per active parameter per token, the output head for the last prompt "
            "token only, since only it needs logits, + causal attention) ÷ the 16-bit peak — a lower bound for "
            "16-bit matrix work; an engine that multiplies in FP8 too (W8A8, on cards with FP8 tensor cores) can "
            "run up to twice as fast."
        )
        if fmt.key == "fp8"
        else _(
            "Prefill: FLOPs of one prompt (2 per active parameter per token, the output head for the last prompt "
            "token only, since only it needs logits, + causal attention) ÷ the 16-bit peak — a lower bound for "
            "16-bit matrix work."
        ),
    ]
    if spec.linear is not None:
        sfmt = state_format_for(inputs.state_format, model.state_dtype)
        source = _(sfmt.source)
        if inputs.state_format == "config":
            source = (
                _("the config's mamba_ssm_dtype says so")
                if model.state_dtype
                else _("the config gives no mamba_ssm_dtype: {source}").format(source=source)
            )
        items.append(
            _(
                "Fixed state: {n} {kind} layers keep a d_k×d_v matrix per head in {format} — {source} — and a "
                "short-convolution buffer in bf16; it does not grow with context."
            ).format(n=spec.num_linear_layers, kind=spec.linear.kind, format=_(sfmt.label), source=source)
        )
    if model.sliding_layers:
        items.append(
            _("Sliding window: {n} of {layers} layers keep only the last {window:,} tokens.").format(
                n=len(model.sliding_layers), layers=spec.num_layers, window=model.sliding_window
            )
        )
    if isinstance(spec.attention, LatentAttention):
        items.append(
            _(
                "MLA: vLLM, SGLang and transformers 5.x cache the latent (kv_lora_rank + qk_rope_head_dim per token "
                "and layer); DeepSeek's reference code with attn_impl='naive' (and transformers 4.x) keeps keys and "
                "values per head — both figures are shown."
            )
        )
    if touched is not None:
        items.append(
            _(
                "Experts: a batch of {batch} touches about {touched:,.1f} of {experts} routed experts per layer, "
                "E·(1 − (1 − k/E)^B), assuming uniform independent routing; skewed routing touches fewer."
            ).format(batch=inputs.batch, touched=touched, experts=spec.moe.experts)
        )
    if inputs.gpus > 1:
        items.append(
            _(
                "Tensor parallel over {gpus} GPUs: weights, heads and bandwidth split evenly; every step, each "
                "layer's attention and feed-forward part end in an all-reduce (the GPUs add up their partial "
                "results; two per layer, Shoeybi et al. 2019, Megatron-LM), counted in decode as latency only "
                "(their few kB per token are left out, and so are prefill's); the cache is repeated where GPUs "
                "outnumber KV heads, and MLA's latent is stored on every GPU (engines avoid that with data-parallel "
                "attention, not modelled here)."
            ).format(gpus=inputs.gpus)
        )
    if spec.context and inputs.context > spec.context:
        items.append(
            _("The context exceeds the model's max_position_embeddings ({trained:,}).").format(
                trained=spec.context
            )
        )
    return tuple(items)


def latency_words(model: PlannedModel, inputs: PlanInputs) -> str:
    """The latency floor's stated assumptions and its sum for this plan (core/plan/latency.py)."""
    floor = latency_floor(model, inputs.gpus)
    k = KERNELS
    words = _(
        "Latency floor: {kernels:,} kernels a step, one after another — per layer {norms} fused norms, {attention} "
        "for attention or {fixed} for a fixed-state layer, {mlp} for a dense MLP or {routed} for routed experts "
        "+ {shared} per shared expert; {ends} for embedding, final norm, head and sampling — at {us:g} µs each, "
        "a stated round figure for a small kernel in a CUDA graph, not a measurement (this project's H200 "
        "replayed a 568-kernel step in 2.96 ms, 5.2 µs a kernel with its work)"
    ).format(
        kernels=floor.kernels, norms=k["norms"], attention=k["attention"], fixed=k["fixed_state"],
        mlp=k["dense_mlp"], routed=k["routed_experts"], shared=k["shared_expert"], ends=k["ends"],
        us=KERNEL_FLOOR_S * 1e6,
    )  # fmt: skip
    if floor.all_reduces:
        words += _(
            "; + {n:,} all-reduces at {us:.1f} µs each: NCCL's own latency model for a ring all-reduce over "
            "NVLink, {base:g} µs + 2 × ({gpus} − 1) × {hop:g} µs (NCCL src/graph/tuning.cc, quoted in NVIDIA/nccl "
            "issue #1334)"
        ).format(
            n=floor.all_reduces, us=floor.all_reduce_s * 1e6, base=ALL_REDUCE_BASE_S * 1e6, gpus=inputs.gpus,
            hop=ALL_REDUCE_HOP_S * 1e6,
        )  # fmt: skip
    return words + _(": {ms:,.3f} ms a step, at most {tps:,.0f} steps per second.").format(
        ms=floor.seconds * 1e3, tps=1 / floor.seconds
    )
