"""One model on one card, one spill point: the KV cache page's calculator and the planner ask one function
(core/plan/spill.py, issue 42).

Before: the KV cache page said Llama-3-8B at 4 bits spills out of an RTX 3060 12GB at 67,671 tokens (4.0 bits a
weight, no reserve) while the planner held 52,568 for the same card (GGUF Q4_0's 4.5 bits and Q6_K head,
1 GiB + a prefill chunk's activations for the runtime). Now the lesson's number is the planner's longest
context + 1, the chart's roofline curve spills at that same token, and a hand count agrees.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.plan import PlanInputs, parse, plan
from core.plan.spill import HOME_SHARE, longest_context, on_one_card, spill_point
from core.roofline import CARDS, spill_context
from core.specs import SPECS

CONFIGS = Path(__file__).resolve().parents[3] / "assets" / "configs"
GiB = 1024**3


def _llama31():
    return parse(json.loads((CONFIGS / "llama3_1_8b.json").read_text()))


def test_the_kv_cache_page_and_the_planner_give_one_number_for_llama_8b_on_an_rtx_3060():
    card = CARDS["rtx3060_12gb"]
    lesson = on_one_card(SPECS["llama3_8b"], card.vram_bytes, "q4_0")  # what the calculator shows
    planner = plan(_llama31(), PlanInputs(card="rtx3060_12gb", weight_format="q4_0", memory_share=HOME_SHARE))
    assert planner.max_context == 52_568 and lesson.spill == planner.max_context + 1 == 52_569
    # by hand: 12 GiB − weights (7,504,924,672 weights at 4.5 bits + the 525,336,576-weight head at Q6_K's
    # 6.5625 bits) − reserve (1 GiB + 2,048 × 16 × 4,096 × 2 B) = room; a token adds 32 × 2 × 8 × 128 × 2 B
    head = 128_256 * 4096
    weights = (8_030_261_248 - head) * 4.5 / 8 + head * 210 * 8 / 256 / 8
    reserve = GiB + 2048 * 16 * 4096 * 2
    per_token = 32 * 2 * 8 * 128 * 2
    assert lesson.weight_bytes == pytest.approx(weights) and lesson.reserve_bytes == reserve
    assert lesson.spill == int((12 * GiB - weights - reserve) // per_token) + 1
    # the chart's curve (core.roofline, fed the same weights, room and reserve) spills at the same token
    roofline = spill_context(
        SPECS["llama3_8b"], card, lesson.bytes_per_weight, vram_budget_bytes=lesson.budget_bytes,
        reserve_bytes=lesson.reserve_bytes,
    )  # fmt: skip
    assert roofline == lesson.spill
    assert spill_context(SPECS["llama3_8b"], card, 0.5) == 67_671  # the old count: flat 4 bits, no reserve


@pytest.mark.parametrize("spec_key", list(SPECS))
@pytest.mark.parametrize("card_key", ["rtx3060_12gb", "rtx4090", "h100_sxm", "h200"])
@pytest.mark.parametrize("fmt", ["bf16", "q8_0", "q4_0"])
def test_the_roofline_curve_spills_where_the_planner_says(spec_key, card_key, fmt):
    spec, card = SPECS[spec_key], CARDS[card_key]
    at = on_one_card(spec, card.vram_bytes, fmt)
    kwargs = dict(vram_budget_bytes=at.budget_bytes, reserve_bytes=at.reserve_bytes)
    assert spill_context(spec, card, at.bytes_per_weight, **kwargs) == at.spill


def test_spill_point_is_one_past_the_longest_context_and_zero_when_nothing_fits():
    model = _llama31()
    inputs = PlanInputs(card="rtx4090", weight_format="q4_k_m")
    assert (
        spill_point(model, inputs)
        == longest_context(model, inputs) + 1
        == plan(model, inputs).max_context + 1
    )
    assert spill_point(model, PlanInputs(card="rtx3060_12gb")) == 0  # 16 GB of BF16 weights on 12 GiB
    mistral = parse(json.loads((CONFIGS / "mistral_7b.json").read_text()))  # sliding window: stops growing
    assert spill_point(mistral, PlanInputs(card="h100_80gb")) is None
