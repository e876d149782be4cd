"""Every assumption behind a plan's figures, in words shown beside the result and exported."""

from __future__ import annotations

from core.i18n import _, ngettext
from core.plan.calibration import calibration_words
from core.plan.cards import GiB, PlanCard
from core.plan.config import PlannedModel
from core.plan.footprint import PREFILL_CHUNK
from core.plan.formats import cache_format, state_format, weight_format
from core.plan.inputs import PlanInputs
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
            "Decode speed is the roofline ceiling: each step reads the dense weights once for the whole batch, "
            "each touched expert once and every sequence's cache, and reads and writes back every fixed state; "
            "time = max(bytes ÷ bandwidth, FLOPs ÷ peak)."
        ),
        calibration_words(),
        _(
            "Prefill: FLOPs of one prompt (2 per active parameter per token + causal attention) ÷ the 16-bit peak — "
            "a lower bound for 16-bit matrix work; an engine that multiplies in FP8 too (W8A8, on cards with FP8 "
            "tensor cores) can run up to twice as fast."
        )
        if fmt.key == "fp8"
        else _(
            "Prefill: FLOPs of one prompt (2 per active parameter per token + causal attention) ÷ the 16-bit peak — "
            "a lower bound for 16-bit matrix work."
        ),
    ]
    if spec.linear is not None:
        sfmt = state_format(inputs.state_format)
        items.append(
            _(
                "Fixed state: {n} {kind} layers keep a d_k×d_v matrix per head in {format} — {source} — and a "
                "short-convolution buffer in bf16; it does not grow with context."
            ).format(
                n=spec.num_linear_layers, kind=spec.linear.kind, format=_(sfmt.label), source=_(sfmt.source)
            )
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
                "Tensor parallel over {gpus} GPUs: weights, heads and bandwidth split evenly; communication is not "
                "modelled — every step, each layer's attention and feed-forward part end in an all-reduce (the GPUs "
                "add up their partial results; two per layer, Shoeybi et al. 2019, Megatron-LM), which the speed "
                "figures leave out, so a real group runs slower; the cache is repeated where GPUs outnumber KV "
                "heads, and MLA's latent is stored on every GPU (engines avoid that with data-parallel attention, "
                "not modelled here)."
            ).format(gpus=inputs.gpus)
        )
    if spec.context and inputs.context > spec.context:
        items.append(
            _("The context exceeds the model's max_position_embeddings ({trained:,}).").format(
                trained=spec.context
            )
        )
    return tuple(items)
