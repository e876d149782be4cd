"""Each rule reduces to the one before it, and each step is the textbook matrix formula.

- Gated DeltaNet with g = 0 is DeltaNet; KDA with one rate on every channel is Gated DeltaNet.
- β = 0 leaves the board alone; unit key and β = 1: reading the key right after returns its value.
- `step`'s parts (decayed + erase + write) add up to the new board, which equals
  (I − β k kᵀ) Diag(α) S + β k vᵀ built with torch.eye; `recurrent` is a loop over `step`.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from core.mechanisms import delta_rules, get, rule_keys
from core.ops import delta_rule, gated_delta_rule, kda, linear_attention
from core.ops.common import PART_NAMES, StepResult, forward_substitution, solve_unit_lower
from core.ops.inputs import random_inputs, rule_kwargs, step_kwargs
from tests.core.ops.test_chunk_parity import B, H, K, V

TOL = 1e-12  # fp64 throughout


def close(actual: torch.Tensor, expected: torch.Tensor, tol: float = TOL) -> None:
    torch.testing.assert_close(actual, expected, rtol=tol, atol=tol)


# --------------------------------------------------------------------------- reductions between rules


@pytest.mark.parametrize("form", ["recurrent", "chunk"])
def test_gated_delta_with_zero_gate_is_the_delta_rule(form: str) -> None:
    x = random_inputs(45, seed=11)
    chunk_kw = {"chunk_size": 16} if form == "chunk" else {}
    args = (x["q"], x["k"], x["v"])
    o_gd, S_gd = getattr(gated_delta_rule, form)(
        *args, beta=x["beta"], g=torch.zeros_like(x["g"]), initial_state=x["S0"], **chunk_kw
    )
    o_dr, S_dr = getattr(delta_rule, form)(*args, beta=x["beta"], initial_state=x["S0"], **chunk_kw)
    close(o_gd, o_dr)
    close(S_gd, S_dr)


@pytest.mark.parametrize("form", ["recurrent", "chunk"])
def test_kda_with_one_rate_on_every_channel_is_gated_delta(form: str) -> None:
    x = random_inputs(45, seed=12)
    chunk_kw = {"chunk_size": 16} if form == "chunk" else {}
    args = (x["q"], x["k"], x["v"])
    same_rate = x["g"].unsqueeze(-1).expand(-1, -1, -1, K)  # (B, T, H, K)
    o_kda, S_kda = getattr(kda, form)(*args, beta=x["beta"], g=same_rate, initial_state=x["S0"], **chunk_kw)
    o_gd, S_gd = getattr(gated_delta_rule, form)(
        *args, beta=x["beta"], g=x["g"], initial_state=x["S0"], **chunk_kw
    )
    close(o_kda, o_gd)
    close(S_kda, S_gd)


def test_delta_rule_with_orthonormal_keys_and_beta_one_is_linear_attention() -> None:
    """On an empty board with orthonormal keys nothing is stored under a new key, so erasing
    removes nothing: the delta rule writes exactly what linear attention adds."""
    x = random_inputs(K, seed=13)
    basis = torch.linalg.qr(torch.randn(K, K, dtype=torch.float64))[0]  # (K, K) orthonormal columns
    k = basis.T.expand(B, H, K, K).transpose(1, 2).contiguous()  # (B, T=K, H, K): token t gets key t
    ones = torch.ones(B, K, H, dtype=torch.float64)
    o_dr, S_dr = delta_rule.recurrent(x["q"], k, x["v"], beta=ones)
    o_la, S_la = linear_attention.recurrent(x["q"], k, x["v"])
    close(o_dr, o_la)
    close(S_dr, S_la)
    # and with d_k orthonormal keys, linear attention recalls every value exactly (docs/sources.md §5)
    recalled = torch.einsum("bthk,bhkv->bthv", k, S_la)  # (B, T, H, V)
    close(recalled, x["v"])


# --------------------------------------------------------------------------- what one write does


@pytest.mark.parametrize("form", ["recurrent", "chunk"])
def test_delta_rule_with_beta_zero_leaves_the_board_unchanged(form: str) -> None:
    x = random_inputs(30, seed=14)
    chunk_kw = {"chunk_size": 8} if form == "chunk" else {}
    o, S = getattr(delta_rule, form)(
        x["q"], x["k"], x["v"], beta=torch.zeros_like(x["beta"]), initial_state=x["S0"], **chunk_kw
    )
    close(S, x["S0"])
    close(o, torch.einsum("bthk,bhkv->bthv", K**-0.5 * x["q"], x["S0"]))  # every token reads the old board


@pytest.mark.parametrize("rule", delta_rules())
def test_unit_key_with_beta_one_reads_back_its_value(rule: str) -> None:
    x = random_inputs(3, seed=15)
    x["beta"] = torch.ones_like(x["beta"])
    S = x["S0"]
    for t in range(3):
        k_t, v_t = x["k"][:, t], x["v"][:, t]
        result = get(rule).ops.step(S, x["q"][:, t], k_t, v_t, **step_kwargs(rule, x, t))
        read = (k_t.unsqueeze(-2) @ result.state).squeeze(-2)  # (B, H, V) = new Sᵀ k_t
        close(read, v_t)
        S = result.state


def test_rewriting_a_key_replaces_instead_of_blurring() -> None:
    """Same key, two values: DeltaNet (β = 1) returns the second, linear attention the sum."""
    k_t = F.normalize(torch.randn(1, 1, K, dtype=torch.float64), dim=-1)  # (B, H, K)
    v1, v2 = torch.randn(2, 1, 1, V, dtype=torch.float64)  # (B, H, V) each
    q_t = k_t * K**0.5  # reads exactly Sᵀ k with the default scale
    one = torch.ones(1, 1, dtype=torch.float64)
    S_dn = S_la = torch.zeros(1, 1, K, V, dtype=torch.float64)
    for v_t in (v1, v2):
        dn = delta_rule.step(S_dn, q_t, k_t, v_t, beta_t=one)
        la = linear_attention.step(S_la, q_t, k_t, v_t)
        S_dn, S_la = dn.state, la.state
    close(dn.output, v2)
    close(la.output, v1 + v2)
    close(dn.recalled, v1)  # before the second write the board held v1 under k


# --------------------------------------------------------------------------- step == matrix formula


def explicit_update(
    rule: str, S: torch.Tensor, k_t: torch.Tensor, v_t: torch.Tensor, args: dict
) -> torch.Tensor:
    """The textbook formula per (b, h), with explicit matrices: (I − β k kᵀ) Diag(α) S + β k vᵀ.

    Without β (linear attention) the erase is absent and β = 1; without a gate α = 1.
    """
    mech = get(rule)
    new = torch.empty_like(S)
    eye = torch.eye(K, dtype=S.dtype)
    for b in range(S.shape[0]):
        for h in range(S.shape[1]):
            k, v, s = k_t[b, h], v_t[b, h], S[b, h]  # (K,), (V,), (K, V)
            beta = args["beta_t"][b, h] if mech.takes_beta else torch.ones((), dtype=S.dtype)
            erase = beta * torch.outer(k, k) if mech.takes_beta else torch.zeros(K, K, dtype=S.dtype)
            if mech.gate == "head":
                alpha = args["g_t"][b, h].exp().repeat(K)
            elif mech.gate == "channel":
                alpha = args["g_t"][b, h].exp()
            else:
                alpha = torch.ones(K, dtype=S.dtype)
            new[b, h] = (eye - erase) @ torch.diag(alpha) @ s + beta * torch.outer(k, v)
    return new


@pytest.mark.parametrize("rule", rule_keys())
def test_step_is_the_matrix_formula_and_its_parts_add_up(rule: str) -> None:
    x = random_inputs(5, seed=16)
    S, step = x["S0"], get(rule).ops.step
    for t in range(5):
        q_t, k_t, v_t, args = x["q"][:, t], x["k"][:, t], x["v"][:, t], step_kwargs(rule, x, t)
        result = step(S, q_t, k_t, v_t, **args)
        assert isinstance(result, StepResult)
        assert set(result.parts) == set(PART_NAMES)
        for part in result.parts.values():
            assert part.shape == (B, H, K, V)
        close(result.parts["decayed"] + result.parts["erase"] + result.parts["write"], result.state)
        close(result.state, explicit_update(rule, S, k_t, v_t, args))
        close(result.output, torch.einsum("bhkv,bhk->bhv", result.state, K**-0.5 * q_t))
        # every rule reports what the faded board returned for k_t before the write
        close(result.recalled, torch.einsum("bhkv,bhk->bhv", result.parts["decayed"], k_t))
        fused = step(S, q_t, k_t, v_t, keep_parts=False, **args)
        assert fused.parts == {}
        close(fused.state, result.state)
        close(fused.output, result.output)
        S = result.state


def test_parts_name_what_each_rule_does() -> None:
    x = random_inputs(1, seed=17)
    q_t, k_t, v_t, S = x["q"][:, 0], x["k"][:, 0], x["v"][:, 0], x["S0"]
    la = linear_attention.step(S, q_t, k_t, v_t)
    close(la.parts["decayed"], S)
    assert not la.parts["erase"].any()
    dn = delta_rule.step(S, q_t, k_t, v_t, beta_t=x["beta"][:, 0])
    close(dn.parts["decayed"], S)  # nothing fades in DeltaNet
    close(dn.parts["write"], la.parts["write"] * x["beta"][:, 0, :, None, None])  # β k vᵀ
    gd = gated_delta_rule.step(S, q_t, k_t, v_t, beta_t=x["beta"][:, 0], g_t=x["g"][:, 0])
    close(gd.parts["decayed"], S * x["g"][:, 0].exp()[..., None, None])
    kd = kda.step(S, q_t, k_t, v_t, beta_t=x["beta"][:, 0], g_t=x["gk"][:, 0])
    close(kd.parts["decayed"], S * x["gk"][:, 0].exp()[..., None])  # row d fades by α_d


@pytest.mark.parametrize("rule", rule_keys())
def test_recurrent_is_a_loop_over_step(rule: str) -> None:
    T = 9
    x = random_inputs(T, seed=18)
    ops = get(rule).ops
    S, outputs = x["S0"], []
    for t in range(T):
        result = ops.step(S, x["q"][:, t], x["k"][:, t], x["v"][:, t], **step_kwargs(rule, x, t))
        S = result.state
        outputs.append(result.output)
    o, S_final = ops.recurrent(x["q"], x["k"], x["v"], initial_state=x["S0"], **rule_kwargs(rule, x))
    close(o, torch.stack(outputs, dim=1))
    close(S_final, S)


def test_ut_transform_solve_is_forward_substitution_and_the_inverse() -> None:
    """The chunked forms' triangular solve equals the row-by-row loop and (I + L)^{-1} rhs."""
    gen = torch.Generator().manual_seed(19)
    L = torch.randn(2, 3, 16, 16, generator=gen, dtype=torch.float64).tril(-1) * 0.3  # (..., C, C)
    rhs = torch.randn(2, 3, 16, 5, generator=gen, dtype=torch.float64)  # (..., C, D)
    fast = solve_unit_lower(L, rhs)
    close(fast, forward_substitution(L, rhs))
    close(fast, torch.linalg.inv(torch.eye(16, dtype=torch.float64) + L) @ rhs, tol=1e-10)
