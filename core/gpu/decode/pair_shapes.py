"""The batch sweep's released pair: Qwen3-8B's shapes and Qwen3.5-9B's, read from their configs by the planner.

Both are 4,096 wide. Qwen3-8B is dense with grouped-query attention in all 36 layers (32 query heads
share 8 key/value heads of 128); Qwen3.5-9B is a 3:1 hybrid — three Gated DeltaNet layers (a fixed
32 × 128 × 128 state) to one full-attention layer (4 key/value heads of 256), 32 layers. At 16K a
Qwen3-8B sequence holds 2.25 GiB of cache, a Qwen3.5-9B one 561 MiB: about 4× less, where the
synthetic pair (full attention against a pure fixed state) differs by 128×.

The configs ship in `assets/batch_pair/` as released; `core.plan.config.parse` turns them into the
planner's `PlannedModel`, so the benchmark's model (core.gpu.decode.pair_decoder) and the planner's
arithmetic (its bytes per sequence, `core.plan.memory.sequence_bytes`) read one set of shapes.

`PairScale` cuts the pair down where a machine cannot hold it: `layers` (a multiple of four, so
the hybrid keeps its 3:1 pattern) and `vocab` keep every layer's shapes; `width_divisor` (the tests
and the validator's dry run only) divides every width by the same number and keeps every count.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.i18n import N_
from core.plan.config import PlannedModel, parse
from core.plan.footprint import reserve_bytes
from core.plan.formats import STATE_BYTES
from core.plan.memory import sequence_bytes

CONFIGS = Path(__file__).resolve().parents[3] / "assets" / "batch_pair"
# The batch sweep's two series by role: the one whose cache grows in every layer, the hybrid.
PAIR = {"attention": "qwen3_8b", "state": "qwen3_5_9b"}
# What the page and the CLI call each (English here; the page shows `_(words)`).
PAIR_WORDS = {
    "attention": N_("Qwen3-8B shapes (GQA, full attention)"),
    "state": N_("Qwen3.5-9B shapes (3:1 hybrid)"),
}
PATTERN = 4  # the hybrid's layers come in fours: three Gated DeltaNet, one full attention
WIDTHS = ("hidden_size", "intermediate_size", "head_dim", "linear_key_head_dim", "linear_value_head_dim")
MEMORY_SHARE = 0.9  # the planner's default share of memory to fill (PlanInputs.memory_share)


@dataclass(frozen=True)
class PairScale:
    """How far the pair is cut down: None keeps the released layer count or vocabulary."""

    layers: int | None = None  # per model, at most its own count; a multiple of PATTERN
    vocab: int | None = None
    width_divisor: int = 1

    def __post_init__(self) -> None:
        if self.layers is not None and (self.layers < PATTERN or self.layers % PATTERN):
            raise ValueError(
                f"layers must be a multiple of {PATTERN} (the hybrid's 3:1 pattern), got {self.layers}"
            )
        if self.vocab is not None and self.vocab < 1:
            raise ValueError(f"vocab must be at least 1, got {self.vocab}")
        if self.width_divisor < 1:
            raise ValueError(f"width_divisor must be at least 1, got {self.width_divisor}")


def released_config(key: str) -> dict[str, Any]:
    """The config as released (`key`: 'qwen3_8b' or 'qwen3_5_9b')."""
    if key not in PAIR.values():
        raise ValueError(f"unknown pair model {key!r}; choose one of {', '.join(PAIR.values())}")
    return json.loads((CONFIGS / f"{key}.json").read_text(encoding="utf-8"))


def scaled_config(config: dict[str, Any], scale: PairScale) -> dict[str, Any]:
    """`config` cut down by `scale` (its text part, for Qwen3.5's multimodal form); every layer's shapes
    stay as released unless `width_divisor` divides them, which must divide each width exactly."""
    out = copy.deepcopy(config)
    text = out["text_config"] if isinstance(out.get("text_config"), dict) else out
    if scale.layers is not None:
        text["num_hidden_layers"] = min(scale.layers, text["num_hidden_layers"])
        if isinstance(text.get("layer_types"), list):
            text["layer_types"] = text["layer_types"][: text["num_hidden_layers"]]
    if scale.vocab is not None:
        text["vocab_size"] = min(scale.vocab, text["vocab_size"])
    for key in WIDTHS if scale.width_divisor > 1 else ():
        if key in text:
            if text[key] % scale.width_divisor:
                raise ValueError(
                    f"{key} {text[key]} is not a multiple of width_divisor {scale.width_divisor}"
                )
            text[key] //= scale.width_divisor
    return out


def planned(kind: str, scale: PairScale = PairScale()) -> PlannedModel:
    """The pair's model for series `kind` ('attention' or 'state'), cut down by `scale`, as the planner reads it."""
    if kind not in PAIR:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(PAIR)}")
    return parse(scaled_config(released_config(PAIR[kind]), scale), key=PAIR[kind])


def planned_released(key: str) -> PlannedModel:
    return parse(released_config(key), key=key)


def per_sequence_bytes(model: PlannedModel, positions: int, elem_bytes: int) -> int:
    """Bytes one sequence holds after `positions` tokens, by the planner's own function: keys and
    values of the full-attention layers in the run's dtype, the fp32 state (the configs' mamba_ssm_dtype)
    and the short convolution's last kernel − 1 inputs (the serving engines' layout), in the run's dtype."""
    seq = sequence_bytes(model, positions, elem_bytes, "engine", STATE_BYTES, elem_bytes)
    return int(seq.total)


def planner_max_batch(model: PlannedModel, memory_bytes: int, depth: int, elem_bytes: int) -> int:
    """The planner's largest batch at `depth` in `memory_bytes` (core.plan.plan.plan's `max_batch`):
    (share × memory − weights − its runtime reserve) ÷ bytes per sequence, the weights every parameter
    in the run's dtype (`plan` with weight and cache format bf16 when `elem_bytes` is 2)."""
    room = MEMORY_SHARE * memory_bytes - model.spec.total_params() * elem_bytes - reserve_bytes(model, 1)
    per_seq = per_sequence_bytes(model, depth, elem_bytes)
    return max(0, int(room // per_seq)) if room > 0 else 0
