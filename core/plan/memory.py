"""What one sequence keeps, layer by layer, in the layout a given engine uses.

Engines agree on what to keep but not on every detail; the planner names the layout it assumes:

- **engine** (vLLM, SGLang): MLA keeps the 576-wide latent (kv_lora_rank + qk_rope_head_dim) per token
  and layer; a sliding-window layer keeps `sliding_window` tokens; a short convolution keeps its last
  `kernel − 1` inputs (vLLM `mamba` conv state, fla `causal_conv1d`).
- **transformers** (Hugging Face transformers 5.x `DynamicCache`, as measured in
  tests/core/plan/test_vs_transformers.py): MLA also keeps the latent (DeepSeek-V3
  `cache.update(kv_nope, k_rot)`), a sliding layer keeps `sliding_window − 1` tokens
  (`DynamicSlidingWindowLayer`), the convolution buffer keeps `kernel` columns
  (`LinearAttentionLayer.conv_states`), recurrent states in fp32.
- **per_head**: MLA decompressed — keys (qk_nope + qk_rope) and values (v_head_dim) for every head,
  as DeepSeek's reference `inference/model.py` does with `attn_impl="naive"` (and transformers 4.x did).

The growing part is `kv` (bytes per token × tokens kept); `state` and `conv` are fixed per sequence.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.i18n import N_, _
from core.plan.config import PlannedModel
from core.plan.formats import CONV_BYTES, STATE_BYTES
from core.specs import LatentAttention


@dataclass(frozen=True)
class Layout:
    """One engine's way of keeping a sequence; `label` and `name` are marked with N_, shown as `_(name)`."""

    key: str
    label: str
    window_offset: int  # tokens a sliding layer keeps = sliding_window + window_offset
    conv_offset: int  # columns the short convolution keeps = kernel + conv_offset
    mla: str  # "latent" or "per_head"
    name: str = ""  # short, for a phone-sized menu
    # MLA decodes from the latent with the up-projections absorbed into query and output (vLLM, SGLang)
    absorbed_decode: bool = False

    def details(self, mla: bool, window: bool, conv: bool) -> str:
        """What this layout keeps, for the parts a model has: 'MLA latent, window W' (none: '')."""
        parts = []
        if mla:
            parts.append(_("MLA latent") if self.mla == "latent" else _("MLA keys and values per head"))
        if window:
            parts.append(_("window W") + ("" if self.window_offset == 0 else f"−{-self.window_offset}"))
        if conv:
            parts.append(_("conv kernel") + ("" if self.conv_offset == 0 else f"−{-self.conv_offset}"))
        return _(", ").join(parts)


LAYOUTS: dict[str, Layout] = {
    item.key: item
    for item in (
        Layout(
            "engine",
            N_("serving engines (vLLM, SGLang): MLA latent, window W, conv kernel−1"),
            0,
            -1,
            "latent",
            N_("serving engine (vLLM, SGLang)"),
            absorbed_decode=True,
        ),
        Layout(
            "transformers",
            N_("HF transformers 5.x DynamicCache: MLA latent, window W−1, conv kernel"),
            -1,
            0,
            "latent",
            N_("HF transformers 5.x"),
        ),
        Layout(
            "per_head",
            N_("MLA decompressed per head (DeepSeek reference attn_impl='naive')"),
            0,
            -1,
            "per_head",
            N_("MLA per head (DeepSeek naive)"),
        ),
    )
}


@dataclass(frozen=True)
class SequenceBytes:
    """One sequence's cache at a context: growing KV (or latent) + fixed recurrent and conv state."""

    kv: float
    state: float
    conv: float

    @property
    def fixed(self) -> float:
        return self.state + self.conv

    @property
    def total(self) -> float:
        return self.kv + self.state + self.conv


def attention_elements_per_token(model: PlannedModel, layout: Layout) -> int:
    """Cached elements per token in one full-attention layer."""
    attention = model.spec.attention
    if isinstance(attention, LatentAttention) and layout.mla == "per_head":
        return attention.heads * (
            attention.qk_nope_head_dim + attention.qk_rope_head_dim + attention.v_head_dim
        )
    return attention.cache_elements_per_token()


def tokens_kept(model: PlannedModel, layer: int, context: int, layout: Layout) -> int:
    """Tokens a full-attention layer keeps after `context` tokens (a sliding layer stops at its window)."""
    if model.sliding_window is not None and layer in model.sliding_layers:
        return min(context, max(0, model.sliding_window + layout.window_offset))
    return context


def sequence_bytes(
    model: PlannedModel,
    context: int,
    cache_bytes: float = 2.0,
    layout: Layout | str = "engine",
    state_bytes: float = STATE_BYTES,
    conv_bytes: float = CONV_BYTES,
) -> SequenceBytes:
    """Bytes one sequence holds after `context` tokens, summed layer by layer."""
    if context < 0:
        raise ValueError("context must be non-negative")
    layout = LAYOUTS[layout] if isinstance(layout, str) else layout
    spec = model.spec
    per_token = attention_elements_per_token(model, layout) * cache_bytes
    kv = state = conv = 0.0
    for layer, kind in enumerate(spec.layer_kinds()):
        if spec.linear is not None and kind == spec.linear.kind:
            state += spec.linear.state_elements() * state_bytes
            conv += (spec.linear.conv_kernel + layout.conv_offset) * spec.linear.conv_channels * conv_bytes
        else:
            kv += tokens_kept(model, layer, context, layout) * per_token
    return SequenceBytes(kv, state, conv)


def growing_bytes_per_token(
    model: PlannedModel, cache_bytes: float = 2.0, layout: Layout | str = "engine"
) -> float:
    """Bytes the cache grows by per token while no sliding window is full (all full-attention layers)."""
    return sequence_bytes(model, 1, cache_bytes, layout, 0, 0).kv


def unbounded_growth(model: PlannedModel) -> bool:
    """True when some layer keeps every token (the cache grows without limit)."""
    spec = model.spec
    full = [i for i, k in enumerate(spec.layer_kinds()) if spec.linear is None or k != spec.linear.kind]
    return any(i not in model.sliding_layers or model.sliding_window is None for i in full)
