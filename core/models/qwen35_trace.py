"""What the A real hybrid lesson shows of a released Qwen3.5, computed from the model's own traces.

The model (core/models/qwen35.py) reads the reader's text one token at a time through
`Qwen35.step`, then writes a few tokens of its own; each step's Trace carries, per Gated DeltaNet
layer, the board (heads × K × V) and that token's fade α and write strength β per head, and per
attention layer the cached keys and values. `run_hybrid` keeps what the page draws: the boards of
one chosen layer, α and β of every board layer and head, one attention layer's cached keys, and
the bytes the live tensors hold after each token. The bytes of a full-attention model of the same
width come from the live cache too: every layer would hold what each attention layer holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from core.i18n import _, ngettext

BOARD, ATTENTION = "linear_attention", "full_attention"  # Qwen3.5's `layer_types` values


@dataclass(frozen=True)
class LayerMap:
    """The released layer map, read from the config: which layers hold a board, which a cache."""

    kinds: tuple[str, ...]

    @property
    def boards(self) -> list[int]:
        return [i for i, k in enumerate(self.kinds) if k == BOARD]

    @property
    def caches(self) -> list[int]:
        return [i for i, k in enumerate(self.kinds) if k == ATTENTION]

    @property
    def interval(self) -> int | None:
        """Every how many layers one is attention, when the map repeats evenly (Qwen3.5: 4)."""
        caches = self.caches
        if not caches:
            return None
        every = caches[0] + 1
        ok = all(k == (ATTENTION if (i + 1) % every == 0 else BOARD) for i, k in enumerate(self.kinds))
        return every if ok else None


@dataclass
class HybridRun:
    """A released hybrid's run over a text, token by token (T tokens fed, prompt then its own)."""

    tokens_in: list[int]  # (T,) the tokens fed, the prompt first
    tokens_out: list[int]  # (T,) the model's likeliest next token after each
    prompt_length: int
    layer_map: LayerMap
    board_layer: int  # the layer (0-based) whose boards are kept
    boards: np.ndarray  # (T, Hv, K, V) that layer's board after each token, fp32
    alpha: np.ndarray  # (T, board layers, Hv) fade per head per token: the board is multiplied by α
    beta: np.ndarray  # (T, board layers, Hv) write strength per head per token, 0 … 1
    cache_layer: int  # the attention layer (0-based) whose cached keys are kept
    cache_keys: np.ndarray  # (T, Dh) its cached keys of KV head 0 after the last token, row t = token t
    cache_rows: np.ndarray  # (T,) rows in each attention layer's cache after each token
    state_bytes: np.ndarray  # (T,) bytes of every board layer's live state (board + conv window)
    board_bytes: int  # one board layer's boards (heads × K × V), from the live tensor
    window_bytes: int  # one board layer's convolution window (channels × (kernel − 1)), from the live tensor
    cache_bytes: np.ndarray  # (T,) bytes of every attention layer's live K and V cache
    wall_ms: np.ndarray  # (T,) measured time of each step

    @property
    def steps(self) -> int:
        return len(self.tokens_in)

    def board_position(self, layer: int) -> int:
        """Where a board layer sits in `alpha` / `beta` (their second axis lists board layers only)."""
        return self.layer_map.boards.index(layer)

    def full_attention_bytes(self) -> np.ndarray:
        """(T,) the cache a model of the same width with attention in every layer would hold: each
        attention layer's live cache, once per layer."""
        n_attention = len(self.layer_map.caches)
        if n_attention == 0:
            return np.zeros_like(self.cache_bytes)
        return self.cache_bytes // n_attention * len(self.layer_map.kinds)

    def board_range(self) -> float:
        """The largest |entry| of the kept boards over the whole run: one fixed colour scale."""
        return float(np.abs(self.boards).max()) or 1.0


def run_hybrid(
    model,
    prompt: list[int],
    new_tokens: int,
    board_layer: int | None = None,
    report: Callable[[int, int], None] | None = None,
) -> HybridRun:
    """Feed `prompt` token by token through `model.step` (a Qwen35), then `new_tokens` greedy tokens
    of its own; `report(done, total)` after each step (the page's progress bar). Keeps the boards of
    `board_layer` (default: the first board layer) and the keys of the first attention layer."""
    if not prompt:
        raise ValueError("prompt must hold at least one token")
    layer_map = LayerMap(tuple(model.kinds))
    board_layer = layer_map.boards[0] if board_layer is None else board_layer
    if board_layer not in layer_map.boards:
        raise ValueError(f"layer {board_layer} holds no board")
    cache_layer = layer_map.caches[0] if layer_map.caches else -1
    cache = model.new_cache()
    total = len(prompt) + new_tokens
    fed, traces = list(prompt), []
    for t in range(total):
        traces.append(model.step(fed[t], cache))
        if t + 1 >= len(fed):
            fed.append(traces[-1].token)
        if report is not None:
            report(t + 1, total)
    fed = fed[:total]
    memory = cache.memory[board_layer]
    per_board = [[tr.layers[i] for i in layer_map.boards] for tr in traces]
    last = traces[-1].layers[cache_layer] if cache_layer >= 0 else None
    return HybridRun(
        tokens_in=fed,
        tokens_out=[tr.token for tr in traces],
        prompt_length=len(prompt),
        layer_map=layer_map,
        board_layer=board_layer,
        boards=np.stack([tr.layers[board_layer].state for tr in traces]),  # (T, Hv, K, V)
        alpha=np.array([[lt.parts["alpha"] for lt in row] for row in per_board], dtype=np.float32),
        beta=np.array([[lt.parts["beta"] for lt in row] for row in per_board], dtype=np.float32),
        cache_layer=cache_layer,
        cache_keys=last.keys[0].copy() if last is not None else np.zeros((total, 0), np.float32),  # (T, Dh)
        cache_rows=np.array(
            [tr.layers[cache_layer].keys.shape[1] if cache_layer >= 0 else 0 for tr in traces], dtype=np.int64
        ),
        state_bytes=np.array([tr.state_bytes for tr in traces], dtype=np.int64),
        board_bytes=memory.board[0].numel() * memory.board.element_size(),
        window_bytes=memory.conv_window[0].numel() * memory.conv_window.element_size(),
        cache_bytes=np.array([tr.cache_bytes for tr in traces], dtype=np.int64),
        wall_ms=np.array([tr.wall_ms for tr in traces], dtype=np.float64),
    )


@dataclass(frozen=True)
class MemoryAt:
    """The bytes held after token t (1-based), from the live tensors."""

    boards: int  # every board layer's state: the same after any token
    cache: int  # every attention layer's K and V rows: grows per token
    full_attention: int  # a model of the same width with attention in every layer
    growth: int | None  # cache bytes this token added (None at the first token)


def memory_at(run: HybridRun, t: int) -> MemoryAt:
    i = min(max(t, 1), run.steps) - 1
    growth = int(run.cache_bytes[i] - run.cache_bytes[i - 1]) if i > 0 else None
    return MemoryAt(
        int(run.state_bytes[i]), int(run.cache_bytes[i]), int(run.full_attention_bytes()[i]), growth
    )


@dataclass(frozen=True)
class Extreme:
    """The most extreme α or β of one layer up to a token: which head, at which token, how much."""

    head: int  # 0-based
    token: int  # 0-based position in the run
    value: float

    @property
    def alpha_text(self) -> str:
        """The value as a fade is read: enough digits that 0.9996 is not shown as 1."""
        return alpha_text(self.value)


def hardest_fade(run: HybridRun, layer: int, upto: int) -> Extreme:
    """The smallest α (the strongest forgetting) of a board layer over its heads and tokens 1…upto."""
    a = run.alpha[: max(1, upto), run.board_position(layer)]  # (t, Hv)
    token, head = np.unravel_index(int(np.argmin(a)), a.shape)
    return Extreme(int(head), int(token), float(a[token, head]))


def hardest_write(run: HybridRun, layer: int, upto: int) -> Extreme:
    """The largest β (the strongest write) of a board layer over its heads and tokens 1…upto."""
    b = run.beta[: max(1, upto), run.board_position(layer)]  # (t, Hv)
    token, head = np.unravel_index(int(np.argmax(b)), b.shape)
    return Extreme(int(head), int(token), float(b[token, head]))


@dataclass(frozen=True)
class HeadFade:
    """One board head's mean fade over a stretch of text against its mean fade before it."""

    layer: int  # 0-based model layer
    head: int  # 0-based
    before: float  # mean α over the tokens before the stretch
    during: float  # mean α over the stretch

    @property
    def drop(self) -> float:
        return self.before - self.during


def fades_at(run: HybridRun, start: int, stop: int) -> list[HeadFade]:
    """Every board head's mean α over tokens start…stop−1 (0-based) against tokens 0…start−1, the heads
    that fade harder there (a smaller α) first, the largest drop first."""
    if not 0 < start < stop <= run.steps:
        raise ValueError(f"the stretch {start}…{stop} must follow at least one token and lie in the run")
    before = run.alpha[:start].mean(axis=0)  # (board layers, Hv)
    during = run.alpha[start:stop].mean(axis=0)
    heads = [
        HeadFade(layer, h, float(before[j, h]), float(during[j, h]))
        for j, layer in enumerate(run.layer_map.boards)
        for h in range(run.alpha.shape[2])
    ]
    return sorted(heads, key=lambda f: -f.drop)


def hardest_tokens(run: HybridRun, n: int = 3) -> list[int]:
    """The n run positions (0-based) where some board head fades hardest (the smallest α over every
    board layer and head at that token), the hardest first."""
    lowest = run.alpha.reshape(run.steps, -1).min(axis=1)  # (T,)
    return [int(t) for t in np.argsort(lowest, kind="stable")[:n]]


def marker_span(tokenizer, text: str, marker: str, run: HybridRun) -> tuple[int, int] | None:
    """The 0-based run positions [start, stop) of `marker` (with the space before it) in the run's prompt,
    when the prompt is exactly `text` and the marker lies in what was read; else None."""
    start = marker_token(tokenizer, text, marker, run)
    if start is None:
        return None
    stop = len(tokenizer.encode(text[: text.index(marker) + len(marker)]))
    return (start, stop) if stop <= run.prompt_length else None


def crossover_tokens(run: HybridRun) -> float | None:
    """After how many tokens the attention caches hold as many bytes as the boards (None: no cache).
    The caches grow by the same bytes every token, so it is the boards' bytes ÷ that growth."""
    per_token = run.cache_bytes[-1] / run.steps
    return float(run.state_bytes[-1] / per_token) if per_token else None


def cache_range(run: HybridRun) -> float:
    """The largest |entry| of the kept cached keys: one fixed colour scale for the cache picture."""
    return float(np.abs(run.cache_keys).max()) if run.cache_keys.size else 1.0


def alpha_text(alpha: float) -> str:
    """A fade as a reader reads it: 0.62, 0.0035, 0.9996 (never rounded up to 1)."""
    if alpha >= 0.99:
        return f"{np.floor(alpha * 1e4) / 1e4:.4f}"
    return f"{alpha:.2g}" if alpha < 0.1 else f"{alpha:.2f}"


def share_text(share: float) -> str:
    """A share kept, as a percentage that never reads 0 % or 100 % when it is neither."""
    if share >= 0.99 and share < 1.0:
        return f"{np.floor(share * 1e4) / 100:.2f}%"
    if 0.0 < share < 0.01:
        return _("under 1%")
    return f"{share:.0%}"


def mean_alpha(run: HybridRun, layer: int, token: int | None = None) -> float:
    """The fade of a board layer averaged over its heads: at one token (0-based), or over the run."""
    a = run.alpha[:, run.board_position(layer)]  # (T, Hv)
    return float(a.mean() if token is None else a[token].mean())


def marker_token(tokenizer, text: str, marker: str, run: HybridRun) -> int | None:
    """The 0-based run position of the token that starts `marker` in `text`, when the run's prompt is
    exactly that text (the page's default) and the marker falls inside it; else None."""
    if marker not in text or list(run.tokens_in[: run.prompt_length]) != list(tokenizer.encode(text)):
        return None
    before = len(tokenizer.encode(text[: text.index(marker)].rstrip()))
    return before if before < run.prompt_length else None


def half_life_text(alpha: float) -> str:
    """How long a fade of α per token takes to halve what a head held, in words."""
    n = half_life_tokens(alpha)
    if n == float("inf"):
        return _("no number of tokens (α = 1 keeps everything)")
    if n < 1:
        return _("less than one token")
    return ngettext("about {n} token", "about {n} tokens", round(n)).format(n=f"{n:,.0f}")


def half_life_tokens(alpha: float) -> float:
    """After how many tokens a fade of α per token leaves half of what was written (inf for α ≥ 1)."""
    if alpha >= 1.0:
        return float("inf")
    if alpha <= 0.0:
        return 0.0
    return float(np.log(0.5) / np.log(alpha))
