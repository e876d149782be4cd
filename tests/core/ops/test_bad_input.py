"""Bad input to the ops raises ValueError with a message that says what was expected."""

from __future__ import annotations

import pytest
import torch

from core.ops import delta_rule, gated_delta_rule, kda, linear_attention
from core.ops.inputs import random_inputs
from tests.core.ops.test_chunk_parity import B, H, K, V

X = random_inputs(10)
Q, KEYS, VALS, BETA, G, GK, S0 = (X[n] for n in ("q", "k", "v", "beta", "g", "gk", "S0"))


@pytest.mark.parametrize("form", ["recurrent", "chunk"])
def test_wrong_qkv_shapes(form: str) -> None:
    fn = getattr(delta_rule, form)
    with pytest.raises(ValueError, match=r"q must have 4 dims \(B, T, H, D\)"):
        fn(Q[0], KEYS, VALS, beta=BETA)
    with pytest.raises(ValueError, match="q and k must have the same shape"):
        fn(Q, KEYS[..., :-1], VALS, beta=BETA)
    with pytest.raises(ValueError, match="v must be"):
        fn(Q, KEYS, VALS[:, :-1], beta=BETA)
    with pytest.raises(ValueError, match="need T, K, V >= 1"):
        fn(Q[:, :0], KEYS[:, :0], VALS[:, :0], beta=BETA[:, :0])


def test_wrong_beta_gate_and_state_shapes() -> None:
    with pytest.raises(ValueError, match=r"beta must have shape \(B, T, H\)"):
        delta_rule.chunk(Q, KEYS, VALS, beta=BETA[..., None])
    with pytest.raises(ValueError, match=r"g must have shape \(B, T, H\)"):
        gated_delta_rule.recurrent(Q, KEYS, VALS, beta=BETA, g=GK)
    with pytest.raises(ValueError, match=r"g must have shape \(B, T, H, K\)"):
        kda.chunk(Q, KEYS, VALS, beta=BETA, g=G)
    with pytest.raises(ValueError, match=r"initial_state must have shape \(B, H, K, V\) = \(2, 3, 16, 8\)"):
        linear_attention.chunk(Q, KEYS, VALS, initial_state=S0.transpose(-1, -2))
    with pytest.raises(ValueError, match="floating-point"):
        delta_rule.recurrent(Q, KEYS, VALS, beta=torch.ones(BETA.shape, dtype=torch.long))
    with pytest.raises(ValueError, match="must be a torch.Tensor"):
        linear_attention.parallel(Q.numpy(), KEYS, VALS)


@pytest.mark.parametrize("chunk_size", [0, -4, 3, 48, 2.0, True, "64"])
def test_chunk_size_must_be_a_power_of_two(chunk_size: object) -> None:
    for call in (
        lambda: linear_attention.chunk(Q, KEYS, VALS, chunk_size=chunk_size),
        lambda: delta_rule.chunk(Q, KEYS, VALS, beta=BETA, chunk_size=chunk_size),
        lambda: gated_delta_rule.chunk(Q, KEYS, VALS, beta=BETA, g=G, chunk_size=chunk_size),
        lambda: kda.chunk(Q, KEYS, VALS, beta=BETA, g=GK, chunk_size=chunk_size),
    ):
        with pytest.raises(ValueError, match="chunk_size must be"):
            call()


def test_step_checks_its_inputs() -> None:
    q_t, k_t, v_t, beta_t = Q[:, 0], KEYS[:, 0], VALS[:, 0], BETA[:, 0]
    with pytest.raises(ValueError, match=r"S must have 4 dims \(B, H, K, V\)"):
        delta_rule.step(S0[0], q_t, k_t, v_t, beta_t=beta_t)
    with pytest.raises(ValueError, match=r"k_t must have shape \(B, H, K\)"):
        delta_rule.step(S0, q_t, k_t[..., :-1], v_t, beta_t=beta_t)
    with pytest.raises(ValueError, match=r"v_t must have shape \(B, H, V\) = \(2, 3, 8\)"):
        linear_attention.step(S0, q_t, k_t, v_t[..., :-1])
    with pytest.raises(ValueError, match="needs beta_t"):
        delta_rule.step(S0, q_t, k_t, v_t)
    with pytest.raises(ValueError, match="needs beta_t and g_t"):
        gated_delta_rule.step(S0, q_t, k_t, v_t, beta_t=beta_t)
    with pytest.raises(ValueError, match=r"g_t must have shape \(B, H, K\)"):
        kda.step(S0, q_t, k_t, v_t, beta_t=beta_t, g_t=G[:, 0])
    with pytest.raises(ValueError, match="linear attention takes no beta_t"):
        linear_attention.step(S0, q_t, k_t, v_t, beta_t=beta_t)
    with pytest.raises(ValueError, match="the delta rule takes no g_t"):
        delta_rule.step(S0, q_t, k_t, v_t, beta_t=beta_t, g_t=G[:, 0])


def test_good_input_after_bad_input_still_works() -> None:
    """Validation has no side effects: the shapes used above are the real ones."""
    o, S = kda.chunk(Q, KEYS, VALS, beta=BETA, g=GK, initial_state=S0, chunk_size=4)
    assert o.shape == (B, 10, H, V) and S.shape == (B, H, K, V)
