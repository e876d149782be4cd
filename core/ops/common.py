"""Shared pieces of the fixed-size-memory ops: the step record, input checks, chunk plumbing.

Conventions (the same as flash-linear-attention, `fla/ops/*/naive.py`, and HF transformers):

- `q, k: (B, T, H, K)`, `v: (B, T, H, V)`, `beta: (B, T, H)`;
- gates `g` are in log space (`g = log α ≤ 0`): `(B, T, H)` for Gated DeltaNet, `(B, T, H, K)` for KDA;
- the state ("the board") is `S: (B, H, K, V)` — keys index rows, values index columns —
  and a read is `o_t = S_tᵀ (scale · q_t)` with `scale = K ** -0.5` unless given;
- keys are L2-normalised by the caller (models do it; ops never do).

Everything computes in the dtype of `q` (in `step`: of `S`); the other inputs and `initial_state` are cast to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import torch
from torch import Tensor

PART_NAMES = ("decayed", "erase", "write")


@dataclass
class StepResult:
    """One token's update of the board, with its named parts for the pictures.

    `state == parts["decayed"] + parts["erase"] + parts["write"]` (up to float rounding)
    whenever the parts were kept.
    """

    state: Tensor  # (B, H, K, V) the board after this token
    output: Tensor  # (B, H, V)    what the token reads: stateᵀ (scale · q_t)
    parts: dict[str, Tensor] = field(default_factory=dict)  # each (B, H, K, V); empty if not kept
    recalled: Tensor | None = None  # (B, H, V) what the (decayed) board returned for k_t before the write


# ---------------------------------------------------------------------------------------------
# Input checks: wrong shapes raise ValueError with a message that names the tensor.
# ---------------------------------------------------------------------------------------------


def _shape(x: Tensor) -> str:
    return "(" + ", ".join(str(n) for n in x.shape) + ")"


def check_tensor(x: object, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise ValueError(f"{name} must be a floating-point tensor, got dtype {x.dtype}")
    return x


def check_qkv(q: Tensor, k: Tensor, v: Tensor) -> tuple[int, int, int, int, int]:
    """Check `q, k: (B, T, H, K)`, `v: (B, T, H, V)`; return `(B, T, H, K, V)`."""
    for x, name in ((q, "q"), (k, "k"), (v, "v")):
        check_tensor(x, name)
        if x.dim() != 4:
            raise ValueError(f"{name} must have 4 dims (B, T, H, D), got shape {_shape(x)}")
    if q.shape != k.shape:
        raise ValueError(f"q and k must have the same shape (B, T, H, K), got {_shape(q)} and {_shape(k)}")
    if v.shape[:3] != q.shape[:3]:
        raise ValueError(f"v must be (B, T, H, V) with the same B, T, H as q {_shape(q)}, got {_shape(v)}")
    B, T, H, K = q.shape
    V = v.shape[-1]
    if T < 1 or K < 1 or V < 1:
        raise ValueError(f"need T, K, V >= 1, got q {_shape(q)}, v {_shape(v)}")
    return B, T, H, K, V


def check_shape(x: object, name: str, expected: tuple[int, ...], meaning: str) -> Tensor:
    x = check_tensor(x, name)
    if tuple(x.shape) != tuple(expected):
        want = "(" + ", ".join(str(n) for n in expected) + ")"
        raise ValueError(f"{name} must have shape {meaning} = {want}, got {_shape(x)}")
    return x


def check_state(S: object, B: int, H: int, K: int, V: int, name: str = "initial_state") -> Tensor:
    return check_shape(S, name, (B, H, K, V), "(B, H, K, V)")


def initial_board(initial_state: Tensor | None, like: Tensor, B: int, H: int, K: int, V: int) -> Tensor:
    """The board before the first token: zeros, or a copy of the given `(B, H, K, V)` state in `like`'s
    dtype (a copy: a decoding step updates its board in place, never the caller's)."""
    if initial_state is None:
        return like.new_zeros(B, H, K, V)
    return check_state(initial_state, B, H, K, V).to(like.dtype, copy=True)


def check_chunk_size(chunk_size: object) -> int:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
        raise ValueError(f"chunk_size must be an int, got {chunk_size!r}")
    if chunk_size < 1 or chunk_size & (chunk_size - 1):
        raise ValueError(f"chunk_size must be a power of two (1, 2, 4, ..., 64, ...), got {chunk_size}")
    return chunk_size


def resolve_scale(scale: float | None, K: int) -> float:
    """The read scale: `K ** -0.5` by default, as in fla and softmax attention."""
    return K**-0.5 if scale is None else float(scale)


def check_step_inputs(S: Tensor, q_t: Tensor, k_t: Tensor, v_t: Tensor) -> tuple[int, int, int, int]:
    """Check one token's inputs: `S: (B, H, K, V)`, `q_t, k_t: (B, H, K)`, `v_t: (B, H, V)`."""
    for x, name in ((S, "S"), (q_t, "q_t"), (k_t, "k_t"), (v_t, "v_t")):
        check_tensor(x, name)
    if S.dim() != 4:
        raise ValueError(f"S must have 4 dims (B, H, K, V), got shape {_shape(S)}")
    B, H, K, V = S.shape
    check_shape(q_t, "q_t", (B, H, K), "(B, H, K)")
    check_shape(k_t, "k_t", (B, H, K), "(B, H, K)")
    check_shape(v_t, "v_t", (B, H, V), "(B, H, V)")
    return B, H, K, V


def reject_unused(rule: str, **unused: object) -> None:
    """A rule that has no gate (or no beta) refuses one rather than silently ignoring it."""
    for name, value in unused.items():
        if value is not None:
            raise ValueError(f"{rule} takes no {name}; pass None")


# ---------------------------------------------------------------------------------------------
# The contract every rule follows: which inputs it takes, one checked step, one recurrent loop.
# ---------------------------------------------------------------------------------------------

GateKind = Literal["none", "head", "channel"]


@dataclass(frozen=True)
class RuleInputs:
    """What a rule takes besides q, k, v: β (if it erases) and a log gate (per head or per key channel).

    `name` is how error messages call the rule ("the delta rule", "KDA", …). The registry
    (`core/mechanisms.py`) states the same facts; a test checks that both agree.
    """

    name: str
    beta: bool
    gate: GateKind

    def _needs(self) -> str:
        wanted = (["beta_t"] if self.beta else []) + (["g_t"] if self.gate != "none" else [])
        return " and ".join(wanted)

    def gate_dims(self, K: int) -> tuple[tuple[int, ...], str]:
        """Trailing dims of g after (B, T, H) or (B, H), and their meaning."""
        return ((), "") if self.gate == "head" else ((K,), ", K")

    def check_step(
        self, S: Tensor, q_t: Tensor, k_t: Tensor, v_t: Tensor, beta_t: object, g_t: object
    ) -> tuple[int, int, int, int]:
        """Check one token's inputs (`beta_t: (B, H)`, `g_t: (B, H)` or `(B, H, K)`); return `(B, H, K, V)`."""
        unused = {"beta_t": beta_t if not self.beta else None, "g_t": g_t if self.gate == "none" else None}
        reject_unused(self.name, **unused)
        B, H, K, V = check_step_inputs(S, q_t, k_t, v_t)
        if (self.beta and beta_t is None) or (self.gate != "none" and g_t is None):
            raise ValueError(f"{self.name} needs {self._needs()}, with shapes {self._step_shapes()}")
        if self.beta:
            check_shape(beta_t, "beta_t", (B, H), "(B, H)")
        if self.gate != "none":
            dims, meaning = self.gate_dims(K)
            check_shape(g_t, "g_t", (B, H, *dims), f"(B, H{meaning})")
        return B, H, K, V

    def _step_shapes(self) -> str:
        shapes = (["beta_t (B, H)"] if self.beta else []) + (
            ["g_t (B, H)" if self.gate == "head" else "g_t (B, H, K)"] if self.gate != "none" else []
        )
        return ", ".join(shapes)

    def check_sequence(
        self, q: Tensor, k: Tensor, v: Tensor, beta: object, g: object
    ) -> tuple[int, int, int, int, int]:
        """Check a whole sequence's inputs (`beta: (B, T, H)`, `g: (B, T, H)` or `(B, T, H, K)`)."""
        reject_unused(self.name, beta=beta if not self.beta else None, g=g if self.gate == "none" else None)
        B, T, H, K, V = check_qkv(q, k, v)
        if self.beta:
            if beta is None:
                raise ValueError(f"{self.name} needs beta of shape (B, T, H)")
            check_shape(beta, "beta", (B, T, H), "(B, T, H)")
        if self.gate != "none":
            dims, meaning = self.gate_dims(K)
            if g is None:
                raise ValueError(f"{self.name} needs g of shape (B, T, H{meaning})")
            check_shape(g, "g", (B, T, H, *dims), f"(B, T, H{meaning})")
        return B, T, H, K, V


# `_step(S, q_t, k_t, v_t, beta_t, g_t, scale, keep_parts)`: a rule's unchecked update, inputs in S's dtype.
StepFn = Callable[[Tensor, Tensor, Tensor, Tensor, "Tensor | None", "Tensor | None", float, bool], StepResult]


def checked_step(
    inputs: RuleInputs,
    raw_step: StepFn,
    S: Tensor,
    q_t: Tensor,
    k_t: Tensor,
    v_t: Tensor,
    beta_t: Tensor | None,
    g_t: Tensor | None,
    scale: float | None,
    keep_parts: bool,
) -> StepResult:
    """Check one token's inputs, cast them to the board's dtype and run the rule's update."""
    K = inputs.check_step(S, q_t, k_t, v_t, beta_t, g_t)[2]
    dt = S.dtype
    cast = [None if x is None else x.to(dt) for x in (q_t, k_t, v_t, beta_t, g_t)]
    return raw_step(S, *cast, resolve_scale(scale, K), keep_parts)


def recurrent_loop(
    inputs: RuleInputs,
    raw_step: StepFn,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    beta: Tensor | None,
    g: Tensor | None,
    scale: float | None,
    initial_state: Tensor | None,
) -> tuple[Tensor, Tensor]:
    """The one token-by-token loop every rule shares (fla's naive recurrences).

    Returns `o: (B, T, H, V)` and the final board `(B, H, K, V)`, computed in q's dtype.
    """
    B, T, H, K, V = inputs.check_sequence(q, k, v, beta, g)
    scale = resolve_scale(scale, K)
    S = initial_board(initial_state, q, B, H, K, V)  # (B, H, K, V)
    k, v = k.to(q.dtype), v.to(q.dtype)
    beta = None if beta is None else beta.to(q.dtype)  # (B, T, H)
    g = None if g is None else g.to(q.dtype)  # (B, T, H) or (B, T, H, K)
    outputs = []
    for t in range(T):
        beta_t = None if beta is None else beta[:, t]
        g_t = None if g is None else g[:, t]
        result = raw_step(S, q[:, t], k[:, t], v[:, t], beta_t, g_t, scale, False)
        S = result.state
        outputs.append(result.output)  # (B, H, V)
    return torch.stack(outputs, dim=1), S  # (B, T, H, V), (B, H, K, V)


@dataclass
class Chunked:
    """A sequence cut into chunks of C tokens, every tensor in q's dtype (the chunk forms' shared start).

    q is already multiplied by the read scale; padding tokens are zeros (see `pad_time`).
    """

    q: Tensor  # (B, H, N, C, K)
    k: Tensor  # (B, H, N, C, K)
    v: Tensor  # (B, H, N, C, V)
    beta: Tensor | None  # (B, H, N, C)
    g: Tensor | None  # (B, H, N, C) per head, (B, H, N, C, K) per channel
    S0: Tensor  # (B, H, K, V) the board before the first chunk
    T: int  # the real length, before padding
    K: int
    C: int


def chunk_prologue(
    inputs: RuleInputs,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    beta: Tensor | None,
    g: Tensor | None,
    scale: float | None,
    initial_state: Tensor | None,
    chunk_size: int,
) -> Chunked:
    """Check the inputs, pad T to a multiple of C and cut every tensor into `(B, H, N, C, …)` chunks."""
    B, T, H, K, V = inputs.check_sequence(q, k, v, beta, g)
    C = check_chunk_size(chunk_size)
    T_padded = -(-T // C) * C

    def chunked(x: Tensor | None) -> Tensor | None:
        return None if x is None else to_chunks(pad_time(x.to(q.dtype), T_padded), C)

    return Chunked(
        q=chunked(resolve_scale(scale, K) * q),
        k=chunked(k),
        v=chunked(v),
        beta=chunked(beta),
        g=chunked(g),
        S0=initial_board(initial_state, q, B, H, K, V),
        T=T,
        K=K,
        C=C,
    )


# ---------------------------------------------------------------------------------------------
# Chunk plumbing shared by every chunked form.
# ---------------------------------------------------------------------------------------------


def pad_time(x: Tensor, T_padded: int) -> Tensor:
    """Zero-pad dim 1 (time) of a `(B, T, ...)` tensor to `T_padded`.

    Zero padding is harmless at the end: a padded token has k = v = q = 0, beta = 0 and g = 0,
    so it neither writes, erases nor fades the board, and its output is thrown away.
    """
    T = x.shape[1]
    if T == T_padded:
        return x
    pad = x.new_zeros((x.shape[0], T_padded - T, *x.shape[2:]))
    return torch.cat([x, pad], dim=1)


def to_chunks(x: Tensor, chunk_size: int) -> Tensor:
    """`(B, T, H, *D)` → `(B, H, N, C, *D)` with `N = T / C` (T already padded)."""
    B, T, H = x.shape[:3]
    rest = x.shape[3:]
    x = x.reshape(B, T // chunk_size, chunk_size, H, *rest)  # (B, N, C, H, *D)
    return x.movedim(3, 1)  # (B, H, N, C, *D)


def from_chunks(x: Tensor, T: int) -> Tensor:
    """`(B, H, N, C, D)` → `(B, T, H, D)`, dropping the padding."""
    B, H, N, C, D = x.shape
    x = x.movedim(1, 3).reshape(B, N * C, H, D)  # (B, N·C, H, D)
    return x[:, :T]


def solve_unit_lower(L: Tensor, rhs: Tensor) -> Tensor:
    """Solve `(I + L) X = rhs` for strictly-lower-triangular `L: (..., C, C)`, `rhs: (..., C, D)`.

    This is the UT transform's `(I + L)^{-1}`, applied without forming the inverse. It is
    forward substitution — row r is `X_r = rhs_r − Σ_{j<r} L_rj X_j`, exactly what fla's naive
    `for i in range(1, C)` loop does (written out in `forward_substitution`) — done by LAPACK's
    triangular solve, batched over `...`.
    """
    eye = torch.eye(L.shape[-1], dtype=L.dtype, device=L.device)
    return torch.linalg.solve_triangular(L + eye, rhs, upper=False, unitriangular=True)


def ut_transform(L: Tensor, beta: Tensor, k_in: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """`W` and `U` of every chunk at once: solve `(I + L) [W | U] = diag(β) [K_in | V]` (docs/sources.md §1.4).

    L: (B, H, N, C, C) strictly lower; beta: (B, H, N, C); k_in: (B, H, N, C, K) the keys, faded to the
    chunk start where the rule fades; v: (B, H, N, C, V). Returns `w: (…, C, K)`, `u: (…, C, V)`.
    """
    WU = solve_unit_lower(L, beta.unsqueeze(-1) * torch.cat([k_in, v], dim=-1))  # (B, H, N, C, K + V)
    K = k_in.shape[-1]
    return WU[..., :K], WU[..., K:]


def forward_substitution(L: Tensor, rhs: Tensor) -> Tensor:
    """The same solve as `solve_unit_lower`, written out row by row (the readable reference).

    `(I + L) X = rhs` with L strictly lower: row r only needs the rows before it,
        X_0 = rhs_0,   X_r = rhs_r − Σ_{j<r} L_rj X_j.
    Batched over `...`; C sequential steps per chunk — but every chunk at once, independently of the board.
    """
    rows: list[Tensor] = []
    for r in range(L.shape[-1]):
        x_r = rhs[..., r, :]  # (..., D)
        if rows:
            done = torch.stack(rows, dim=-2)  # (..., r, D)
            x_r = x_r - (L[..., r, :r].unsqueeze(-2) @ done).squeeze(-2)  # (..., D)
        rows.append(x_r)
    return torch.stack(rows, dim=-2)  # (..., C, D)


def causal_mask(C: int, device: torch.device, strict: bool = False) -> Tensor:
    """`(C, C)` bool: True where key j may be seen by query r (j ≤ r, or j < r if strict)."""
    return torch.ones(C, C, dtype=torch.bool, device=device).tril(-1 if strict else 0)


def scan_chunks(
    q_in: Tensor,
    w: Tensor,
    u: Tensor,
    attn: Tensor,
    k_out: Tensor,
    state_decay: Tensor | None,
    S: Tensor,
) -> tuple[Tensor, Tensor]:
    """The only sequential part of a chunked delta rule: hand the board from chunk to chunk.

    Per chunk n, with `S` the board entering it (docs/sources.md §1.4–1.6):
        Ṽ   = U − W S                          corrected pseudo-values: what each token really writes
        O   = Q_in S + A Ṽ                     read the old board + attend inside the chunk
        S ← Diag(state_decay) S + K_outᵀ Ṽ     the board leaving the chunk

    Shapes: q_in, w, k_out (B, H, N, C, K); u (B, H, N, C, V); attn (B, H, N, C, C);
    state_decay (B, H, N, K) — or (B, H, N, 1) for one rate per head — or None (no decay); S (B, H, K, V).
    Returns `o: (B, H, N, C, V)` and the final board.
    """
    C = q_in.shape[-2]
    q_and_w = torch.cat([q_in, w], dim=-2)  # (B, H, N, 2C, K) both read the incoming board: one matmul
    k_out_t = k_out.transpose(-1, -2)  # (B, H, N, K, C)
    outputs = []
    for n in range(q_in.shape[2]):
        q_read, w_read = (q_and_w[:, :, n] @ S).split(C, dim=-2)  # (B, H, C, V) each: Q_in S, W S
        v_new = u[:, :, n] - w_read  # (B, H, C, V)
        outputs.append(q_read + attn[:, :, n] @ v_new)  # (B, H, C, V)
        if state_decay is not None:
            S = state_decay[:, :, n, :, None] * S  # (B, H, K, V)
        S = S + k_out_t[:, :, n] @ v_new  # (B, H, K, V)
    return torch.stack(outputs, dim=2), S


def erase_and_write(
    decayed: Tensor, q_t: Tensor, k_t: Tensor, v_t: Tensor, beta_t: Tensor, scale: float, keep_parts: bool
) -> StepResult:
    """The delta rule's update after any decay, shared by DeltaNet, Gated DeltaNet and KDA.

        recalled = decayedᵀ k                 what the board returns for k right now
        erase    = −β k recalledᵀ             remove a β-share of the old value stored under k
        write    = β k vᵀ                     store a β-share of the new value under k
        S_new    = decayed + erase + write  = (I − β k kᵀ) decayed + β k vᵀ

    decayed: (B, H, K, V); q_t, k_t: (B, H, K); v_t: (B, H, V); beta_t: (B, H).
    Without `keep_parts` it does the fused update `S + k (β (v − recalled))ᵀ` (fla's naive code).
    """
    b = beta_t.unsqueeze(-1)  # (B, H, 1)
    recalled = (k_t.unsqueeze(-2) @ decayed).squeeze(-2)  # (B, H, V)
    if keep_parts:
        erase = k_t.unsqueeze(-1) * (-b * recalled).unsqueeze(-2)  # (B, H, K, V)
        write = k_t.unsqueeze(-1) * (b * v_t).unsqueeze(-2)  # (B, H, K, V)
        new_S = decayed + erase + write
        parts = {"decayed": decayed, "erase": erase, "write": write}
    else:
        new_S = decayed + k_t.unsqueeze(-1) * (b * (v_t - recalled)).unsqueeze(-2)  # (B, H, K, V)
        parts = {}
    output = ((scale * q_t).unsqueeze(-2) @ new_S).squeeze(-2)  # (B, H, V)
    return StepResult(state=new_S, output=output, parts=parts, recalled=recalled)
