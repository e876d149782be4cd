"""The run recorder: a stream of key→value pairs written onto the board, every step kept.

`write_stream` runs a rule's core/ops `step` token by token and keeps, per token, the board
before, after the fade, the erase, the write and after; `BoardRun.recall` reads every key back
and scores it (nearest value, as in MQAR). The softmax baseline keeps a cache instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from core.board.keys import BoardError, KeySpace, check_size, nearest, value_vectors
from core.board.rules import BASELINE, Fade, check_beta, check_rule, mechanism
from core.ops.forms import one_thread

Pair = tuple[str, str]
PARTS = ("old", "decayed", "erase", "write", "new")


@dataclass
class Recall:
    """Readback of every written key: rows follow `names`, columns the value dimensions."""

    names: list[str]
    readback: np.ndarray  # (n, V)
    predicted: np.ndarray  # (n,) index of the nearest value, -1 on a tie
    target: np.ndarray  # (n,) index of the value last written under the key
    value_names: list[str] = field(default_factory=list)
    values: np.ndarray | None = None  # (n_values, V) the value vectors

    @property
    def correct(self) -> np.ndarray:
        return self.predicted == self.target

    @property
    def accuracy(self) -> float:
        return float(self.correct.mean()) if len(self.names) else 0.0

    @property
    def error(self) -> np.ndarray:
        """Distance of each readback from the value vector it should be: (n,)."""
        return np.linalg.norm(self.readback - self.values[self.target], axis=1)

    @property
    def strength(self) -> np.ndarray:
        """How much of the right value comes back: readback · value (1 = all of it, 0 = gone)."""
        return (self.readback * self.values[self.target]).sum(1)

    def checked_names(self) -> list[str]:
        """Each key name with ✓ (nearest value is right) or ✗."""
        return [f"{name} {'✓' if ok else '✗'}" for name, ok in zip(self.names, self.correct, strict=True)]

    def _mean(self, per_key: np.ndarray, names: Sequence[str]) -> float:
        unknown = [n for n in names if n not in self.names]
        if unknown or not names:
            raise BoardError(f"keys {unknown or '(none)'} were not read back; read: {', '.join(self.names)}")
        return float(np.mean([per_key[self.names.index(n)] for n in names]))

    def mean_strength(self, names: Sequence[str]) -> float:
        """Average `strength` over the keys `names`."""
        return self._mean(self.strength, names)

    def mean_error(self, names: Sequence[str]) -> float:
        """Average `error` over the keys `names`."""
        return self._mean(self.error, names)


@dataclass
class BoardRun:
    """A whole stream written onto the board, one record per token (numpy float32).

    For the board rules: old[t] → decayed[t] → (+ erase[t]) → (+ write[t]) → new[t],
    each (T, d, V); new[t] == decayed[t] + erase[t] + write[t]. For "softmax" the five
    arrays are None — there is no board, only the growing cache of keys and values.
    """

    rule: str
    pairs: list[Pair]
    key_names: list[str]
    value_names: list[str]
    keys: np.ndarray  # (n_keys, d) one row per distinct key name
    values: np.ndarray  # (n_values, V) one row per distinct value name
    token_keys: np.ndarray  # (T, d) the key written at each token
    token_values: np.ndarray  # (T, V)
    sharpness: float  # softmax baseline: logits = sharpness · kᵀk_j
    old: np.ndarray | None = None
    decayed: np.ndarray | None = None
    erase: np.ndarray | None = None
    write: np.ndarray | None = None
    new: np.ndarray | None = None
    outputs: np.ndarray | None = None  # (T, V) ops output: readback of the key just written
    log_gates: np.ndarray | None = None  # (T, d) log α per token and channel (zeros without fade)

    @property
    def T(self) -> int:
        return len(self.pairs)

    @property
    def d(self) -> int:
        return int(self.keys.shape[1])

    @property
    def V(self) -> int:
        return int(self.values.shape[1])

    def board(self, t: int | None = None) -> np.ndarray:
        """The board after the first t tokens (t = 0: empty; default: the whole stream)."""
        t = self._check_t(t)
        if self.new is None:
            raise BoardError("softmax attention keeps a cache, not a board")
        return np.zeros((self.d, self.V), np.float32) if t == 0 else self.new[t - 1]

    def _check_t(self, t: int | None) -> int:
        if t is None:
            return self.T
        if not 0 <= t <= self.T:
            raise BoardError(f"step {t} is outside the stream (0..{self.T})")
        return int(t)

    def written(self, t: int | None = None) -> list[str]:
        """Distinct key names written in the first t tokens, in key order."""
        t = self._check_t(t)
        seen = {k for k, _ in self.pairs[:t]}
        return [name for name in self.key_names if name in seen]

    def target(self, name: str, t: int | None = None) -> str:
        """The value last written under `name` within the first t tokens."""
        t = self._check_t(t)
        last = [v for k, v in self.pairs[:t] if k == name]
        if not last:
            raise BoardError(f"key {name!r} has not been written yet (step {t})")
        return last[-1]

    def key(self, name: str) -> np.ndarray:
        if name not in self.key_names:
            known = ", ".join(self.key_names[:12]) + (" …" if len(self.key_names) > 12 else "")
            raise BoardError(f"unknown key {name!r}; this stream wrote: {known}")
        return self.keys[self.key_names.index(name)]

    def value(self, name: str) -> np.ndarray:
        if name not in self.value_names:
            raise BoardError(f"unknown value {name!r}; the values are: {', '.join(self.value_names)}")
        return self.values[self.value_names.index(name)]

    def read(self, name: str, t: int | None = None) -> np.ndarray:
        """What the memory returns for key `name` after t tokens: (V,) float32."""
        t = self._check_t(t)
        return self.read_vector(self.key(name), t)

    def read_vector(self, q: np.ndarray, t: int) -> np.ndarray:
        if self.rule == BASELINE:
            if t == 0:
                return np.zeros(self.V, np.float32)
            logits = self.sharpness * (self.token_keys[:t] @ q)  # (t,)
            w = np.exp(logits - logits.max())
            return (w / w.sum()) @ self.token_values[:t]
        return self.board(t).T @ q  # o = Sᵀ q, scale 1

    def value_share(self, name: str, value: str, t: int | None = None) -> float:
        """How much of value `value` reading key `name` returns after t tokens: readback · value."""
        return float(self.read(name, t) @ self.value(value))

    def nearest_name(self, readback: np.ndarray) -> str | None:
        """The value name nearest to one readback (V,); None when two are equally near."""
        i = int(nearest(readback, self.values))
        return self.value_names[i] if i >= 0 else None

    def erased(self, t: int) -> float:
        """Total size (sum of |entries|) of what token t (1-based) erased."""
        t = self._check_t(t)
        if self.erase is None or t == 0:
            return 0.0
        return float(np.abs(self.erase[t - 1]).sum())

    def recall(self, t: int | None = None) -> Recall:
        """Read back every key written so far and score it against its latest value."""
        t = self._check_t(t)
        names = self.written(t)
        if not names:
            empty = np.zeros(0, int)
            return Recall([], np.zeros((0, self.V), np.float32), empty, empty, self.value_names, self.values)
        readback = np.stack([self.read(n, t) for n in names]).astype(np.float32)  # (n, V)
        target = np.array([self.value_names.index(self.target(n, t)) for n in names])
        predicted = nearest(readback, self.values)
        return Recall(names, readback, predicted, target, self.value_names, self.values)


def write_stream(
    pairs: Sequence[Pair],
    rule: str,
    *,
    d: int,
    d_v: int | None = None,
    keys: str = "random",
    seed: int = 0,
    beta: float = 1.0,
    fade: Fade | None = None,
    groups: dict[str, tuple[int, int]] | None = None,
    value_names: Sequence[str] | None = None,
) -> BoardRun:
    """Write `pairs` (key name, value name) one by one with `rule`; record every step.

    rule: a registered rule key (core.mechanisms: "linear", "delta", "gated_delta", "kda" …,
          run through its core/ops `step`) or "softmax".
    d, d_v: key and value dimensions — the board is d × d_v (d_v defaults to d).
    beta: write strength of the rules that take β (ignored by the others).
    fade: fade rates for the rules with a gate (ignored by the others).
    value_names: the value vocabulary (columns); default the values in order of appearance.
    """
    pairs = [(str(k), str(v)) for k, v in pairs]
    if not pairs:
        raise BoardError("write at least one key→value pair (n ≥ 1)")
    check_rule(rule)
    space = KeySpace(d, keys, seed)
    key_names = list(dict.fromkeys(k for k, _ in pairs))
    stream_values = list(dict.fromkeys(v for _, v in pairs))
    if value_names is None:
        value_names = stream_values
    else:
        value_names = list(dict.fromkeys(value_names))
        missing = [v for v in stream_values if v not in value_names]
        if missing:
            raise BoardError(f"values {missing} are not in the value vocabulary")
    d_v = d if d_v is None else d_v
    check_size(d_v, "value")
    key_vecs = space.vectors(key_names, groups)
    val_vecs = value_vectors(len(value_names), d_v, seed)
    run = BoardRun(
        rule=rule,
        pairs=pairs,
        key_names=key_names,
        value_names=list(value_names),
        keys=key_vecs,
        values=val_vecs,
        token_keys=key_vecs[[key_names.index(k) for k, _ in pairs]],  # (T, d)
        token_values=val_vecs[[value_names.index(v) for _, v in pairs]],  # (T, V)
        sharpness=math.sqrt(d),
    )
    if rule == BASELINE:
        return run
    check_beta(beta)
    g = (fade or Fade()).log_gates(rule, d, len(pairs))
    with one_thread():
        _record_steps(run, beta, g)
    return run


def _record_steps(run: BoardRun, beta: float, g: np.ndarray | None) -> None:
    """Run core/ops `step` token by token and keep old/decayed/erase/write/new boards."""
    mech = mechanism(run.rule)
    T, d, V = run.T, run.d, run.V
    S = torch.zeros(1, 1, d, V, dtype=torch.float32)  # (B, H, K, V)
    rec = {name: np.zeros((T, d, V), np.float32) for name in PARTS}
    run.outputs = np.zeros((T, V), np.float32)
    run.log_gates = np.zeros((T, d), np.float32)
    kwargs: dict = {}
    if mech.takes_beta:
        kwargs["beta_t"] = torch.full((1, 1), float(beta))  # (B, H)
    if g is not None:
        run.log_gates[:] = g.reshape(T, -1)  # (T, 1) broadcasts over channels for a per-head gate
    for t in range(T):
        k_t = torch.from_numpy(run.token_keys[t]).reshape(1, 1, d)  # (B, H, K)
        v_t = torch.from_numpy(run.token_values[t]).reshape(1, 1, V)  # (B, H, V)
        if g is not None:
            kwargs["g_t"] = torch.as_tensor(g[t]).reshape(1, 1, *g.shape[1:])  # (B, H) or (B, H, K)
        res = mech.ops.step(S, k_t, k_t, v_t, scale=1.0, keep_parts=True, **kwargs)
        rec["old"][t] = S[0, 0].numpy()
        for part in ("decayed", "erase", "write"):
            rec[part][t] = res.parts[part][0, 0].to(torch.float32).numpy()
        S = res.state
        rec["new"][t] = S[0, 0].numpy()
        run.outputs[t] = res.output.reshape(-1).numpy()
    run.old, run.decayed, run.erase, run.write, run.new = (rec[name] for name in PARTS)


def channel_fill(run: BoardRun) -> np.ndarray:
    """How much each key channel holds after every token: row norms of the board, (T + 1, d)."""
    if run.new is None:
        raise BoardError("softmax attention keeps a cache, not a board")
    boards = np.concatenate([np.zeros((1, run.d, run.V), np.float32), run.new])  # (T + 1, d, V)
    return np.linalg.norm(boards, axis=2)
