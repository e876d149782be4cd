"""The readable memory playground: named keys written as key→value pairs onto one board.

Lessons 3–7 use it to show what a fixed-size memory can and cannot hold. A key is a
name ("apple", "sky", "k7") mapped to a fixed unit vector in `d` dimensions; a
value is a name mapped to a fixed vector in `d_v` dimensions (default d_v = d): the
first d_v values get one column of the board each (one-hot, so the board is easy to
read), later ones random unit vectors, because a fixed-size board has no more
columns to give.

The board is the state `S` of shape (d, d_v) in the fla layout (facts.md §0): writing
the pair (k, v) runs one step of a core/ops rule —

    linear       S ← S + k vᵀ                                  (add; Katharopoulos et al. 2020)
    delta        S ← S + β k (v − Sᵀk)ᵀ                         (erase, then write; Schlag et al. 2021,
                                                                  Yang et al. 2024 arXiv 2406.06484)
    gated_delta  S ← α S, then the delta step                   (one fade rate; arXiv 2412.06464)
    kda          S ← Diag(α) S, then the delta step             (a fade rate per key channel;
                                                                  Kimi Linear arXiv 2510.26692)

and reading key k returns `Sᵀ k` — the ops' output `o = Sᵀ(scale·q)` with q = k and
scale = 1, so reading a unit key back from a board that holds only it returns the
stored value exactly. The baseline, softmax attention, keeps every pair (a cache)
and reads `Σ_j softmax(s·kᵀk_j) v_j` with sharpness s = √d — what a standard
attention head with unit-variance entries would do.

Recall is scored as in associative-recall tests (MQAR, Zoology arXiv 2312.04927):
a key counts as recalled when the value nearest to its readback is the value
written last under that key, with no tie.

Everything returned is numpy float32, so pages can cache and index it.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType

import numpy as np
import torch

RULES: tuple[str, ...] = ("linear", "delta", "gated_delta", "kda")
BASELINE = "softmax"
KEY_KINDS: tuple[str, ...] = ("random", "orthogonal")
BYTES_PER_NUMBER = 4  # fp32

Pair = tuple[str, str]


class BoardError(ValueError):
    """Bad input to the board playground (unknown key or rule, empty stream, d < 1 …)."""


# --------------------------------------------------------------------------- keys and values


@dataclass(frozen=True)
class KeySpace:
    """How names become vectors (keys; values use kind "orthogonal" in d_v dimensions).

    kind "random":     each name gets a seeded random unit vector (Gaussian, normalised);
    kind "orthogonal": the i-th new name gets the i-th basis vector e_i — one board row per
                       key. Only d of those exist, so names past the d-th get random unit
                       vectors (there is no orthogonal direction left for them).
    groups:            optional name → (first channel, end channel): the key lives only in
                       those channels (lesson 7 keeps a "long memory" group apart).
    """

    d: int
    kind: str = "random"
    seed: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.d, int | np.integer) or self.d < 1:
            raise BoardError(f"the board needs at least one key dimension (got d={self.d!r})")
        if self.kind not in KEY_KINDS:
            raise BoardError(f"unknown key kind {self.kind!r}; choose one of {', '.join(KEY_KINDS)}")

    def vectors(self, names: Sequence[str], groups: dict[str, tuple[int, int]] | None = None) -> np.ndarray:
        """Unit key vectors for distinct `names`, in order: (len(names), d) float32.

        The i-th name of a channel group always gets the same vector for a given seed, however
        many names follow (rows of one seeded Gaussian draw, normalised).
        """
        groups = groups or {}
        spans = [groups.get(name, (0, self.d)) for name in names]
        out = np.zeros((len(names), self.d), dtype=np.float32)
        for lo, hi in dict.fromkeys(spans):
            if not 0 <= lo < hi <= self.d:
                raise BoardError(f"channels {lo}..{hi} do not fit in a key of size d={self.d}")
            rows = [r for r, span in enumerate(spans) if span == (lo, hi)]
            width = hi - lo
            draw = np.random.default_rng([self.seed, lo, hi]).standard_normal((len(rows), width))
            draw /= np.linalg.norm(draw, axis=1, keepdims=True)
            for index, row in enumerate(rows):
                if self.kind == "orthogonal" and index < width:
                    out[row, lo + index] = 1.0
                else:
                    out[row, lo:hi] = draw[index]
        return out


VALUE_SEED_OFFSET = 10_007  # values draw from a different stream of random numbers than keys


def value_vectors(n: int, d_v: int, seed: int = 0) -> np.ndarray:
    """Vectors for n named values in d_v dimensions: one-hot while columns last, then random unit."""
    return KeySpace(d_v, "orthogonal", seed + VALUE_SEED_OFFSET).vectors([str(i) for i in range(n)])


def nearest(readback: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of the value nearest (Euclidean) to each readback row; -1 where two tie.

    readback (..., V), values (N, V) → (...,) int.
    """
    dist = ((readback[..., None, :] - values) ** 2).sum(-1)  # (..., N)
    order = np.sort(dist, axis=-1)
    best = dist.argmin(-1)
    if dist.shape[-1] > 1:
        tied = order[..., 1] - order[..., 0] <= 1e-6
        best = np.where(tied, -1, best)
    return best


# --------------------------------------------------------------------------- rules through core/ops


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run torch on one CPU thread: the board's matrices are tiny, and on a busy machine extra
    threads only wait for each other (measured here: 100 steps take ~50 ms on one thread,
    over 1 s on two)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _ops(rule: str) -> ModuleType:
    if rule == "linear":
        from core.ops import linear_attention as mod
    elif rule == "delta":
        from core.ops import delta_rule as mod
    elif rule == "gated_delta":
        from core.ops import gated_delta_rule as mod
    elif rule == "kda":
        from core.ops import kda as mod
    else:
        raise BoardError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)} (or {BASELINE!r})")
    return mod


@dataclass(frozen=True)
class Fade:
    """How much the board fades before a token writes (α = 1 keeps everything).

    rate:     Gated DeltaNet's one α for the whole board;
    channels: KDA's α per key channel, length d (default: `rate` in every channel);
    at:       the tokens whose gate fades (0-based); None = every token. A trained model
              computes its gate from each token, so it can fade hard where the text changes
              topic and hardly at all inside a topic — `at` plays that gate by hand.
    """

    rate: float = 1.0
    channels: tuple[float, ...] | None = None
    at: tuple[int, ...] | None = None

    def log_gates(self, rule: str, d: int, T: int) -> np.ndarray | None:
        """g = log α per token: (T,) for gated_delta, (T, d) for kda, None for the other rules."""
        if rule not in ("gated_delta", "kda"):
            return None
        if rule == "gated_delta":
            _check_rate(self.rate, "fade rate")
            per_token = np.full((T,), math.log(self.rate), np.float32)
        else:
            alphas = self.channels if self.channels is not None else (self.rate,) * d
            if len(alphas) != d:
                raise BoardError(f"KDA needs one fade rate per key channel: {d} rates, got {len(alphas)}")
            for a in alphas:
                _check_rate(a, "channel fade rate")
            per_token = np.tile(np.log(np.asarray(alphas, np.float64)).astype(np.float32), (T, 1))
        if self.at is not None:
            keep = np.ones(T, dtype=bool)
            for t in self.at:
                if not 0 <= t < T:
                    raise BoardError(f"fade at token {t}: the stream has tokens 0..{T - 1}")
                keep[t] = False
            per_token[keep] = 0.0  # log 1: no fade on the other tokens
        return per_token


def _check_rate(a: float, what: str) -> None:
    if not 0.0 < float(a) <= 1.0:
        raise BoardError(f"a {what} must lie in (0, 1] (1 keeps everything), got {a}")


def _check_beta(beta: float) -> None:
    if not 0.0 < float(beta) <= 1.0:
        raise BoardError(f"the write strength β must lie in (0, 1], got {beta}")


# --------------------------------------------------------------------------- one stream


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

    def attention_weights(self, name: str, t: int | None = None) -> np.ndarray:
        """Softmax baseline only: weight of each cached token when reading `name`, (t,)."""
        t = self._check_t(t)
        logits = self.sharpness * (self.token_keys[:t] @ self.key(name))
        w = np.exp(logits - logits.max())
        return w / w.sum()

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

    def predicted_names(self) -> list[str]:
        return [self.value_names[i] if i >= 0 else "(tie)" for i in self.predicted]


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

    rule: "linear", "delta", "gated_delta", "kda" (through core/ops `step`) or "softmax".
    d, d_v: key and value dimensions — the board is d × d_v (d_v defaults to d).
    beta: write strength of the delta rules (ignored by linear attention).
    fade: fade rates for gated_delta / kda (ignored by the others).
    value_names: the value vocabulary (columns); default the values in order of appearance.
    """
    pairs = [(str(k), str(v)) for k, v in pairs]
    if not pairs:
        raise BoardError("write at least one key→value pair (n ≥ 1)")
    if rule not in RULES and rule != BASELINE:
        raise BoardError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)} (or {BASELINE!r})")
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
    if not isinstance(d_v, int | np.integer) or d_v < 1:
        raise BoardError(f"the board needs at least one value dimension (got d_v={d_v!r})")
    key_vecs = space.vectors(key_names, groups)
    val_vecs = value_vectors(len(value_names), d_v, seed)
    token_keys = key_vecs[[key_names.index(k) for k, _ in pairs]]  # (T, d)
    token_values = val_vecs[[value_names.index(v) for _, v in pairs]]  # (T, V)
    run = BoardRun(
        rule=rule,
        pairs=pairs,
        key_names=key_names,
        value_names=list(value_names),
        keys=key_vecs,
        values=val_vecs,
        token_keys=token_keys,
        token_values=token_values,
        sharpness=math.sqrt(d),
    )
    if rule == BASELINE:
        return run
    _check_beta(beta)
    g = (fade or Fade()).log_gates(rule, d, len(pairs))
    with one_thread():
        _record_steps(run, rule, beta, g)
    return run


def _record_steps(run: BoardRun, rule: str, beta: float, g: np.ndarray | None) -> None:
    """Run core/ops `step` token by token and keep old/decayed/erase/write/new boards."""
    mod = _ops(rule)
    T, d, V = run.T, run.d, run.V
    S = torch.zeros(1, 1, d, V, dtype=torch.float32)  # (B, H, K, V)
    rec = {name: np.zeros((T, d, V), np.float32) for name in ("old", "decayed", "erase", "write", "new")}
    outputs = np.zeros((T, V), np.float32)
    log_gates = np.zeros((T, d), np.float32)
    kwargs: dict = {}
    if rule != "linear":
        kwargs["beta_t"] = torch.full((1, 1), float(beta))  # (B, H)
    if g is not None:
        log_gates[:] = g.reshape(T, -1)  # (T, 1) broadcasts over channels for gated_delta
    for t in range(T):
        k_t = torch.from_numpy(run.token_keys[t]).reshape(1, 1, d)  # (B, H, K)
        v_t = torch.from_numpy(run.token_values[t]).reshape(1, 1, V)  # (B, H, V)
        if g is not None:
            kwargs["g_t"] = torch.as_tensor(g[t]).reshape(1, 1, *g.shape[1:])  # (B, H) or (B, H, K)
        res = mod.step(S, k_t, k_t, v_t, scale=1.0, **kwargs)
        rec["old"][t] = S[0, 0].numpy()
        for part in ("decayed", "erase", "write"):
            rec[part][t] = _part(res.parts, part, S)[0, 0].numpy()
        S = res.state
        rec["new"][t] = S[0, 0].numpy()
        outputs[t] = res.output.reshape(-1).numpy()
    run.old, run.decayed, run.erase, run.write, run.new = (
        rec["old"],
        rec["decayed"],
        rec["erase"],
        rec["write"],
        rec["new"],
    )
    run.outputs = outputs
    run.log_gates = log_gates


def _part(parts: dict, name: str, S_old: torch.Tensor) -> torch.Tensor:
    """A named part of the update; rules without it (linear: no decay, no erase) give the neutral one."""
    if name in parts and parts[name] is not None:
        return parts[name].to(torch.float32)
    return S_old if name == "decayed" else torch.zeros_like(S_old)


# --------------------------------------------------------------------------- streams to write


def distinct_stream(n: int, prefix_key: str = "k", prefix_value: str = "v") -> list[Pair]:
    """n pairs k0→v0 … k(n-1)→v(n-1): every key and every value different."""
    if n < 1:
        raise BoardError(f"write at least one pair (n ≥ 1), got n={n}")
    return [(f"{prefix_key}{i}", f"{prefix_value}{i}") for i in range(n)]


WORD_KEYS = (
    "apple",
    "sky",
    "grass",
    "snow",
    "coal",
    "lemon",
    "plum",
    "sea",
    "rose",
    "cloud",
    "fire",
    "leaf",
    "night",
    "milk",
    "sand",
    "ink",
)
WORD_VALUES = (
    "red",
    "blue",
    "green",
    "white",
    "black",
    "yellow",
    "purple",
    "teal",
    "pink",
    "grey",
    "orange",
    "lime",
    "navy",
    "cream",
    "tan",
    "violet",
)


def word_stream(n: int) -> list[Pair]:
    """n readable pairs (apple→red, sky→blue, …); past 16 they continue as k16→v16 …"""
    if n < 1:
        raise BoardError(f"write at least one pair (n ≥ 1), got n={n}")
    pairs = list(zip(WORD_KEYS, WORD_VALUES, strict=True))[:n]
    return pairs + [(f"k{i}", f"v{i}") for i in range(len(pairs), n)]


def rewrite_stream(n: int, rewritten: str = "apple", new_value: str = "green") -> list[Pair]:
    """The first n word pairs, then `rewritten` written again with a new value."""
    pairs = word_stream(n)
    if rewritten not in {k for k, _ in pairs}:
        raise BoardError(f"key {rewritten!r} is not among the first {n} pairs")
    return pairs + [(rewritten, new_value)]


@dataclass
class TopicSwitch:
    """A stream that changes topic: one fact to keep, then topic A, then topic B.

    The fact's key lives in the first `keep_channels` key channels, both topics in the rest,
    so a per-channel fade (KDA) can keep the fact while it clears topic A.
    """

    pairs: list[Pair]
    groups: dict[str, tuple[int, int]]
    keep_channels: int
    switch: int  # index of the first topic-B token
    fact: list[str]
    topic_a: list[str]
    topic_b: list[str]


FACT = [("name", "Ada")]
TOPIC_A = [
    ("apple", "red"),
    ("lemon", "yellow"),
    ("plum", "purple"),
    ("lime", "green"),
    ("cherry", "crimson"),
    ("orange", "amber"),
]
TOPIC_B = [
    ("Paris", "France"),
    ("Rome", "Italy"),
    ("Oslo", "Norway"),
    ("Lima", "Peru"),
    ("Cairo", "Egypt"),
    ("Tokyo", "Japan"),
]


def topic_switch(d: int = 8, keep_channels: int = 2, n_a: int = 4, n_b: int = 4) -> TopicSwitch:
    """The fact name→Ada, then n_a fruit→colour pairs, then n_b city→country pairs."""
    if d < 2 or not 1 <= keep_channels < d:
        raise BoardError(f"need d ≥ 2 and 1 ≤ keep channels < d (got d={d}, keep={keep_channels})")
    if not (1 <= n_a <= len(TOPIC_A) and 1 <= n_b <= len(TOPIC_B)):
        raise BoardError(f"each topic has 1 to {len(TOPIC_A)} pairs (got {n_a} and {n_b})")
    pairs = FACT + TOPIC_A[:n_a] + TOPIC_B[:n_b]
    groups = {k: ((0, keep_channels) if (k, v) in FACT else (keep_channels, d)) for k, v in pairs}
    return TopicSwitch(
        pairs=pairs,
        groups=groups,
        keep_channels=keep_channels,
        switch=len(FACT) + n_a,
        fact=[k for k, _ in FACT],
        topic_a=[k for k, _ in TOPIC_A[:n_a]],
        topic_b=[k for k, _ in TOPIC_B[:n_b]],
    )


def channel_fill(run: BoardRun) -> np.ndarray:
    """How much each key channel holds after every token: row norms of the board, (T + 1, d)."""
    if run.new is None:
        raise BoardError("softmax attention keeps a cache, not a board")
    boards = np.concatenate([np.zeros((1, run.d, run.V), np.float32), run.new])  # (T + 1, d, V)
    return np.linalg.norm(boards, axis=2)


# --------------------------------------------------------------------------- capacity curves


def recall_curve(
    rule: str,
    d: int,
    ns: Sequence[int],
    seeds: Sequence[int] = (0, 1, 2, 3),
    *,
    keys: str = "random",
    beta: float = 1.0,
    fade: Fade | None = None,
) -> np.ndarray:
    """Mean recall (fraction of keys whose readback is nearest its value) after writing n
    distinct pairs on a d × d board, for each n in `ns`; averaged over `seeds`. Values use
    the named-value code (one-hot for the first d, random unit after).

    The board rules run core/ops `recurrent` with all seeds as one batch.
    """
    KeySpace(d, keys)  # validates d and kind
    if rule not in RULES and rule != BASELINE:
        raise BoardError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)} (or {BASELINE!r})")
    if not seeds:
        raise BoardError("give at least one seed")
    if rule != BASELINE:
        _check_beta(beta)
    fade = fade or Fade()
    out = np.zeros(len(ns), np.float64)
    for i, n in enumerate(ns):
        if n < 1:
            raise BoardError(f"write at least one pair (n ≥ 1), got n={n}")
        names = [f"k{j}" for j in range(n)]
        K = np.stack([KeySpace(d, keys, s).vectors(names) for s in seeds])  # (S, n, d)
        V = np.stack([value_vectors(n, d, s) for s in seeds])  # (S, n, d)
        if rule == BASELINE:
            logits = math.sqrt(d) * K @ K.transpose(0, 2, 1)  # (S, n_query, n_cached)
            w = np.exp(logits - logits.max(-1, keepdims=True))
            readback = (w / w.sum(-1, keepdims=True)) @ V  # (S, n, d)
        else:
            state = _final_state(rule, K, V, beta, fade.log_gates(rule, d, n))  # (S, d, d)
            readback = K @ state  # (S, n, d): row j = Sᵀ k_j
        hits = [nearest(readback[s], V[s]) == np.arange(n) for s in range(len(seeds))]
        out[i] = float(np.mean(hits))
    return out


def _final_state(rule: str, K: np.ndarray, V: np.ndarray, beta: float, g: np.ndarray | None) -> np.ndarray:
    """Board after writing all pairs, via core/ops recurrent: K (B, T, d), V (B, T, V) → (B, d, V)."""
    mod = _ops(rule)
    B, T, d = K.shape
    k = torch.from_numpy(np.ascontiguousarray(K, np.float32)).unsqueeze(2)  # (B, T, 1, d)
    v = torch.from_numpy(np.ascontiguousarray(V, np.float32)).unsqueeze(2)  # (B, T, 1, V)
    kwargs: dict = {"scale": 1.0}
    if rule != "linear":
        kwargs["beta"] = torch.full((B, T, 1), float(beta))  # (B, T, H)
    if g is not None:
        g_t = torch.from_numpy(g).reshape(1, T, 1, *g.shape[1:])  # (1, T, H) or (1, T, H, K)
        kwargs["g"] = g_t.expand(B, *g_t.shape[1:]).contiguous()  # (B, T, H) or (B, T, H, K)
    with one_thread():
        _, S = mod.recurrent(k, k, v, **kwargs)
    return S[:, 0].numpy()  # (B, d, V)


# --------------------------------------------------------------------------- lesson 3: regrouping


@dataclass
class Regrouping:
    """(QKᵀ)V and Q(KᵀV) on the same small matrices, with their multiply-add counts."""

    Q: np.ndarray  # (T, d_k)
    K: np.ndarray  # (T, d_k)
    V: np.ndarray  # (T, d_v)
    scores: np.ndarray  # (T, T) = Q Kᵀ
    left: np.ndarray  # (T, d_v) = (Q Kᵀ) V
    board: np.ndarray  # (d_k, d_v) = Kᵀ V
    right: np.ndarray  # (T, d_v) = Q (Kᵀ V)
    left_ops: int  # multiply-adds for (QKᵀ)V: T·T·d_k + T·T·d_v
    right_ops: int  # multiply-adds for Q(KᵀV): T·d_k·d_v + T·d_k·d_v

    @property
    def max_difference(self) -> float:
        return float(np.abs(self.left - self.right).max())


def regroup(T: int = 4, d_k: int = 3, d_v: int = 3, seed: int = 0) -> Regrouping:
    """Small random Q, K, V (one decimal place, easy to read) multiplied both ways."""
    if min(T, d_k, d_v) < 1:
        raise BoardError("T, d_k and d_v must all be at least 1")
    rng = np.random.default_rng(seed)
    Q, K = (np.round(rng.uniform(-1, 1, (T, d_k)), 1) for _ in range(2))
    V = np.round(rng.uniform(-1, 1, (T, d_v)), 1)
    Q, K, V = Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64)
    scores = Q @ K.T
    board = K.T @ V
    return Regrouping(
        Q=Q,
        K=K,
        V=V,
        scores=scores,
        left=scores @ V,
        board=board,
        right=Q @ board,
        left_ops=T * T * d_k + T * T * d_v,
        right_ops=2 * T * d_k * d_v,
    )


def regroup_ops(T: int, d_k: int, d_v: int) -> tuple[int, int]:
    """Multiply-adds of (QKᵀ)V and of Q(KᵀV) for T tokens."""
    return T * T * (d_k + d_v), 2 * T * d_k * d_v


def memory_bytes(T: int, d_k: int, d_v: int, bytes_per_number: int = BYTES_PER_NUMBER) -> tuple[int, int]:
    """(cache bytes, board bytes) for one head after T tokens: a cache keeps T keys and values,
    the board keeps one d_k×d_v matrix whatever T is."""
    return T * (d_k + d_v) * bytes_per_number, d_k * d_v * bytes_per_number


# --------------------------------------------------------------------------- lesson 6: chunks


def waits_in_line(T: int, chunk_size: int) -> tuple[int, int]:
    """Sequential hand-overs of the board: step by step (T) vs chunked (⌈T/C⌉)."""
    if T < 1 or chunk_size < 1:
        raise BoardError("T and the chunk size must be at least 1")
    return T, math.ceil(T / chunk_size)


def random_inputs(
    rule: str, T: int, d: int, *, B: int = 1, H: int = 2, seed: int = 0, dtype: torch.dtype = torch.float32
) -> dict[str, torch.Tensor]:
    """Random q, k (L2-normalised), v, β and gates in the ops shapes, for checks and timing."""
    if rule not in RULES:
        raise BoardError(f"unknown rule {rule!r}; choose one of {', '.join(RULES)}")
    gen = torch.Generator().manual_seed(seed)
    q = torch.nn.functional.normalize(
        torch.randn(B, T, H, d, generator=gen, dtype=dtype), dim=-1
    )  # (B, T, H, K)
    k = torch.nn.functional.normalize(
        torch.randn(B, T, H, d, generator=gen, dtype=dtype), dim=-1
    )  # (B, T, H, K)
    v = torch.randn(B, T, H, d, generator=gen, dtype=dtype)  # (B, T, H, V)
    inputs = {"q": q, "k": k, "v": v}
    if rule != "linear":
        inputs["beta"] = torch.rand(B, T, H, generator=gen, dtype=dtype)  # (B, T, H)
    if rule == "gated_delta":
        inputs["g"] = torch.log(0.9 + 0.1 * torch.rand(B, T, H, generator=gen, dtype=dtype))  # (B, T, H)
    if rule == "kda":
        inputs["g"] = torch.log(
            0.8 + 0.2 * torch.rand(B, T, H, d, generator=gen, dtype=dtype)
        )  # (B, T, H, K)
    return inputs


@dataclass
class ChunkCheck:
    rule: str
    T: int
    d: int
    chunk_size: int
    dtype: str
    max_output_difference: float
    max_state_difference: float


def chunk_check(
    rule: str, T: int, d: int, chunk_size: int, *, dtype: torch.dtype = torch.float32, seed: int = 0
) -> ChunkCheck:
    """Run the chunked and the step-by-step forms of `rule` on the same inputs; compare."""
    mod = _ops(rule)
    if T < 1 or d < 1 or chunk_size < 1:
        raise BoardError("T, d and the chunk size must be at least 1")
    x = random_inputs(rule, T, d, seed=seed, dtype=dtype)
    q, k, v = x.pop("q"), x.pop("k"), x.pop("v")
    with one_thread():
        o_rec, s_rec = mod.recurrent(q, k, v, **x)
        o_chk, s_chk = mod.chunk(q, k, v, chunk_size=chunk_size, **x)
    return ChunkCheck(
        rule,
        T,
        d,
        chunk_size,
        str(dtype).replace("torch.", ""),
        float((o_rec - o_chk).abs().max()),
        float((s_rec - s_chk).abs().max()),
    )


@dataclass
class Timing:
    label: str  # "step by step" or "C = 16"
    chunk_size: int | None  # None for the step-by-step recurrence
    ms: float  # median wall time of one forward pass
    hand_overs: int  # sequential board hand-overs


def time_forms(
    rule: str, T: int, d: int, chunk_sizes: Sequence[int], *, repeats: int = 3, seed: int = 0
) -> Iterator[Timing]:
    """Time the step-by-step recurrence and the chunked form for each chunk size on this machine,
    on one CPU thread (see `one_thread`).

    A generator, so a page can move a progress bar between measurements. Each form runs
    once untimed (warm-up), then `repeats` times; the median is reported.
    """
    mod = _ops(rule)
    x = random_inputs(rule, T, d, seed=seed)
    q, k, v = x.pop("q"), x.pop("k"), x.pop("v")
    forms = [("step by step", None)] + [(f"C = {c}", int(c)) for c in chunk_sizes]
    with torch.inference_mode(), one_thread():
        for label, c in forms:

            def run(c=c):
                if c is None:
                    return mod.recurrent(q, k, v, **x)
                return mod.chunk(q, k, v, chunk_size=c, **x)

            run()
            times = []
            for _ in range(max(1, repeats)):
                start = time.perf_counter()
                run()
                times.append((time.perf_counter() - start) * 1e3)
            yield Timing(label, c, float(np.median(times)), T if c is None else math.ceil(T / c))
