"""A decoding step moves the board, and nothing board-sized besides (core/ops/in_place.py, issue 42 item 1).

Counted op by op under a `TorchDispatchMode` (the same hook core/gpu/decode/traffic.py traces with): every
tensor as large as the board that an op reads, writes or creates. The readable step (parts kept, or a
gradient wanted) builds the faded board, an outer product and a new board — three boards allocated, eight
passes over board-sized memory per token. The decoding step (no parts, no gradient) fades, erases and
writes the board itself: nothing board-sized is allocated, the board is read three times and written
twice, and the result is the readable step's to fp64 rounding.
"""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from core.gpu.decode.traffic import trace_persistent_bytes
from core.mechanisms import delta_rules, get
from core.ops.in_place import BOARD_READS, BOARD_WRITES
from core.ops.inputs import random_inputs, step_kwargs

RULES = delta_rules()  # DeltaNet, Gated DeltaNet, KDA: every rule that erases
T = 0  # the token stepped


class BoardTraffic(TorchDispatchMode):
    """Per op, the board-sized tensors (numel ≥ the board's) it reads, writes in place, or creates."""

    def __init__(self, board_numel: int) -> None:
        super().__init__()
        self.size = board_numel
        self.reads = self.writes = self.allocated = 0

    def _big(self, x: object) -> bool:
        return isinstance(x, torch.Tensor) and x.numel() >= self.size

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 — torch's protocol
        out = func(*args, **(kwargs or {}))
        if func.is_view:
            return out  # a view moves no bytes
        inputs = [t for t in tree_flatten((args, kwargs or {}))[0] if self._big(t)]
        mutated = {
            id(args[i])
            for i, a in enumerate(func._schema.arguments)
            if i < len(args) and a.alias_info is not None and a.alias_info.is_write
        }
        self.reads += sum(1 for t in inputs if not (id(t) in mutated and func.__name__.startswith("copy_")))
        self.writes += sum(1 for t in inputs if id(t) in mutated)
        if not mutated:
            made = [t for t in tree_flatten(out)[0] if self._big(t)]
            self.allocated += len(made)
            self.writes += len(made)
        return out


def _step_inputs(rule: str):
    x = random_inputs(1, seed=3)
    S = x["S0"].clone()  # (B, H, K, V)
    return S, (x["q"][:, T], x["k"][:, T], x["v"][:, T]), step_kwargs(rule, x, T)


def _count(rule: str, *, keep_parts: bool, grad: bool):
    S, qkv, kw = _step_inputs(rule)
    if grad:
        S.requires_grad_(True)
    mode = BoardTraffic(S.numel())
    with torch.set_grad_enabled(grad), mode:
        result = get(rule).ops.step(S, *qkv, keep_parts=keep_parts, **kw)
    return S, result, mode


@pytest.mark.parametrize("rule", RULES)
def test_the_decoding_step_builds_no_second_board(rule):
    S, result, mode = _count(rule, keep_parts=False, grad=False)
    assert result.state is S  # the board itself, updated
    assert mode.allocated == 0
    fades = get(rule).gate != "none"
    assert (mode.reads, mode.writes) == ((BOARD_READS, BOARD_WRITES) if fades else (2, 1))


@pytest.mark.parametrize("rule", ["gated_delta", "kda"])
def test_the_readable_step_is_the_eight_passes_the_issue_counted(rule):
    """With a gradient wanted the step stays out of place: the faded board, k uᵀ and the new board."""
    _S, result, mode = _count(rule, keep_parts=False, grad=True)
    assert mode.allocated == 3 and mode.reads + mode.writes == 8


@pytest.mark.parametrize("rule", RULES)
def test_in_place_equals_the_readable_step(rule):
    S, qkv, kw = _step_inputs(rule)
    readable = get(rule).ops.step(S.clone(), *qkv, keep_parts=True, **kw)
    with torch.no_grad():
        decoded = get(rule).ops.step(S, *qkv, keep_parts=False, **kw)
    for ours, theirs in ((decoded.state, readable.state), (decoded.output, readable.output),
                         (decoded.recalled, readable.recalled)):  # fmt: skip
        torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("rule", ["gated_delta", "kda"])
def test_the_traced_bytes_on_the_board_are_the_stated_passes(rule):
    """The project's own tracer (core/gpu/decode/traffic.py) watching the board alone agrees."""
    S, qkv, kw = _step_inputs(rule)
    with torch.no_grad():
        moved, ops = trace_persistent_bytes(lambda: get(rule).ops.step(S, *qkv, keep_parts=False, **kw), [S])
    assert moved == (BOARD_READS + BOARD_WRITES) * S.numel() * S.element_size(), ops


def test_recurrent_leaves_the_callers_initial_board_alone():
    x = random_inputs(5, seed=4)
    before = x["S0"].clone()
    with torch.no_grad():
        get("kda").ops.recurrent(x["q"], x["k"], x["v"], beta=x["beta"], g=x["gk"], initial_state=x["S0"])
    torch.testing.assert_close(x["S0"], before, rtol=0, atol=0)
