"""The two forms of every rule (core/ops/forms.py): equal on the shared inputs, timed, counted."""

from __future__ import annotations

import pytest
import torch

from core.mechanisms import rule_keys
from core.ops import forms


@pytest.mark.parametrize("rule", rule_keys())
def test_chunk_check_matches_recurrence(rule):
    fp32 = forms.chunk_check(rule, 37, 8, 8)
    fp64 = forms.chunk_check(rule, 37, 8, 16, dtype=torch.float64)
    assert max(fp32.max_output_difference, fp32.max_state_difference) < 1e-5
    assert max(fp64.max_output_difference, fp64.max_state_difference) < 1e-10
    assert fp32.agrees and fp64.agrees
    assert (fp32.tolerance, fp64.tolerance) == (1e-5, 1e-10)


def test_chunk_check_reports_a_disagreement():
    check = forms.ChunkCheck("delta", 8, 4, 4, "float32", 2e-5, 0.0)
    assert not check.agrees
    with pytest.raises(ValueError, match="unknown rule 'lstm'"):
        forms.chunk_check("lstm", 8, 4, 4)
    with pytest.raises(ValueError, match="at least 1"):
        forms.chunk_check("delta", 0, 4, 4)
    with pytest.raises(ValueError, match="no tolerance"):
        forms.tolerance(torch.float16)


def test_time_forms_yields_every_form():
    timings = list(forms.time_forms("delta", 16, 4, [4, 8], repeats=1))
    assert [t.label for t in timings] == ["step by step", "C = 4", "C = 8"]
    assert [t.hand_overs for t in timings] == [16, 4, 2]
    assert all(t.ms > 0 for t in timings)
    base, best, ratio = forms.speedup(timings)
    assert base is timings[0] and best in timings[1:]
    assert best.ms == min(t.ms for t in timings[1:])
    assert ratio == pytest.approx(base.ms / best.ms)


def test_waits_in_line():
    assert forms.waits_in_line(100, 16) == (100, 7)
    assert forms.waits_in_line(64, 64) == (64, 1)
    with pytest.raises(ValueError, match="at least 1"):
        forms.waits_in_line(0, 4)


def test_one_thread_restores_the_thread_count():
    before = torch.get_num_threads()
    with forms.one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_median_ms_returns_the_result():
    calls = []
    ms, result = forms.median_ms(lambda: calls.append(1) or len(calls), repeats=3)
    assert result == 4 and len(calls) == 4  # one warm-up, three timed
    assert ms >= 0
