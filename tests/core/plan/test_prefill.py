"""The prefill lower bound counts the output head for the last prompt token only (issue 42, item 6).

Only the last prompt token needs logits (the next token's), so engines run the head once per prompt: the
bound used to count it for every prompt token, about 0.25 G of Qwen3.5-0.8B's 0.75 G active weights
(its 248,320 × 1,024 tied table). Checked against a hand count of every FLOP of Qwen3.5-0.8B's prefill.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.plan import PlanInputs, parse, plan
from core.plan.flops import prefill_flops

CONFIGS = Path(__file__).resolve().parents[3] / "assets" / "configs"
H100_PEAK = 989e12  # dense BF16, core/plan/cards.py


def _qwen():
    return parse(json.loads((CONFIGS / "qwen3_5_0_8b.json").read_text()))


def hand_count(tokens: int) -> float:
    """Qwen3.5-0.8B (24 layers: 18 Gated DeltaNet, 6 gated attention), every FLOP of a T-token prefill."""
    active = 752_393_024  # every weight (tied: the table is the head, a token reads all of it only there)
    head = 248_320 * 1_024  # 254,279,680
    weights = 2 * (active - head) * tokens + 2 * head  # the head for the last token only
    boards = 18 * 2 * 4 * 16 * 128 * 128 * tokens  # 4 d_k×d_v passes per head per token (core/plan/flops.py)
    attention = (
        6 * 2 * 8 * (256 + 256) * tokens * (tokens + 1) / 2
    )  # 8 heads, scores + values, half the pairs
    return weights + boards + attention


@pytest.mark.parametrize("tokens", [1, 4096, 131072])
def test_prefill_flops_equal_the_hand_count(tokens):
    model = _qwen()
    active = model.spec.active_params(count_embedding_table=False)
    assert active == 752_393_024 and model.spec.vocab * model.spec.hidden == 254_279_680
    assert prefill_flops(model, active, tokens) == pytest.approx(hand_count(tokens), rel=1e-12)


def test_the_bound_no_longer_counts_the_head_for_every_prompt_token():
    """At the default 131,072 tokens on one H100: 0.631 s before, 0.564 s now (the old bound was 12 % too
    high there; at 32,768 tokens 28 %, at 4,096 tokens 45 %)."""
    p = plan(_qwen(), PlanInputs())
    assert p.prefill_seconds == pytest.approx(hand_count(131072) / H100_PEAK)
    old = hand_count(131072) + 2 * 254_279_680 * (131072 - 1)  # the head for every prompt token
    assert old / H100_PEAK == pytest.approx(0.6313, abs=1e-4) and p.prefill_seconds == pytest.approx(
        0.5639, abs=1e-4
    )
    assert old / hand_count(32768 * 4) - 1 == pytest.approx(0.1195, abs=1e-4)
    short_old = hand_count(32768) + 2 * 254_279_680 * 32767
    assert short_old / hand_count(32768) - 1 == pytest.approx(0.2765, abs=1e-4)
