"""Chunked (WY / UT transform) forms equal the token-by-token recurrences, for every rule.

Outputs and final boards agree to 1e-5 in fp32 and 1e-10 in fp64, for awkward lengths
(padding inside), several chunk sizes, with and without an initial board, several heads, K != V.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from core.mechanisms import delta_rules, gated_rules, get, rule_keys
from core.ops import linear_attention
from core.ops.inputs import random_inputs, rule_kwargs

B, H, K, V = 2, 3, 16, 8  # random_inputs' defaults
LENGTHS = (1, 7, 64, 100, 513)
CHUNK_SIZES = (16, 32, 64)
RULES = rule_keys()  # every registered rule: a new one is tested without editing this file
TOL = {torch.float32: 1e-5, torch.float64: 1e-10}


def forms(rule: str, x: dict[str, torch.Tensor], with_state: bool) -> tuple[Callable, Callable]:
    """(recurrent(), chunk(chunk_size)) for one rule on inputs x."""
    q, k, v = x["q"], x["k"], x["v"]
    S0 = x["S0"] if with_state else None
    ops, extra = get(rule).ops, rule_kwargs(rule, x)
    return (
        lambda: ops.recurrent(q, k, v, initial_state=S0, **extra),
        lambda C: ops.chunk(q, k, v, initial_state=S0, chunk_size=C, **extra),
    )


@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "initial_state"])
@pytest.mark.parametrize("T", LENGTHS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("rule", RULES)
def test_chunk_equals_recurrent(rule: str, dtype: torch.dtype, T: int, with_state: bool) -> None:
    x = random_inputs(T, dtype=dtype, seed=T)
    recurrent, chunked = forms(rule, x, with_state)
    o_ref, S_ref = recurrent()
    assert o_ref.shape == (B, T, H, V) and S_ref.shape == (B, H, K, V)
    assert o_ref.dtype == dtype and S_ref.dtype == dtype
    tol = TOL[dtype]
    for C in CHUNK_SIZES:
        o, S = chunked(C)
        assert o.shape == o_ref.shape and S.shape == S_ref.shape and o.dtype == dtype
        torch.testing.assert_close(o, o_ref, rtol=tol, atol=tol, msg=f"{rule} output, T={T}, C={C}")
        torch.testing.assert_close(S, S_ref, rtol=tol, atol=tol, msg=f"{rule} final state, T={T}, C={C}")


@pytest.mark.parametrize("rule", RULES)
def test_other_chunk_sizes_and_one_batch_one_head(rule: str) -> None:
    """Chunk sizes 1, 2, 8, 128 (bigger than T) also work; B = H = 1, K < V."""
    x = random_inputs(37, dtype=torch.float64, seed=1, b=1, h=1, k_dim=4, v_dim=6)
    recurrent, chunked = forms(rule, x, with_state=True)
    o_ref, S_ref = recurrent()
    for C in (1, 2, 8, 128):
        o, S = chunked(C)
        torch.testing.assert_close(o, o_ref, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(S, S_ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("T", LENGTHS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["fp32", "fp64"])
def test_linear_attention_parallel_equals_recurrent_and_chunk(dtype: torch.dtype, T: int) -> None:
    x = random_inputs(T, dtype=dtype, seed=100 + T)
    q, k, v = x["q"], x["k"], x["v"]
    o_par = linear_attention.parallel(q, k, v)
    o_rec, _ = linear_attention.recurrent(q, k, v)
    o_chk, _ = linear_attention.chunk(q, k, v, chunk_size=16)
    tol = TOL[dtype]
    torch.testing.assert_close(o_par, o_rec, rtol=tol, atol=tol)
    torch.testing.assert_close(o_par, o_chk, rtol=tol, atol=tol)
    # and the textbook formula, written out: O = (scale · Q Kᵀ ⊙ M) V per head
    for h in range(H):
        scores = (K**-0.5 * q[0, :, h]) @ k[0, :, h].T  # (T, T)
        expected = scores.tril() @ v[0, :, h]  # (T, V)
        torch.testing.assert_close(o_par[0, :, h], expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("rule", RULES)
def test_custom_scale_is_used_by_both_forms(rule: str) -> None:
    x = random_inputs(20, seed=3)
    ops, extra = get(rule).ops, rule_kwargs(rule, x)
    o_default, _ = ops.recurrent(x["q"], x["k"], x["v"], **extra)
    o_rec, _ = ops.recurrent(x["q"], x["k"], x["v"], scale=1.0, **extra)
    o_chk, _ = ops.chunk(x["q"], x["k"], x["v"], scale=1.0, chunk_size=8, **extra)
    torch.testing.assert_close(o_rec, o_chk, rtol=1e-10, atol=1e-10)
    # the read is linear in the scale: scale 1 reads K ** 0.5 times more than the default
    torch.testing.assert_close(o_rec, o_default * K**0.5, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("rule", delta_rules())
def test_chunk_gradients_equal_recurrent_gradients(rule: str) -> None:
    """Models train through `chunk`: its gradients must be the recurrence's (β and gate included)."""
    x = random_inputs(21, seed=5)
    leaves = {name: t.clone().requires_grad_(True) for name, t in x.items()}
    recurrent, chunked = forms(rule, leaves, with_state=True)
    used = [leaves[n] for n in ("q", "k", "v", "S0")] + list(rule_kwargs(rule, leaves).values())
    grads = []
    for run in (recurrent, lambda: chunked(8)):
        o, S = run()
        loss = (o * torch.linspace(-1, 1, o.numel(), dtype=o.dtype).view_as(o)).sum() + S.square().sum()
        grads.append(torch.autograd.grad(loss, used))
    for g_rec, g_chk in zip(*grads, strict=True):
        torch.testing.assert_close(g_chk, g_rec, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["fp32", "fp64"])
def test_strong_forgetting_stays_finite_and_equal(dtype: torch.dtype) -> None:
    """Gates down to −5 per token (K3's lower bound) or −30: cumulated over a chunk the decay
    underflows, and the chunked forms must neither overflow nor produce NaN."""
    x = random_inputs(130, dtype=dtype, seed=7)
    gk = -5.0 * torch.rand(x["gk"].shape, generator=torch.Generator().manual_seed(8), dtype=dtype)
    gk[:, 50:60] = -30.0  # a burst of near-total forgetting
    strong = {**x, "gk": gk, "g": gk.mean(-1)}  # (B, T, H, K) per channel, (B, T, H) per head
    for rule in gated_rules():
        recurrent, chunked = forms(rule, strong, with_state=True)
        o_ref, S_ref = recurrent()
        o, S = chunked(64)
        assert torch.isfinite(o).all() and torch.isfinite(S).all()
        torch.testing.assert_close(o, o_ref, rtol=TOL[dtype], atol=TOL[dtype])
        torch.testing.assert_close(S, S_ref, rtol=TOL[dtype], atol=TOL[dtype])
