"""Chunked (WY / UT transform) forms equal the token-by-token recurrences, for every rule.

Outputs and final boards agree to 1e-5 in fp32 and 1e-10 in fp64, for awkward lengths
(padding inside), several chunk sizes, with and without an initial board, several heads, K != V.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F

from core.ops import delta_rule, gated_delta_rule, kda, linear_attention

B, H, K, V = 2, 3, 16, 8
LENGTHS = (1, 7, 64, 100, 513)
CHUNK_SIZES = (16, 32, 64)
RULES = ("linear_attention", "delta_rule", "gated_delta_rule", "kda")
TOL = {torch.float32: 1e-5, torch.float64: 1e-10}


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny tensors on a shared 2-core machine: one thread is faster and steadier."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def random_inputs(
    T: int,
    dtype: torch.dtype = torch.float64,
    seed: int = 0,
    b: int = B,
    h: int = H,
    k_dim: int = K,
    v_dim: int = V,
) -> dict[str, torch.Tensor]:
    """Unit keys, β in (0, 1), per-head and per-channel log gates in (−1, 0), a random board."""
    gen = torch.Generator().manual_seed(seed)

    def rand(*shape: int) -> torch.Tensor:
        return torch.rand(*shape, generator=gen, dtype=dtype)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=dtype)

    return {
        "q": randn(b, T, h, k_dim),  # (B, T, H, K)
        "k": F.normalize(randn(b, T, h, k_dim), dim=-1),  # (B, T, H, K)
        "v": randn(b, T, h, v_dim),  # (B, T, H, V)
        "beta": rand(b, T, h),  # (B, T, H)
        "g": -rand(b, T, h),  # (B, T, H)
        "gk": -rand(b, T, h, k_dim),  # (B, T, H, K)
        "S0": randn(b, h, k_dim, v_dim),  # (B, H, K, V)
    }


def forms(rule: str, x: dict[str, torch.Tensor], with_state: bool) -> tuple[Callable, Callable]:
    """(recurrent(), chunk(chunk_size)) for one rule on inputs x."""
    q, k, v = x["q"], x["k"], x["v"]
    S0 = x["S0"] if with_state else None
    if rule == "linear_attention":
        extra: dict[str, torch.Tensor] = {}
        module = linear_attention
    elif rule == "delta_rule":
        extra, module = {"beta": x["beta"]}, delta_rule
    elif rule == "gated_delta_rule":
        extra, module = {"beta": x["beta"], "g": x["g"]}, gated_delta_rule
    else:
        extra, module = {"beta": x["beta"], "g": x["gk"]}, kda
    return (
        lambda: module.recurrent(q, k, v, initial_state=S0, **extra),
        lambda C: module.chunk(q, k, v, initial_state=S0, chunk_size=C, **extra),
    )


@pytest.mark.parametrize("with_state", [False, True], ids=["zero_state", "initial_state"])
@pytest.mark.parametrize("T", LENGTHS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["fp32", "fp64"])
@pytest.mark.parametrize("rule", RULES)
def test_chunk_equals_recurrent(rule: str, dtype: torch.dtype, T: int, with_state: bool) -> None:
    x = random_inputs(T, dtype, seed=T)
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
    x = random_inputs(37, torch.float64, seed=1, b=1, h=1, k_dim=4, v_dim=6)
    recurrent, chunked = forms(rule, x, with_state=True)
    o_ref, S_ref = recurrent()
    for C in (1, 2, 8, 128):
        o, S = chunked(C)
        torch.testing.assert_close(o, o_ref, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(S, S_ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("T", LENGTHS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["fp32", "fp64"])
def test_linear_attention_parallel_equals_recurrent_and_chunk(dtype: torch.dtype, T: int) -> None:
    x = random_inputs(T, dtype, seed=100 + T)
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
    x = random_inputs(20, torch.float64, seed=3)
    module = {"linear_attention": linear_attention, "delta_rule": delta_rule}.get(rule)
    extra: dict[str, torch.Tensor] = {}
    if rule != "linear_attention":
        extra["beta"] = x["beta"]
    if rule == "gated_delta_rule":
        module, extra["g"] = gated_delta_rule, x["g"]
    if rule == "kda":
        module, extra["g"] = kda, x["gk"]
    o_default, _ = module.recurrent(x["q"], x["k"], x["v"], **extra)
    o_rec, _ = module.recurrent(x["q"], x["k"], x["v"], scale=1.0, **extra)
    o_chk, _ = module.chunk(x["q"], x["k"], x["v"], scale=1.0, chunk_size=8, **extra)
    torch.testing.assert_close(o_rec, o_chk, rtol=1e-10, atol=1e-10)
    # the read is linear in the scale: scale 1 reads K ** 0.5 times more than the default
    torch.testing.assert_close(o_rec, o_default * K**0.5, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("rule", ["delta_rule", "gated_delta_rule", "kda"])
def test_chunk_gradients_equal_recurrent_gradients(rule: str) -> None:
    """Models train through `chunk`: its gradients must be the recurrence's."""
    x = random_inputs(21, torch.float64, seed=5)
    leaves = {name: t.clone().requires_grad_(True) for name, t in x.items()}
    recurrent, chunked = forms(rule, leaves, with_state=True)
    grads = []
    for run in (recurrent, lambda: chunked(8)):
        o, S = run()
        loss = (o * torch.linspace(-1, 1, o.numel(), dtype=o.dtype).view_as(o)).sum() + S.square().sum()
        used = [t for name, t in leaves.items() if name in ("q", "k", "v", "beta", "S0")]
        used.append(
            leaves["g"] if rule == "gated_delta_rule" else leaves["gk"] if rule == "kda" else leaves["q"]
        )
        grads.append(torch.autograd.grad(loss, used))
    for g_rec, g_chk in zip(*grads, strict=True):
        torch.testing.assert_close(g_chk, g_rec, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["fp32", "fp64"])
def test_strong_forgetting_stays_finite_and_equal(dtype: torch.dtype) -> None:
    """Gates down to −5 per token (K3's lower bound) or −30: cumulated over a chunk the decay
    underflows, and the chunked forms must neither overflow nor produce NaN."""
    x = random_inputs(130, dtype, seed=7)
    gk = -5.0 * torch.rand(x["gk"].shape, generator=torch.Generator().manual_seed(8), dtype=dtype)
    gk[:, 50:60] = -30.0  # a burst of near-total forgetting
    g = gk.mean(-1)  # (B, T, H)
    for module, gate in ((kda, gk), (gated_delta_rule, g)):
        o_ref, S_ref = module.recurrent(x["q"], x["k"], x["v"], beta=x["beta"], g=gate, initial_state=x["S0"])
        o, S = module.chunk(
            x["q"], x["k"], x["v"], beta=x["beta"], g=gate, initial_state=x["S0"], chunk_size=64
        )
        assert torch.isfinite(o).all() and torch.isfinite(S).all()
        torch.testing.assert_close(o, o_ref, rtol=TOL[dtype], atol=TOL[dtype])
        torch.testing.assert_close(S, S_ref, rtol=TOL[dtype], atol=TOL[dtype])
