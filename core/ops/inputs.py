"""One seeded input generator for every rule: the parity tests, the chunk page and `python -m bench.chunked`.

`random_inputs` draws one of everything any rule could need; `rule_kwargs` picks what a given
rule takes (from the registry: β if it erases, a per-head or per-channel gate if it fades), so a
caller writes `mech.ops.chunk(x["q"], x["k"], x["v"], **rule_kwargs(key, x))` for any rule.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from core.mechanisms import get


def random_inputs(
    T: int,
    *,
    dtype: torch.dtype = torch.float64,
    seed: int = 0,
    b: int = 2,
    h: int = 3,
    k_dim: int = 16,
    v_dim: int = 8,
) -> dict[str, torch.Tensor]:
    """Unit keys, β in (0, 1), per-head and per-channel log gates in (−1, 0), a random board."""
    gen = torch.Generator().manual_seed(seed)

    def rand(*shape: int) -> torch.Tensor:
        return torch.rand(*shape, generator=gen, dtype=dtype)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=dtype)

    return {
        "q": randn(b, T, h, k_dim),  # (B, T, H, K)
        "k": F.normalize(randn(b, T, h, k_dim), dim=-1),  # (B, T, H, K) unit keys
        "v": randn(b, T, h, v_dim),  # (B, T, H, V)
        "beta": rand(b, T, h),  # (B, T, H)
        "g": -rand(b, T, h),  # (B, T, H) one log rate per head
        "gk": -rand(b, T, h, k_dim),  # (B, T, H, K) one log rate per key channel
        "S0": randn(b, h, k_dim, v_dim),  # (B, H, K, V)
    }


def rule_kwargs(rule: str, x: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The keyword inputs `rule` takes, from a `random_inputs` dict (sequence form: beta, g)."""
    mech = get(rule)
    out: dict[str, torch.Tensor] = {}
    if mech.takes_beta:
        out["beta"] = x["beta"]
    if mech.gate == "head":
        out["g"] = x["g"]
    elif mech.gate == "channel":
        out["g"] = x["gk"]
    return out


def step_kwargs(rule: str, x: dict[str, torch.Tensor], t: int) -> dict[str, torch.Tensor]:
    """The same for one token `t`, named as `step` wants them (beta_t, g_t)."""
    return {f"{name}_t": value[:, t] for name, value in rule_kwargs(rule, x).items()}
