"""Generating text with a GPT-2: sampling, one reader's session, whole runs for the pages to step through.

The model is the shipped tiny byte GPT-2 or a released GPT-2 loaded into the same module
(core/models/hf_gpt2.py); nothing here depends on which, except the vocabulary size.
`Session` is one reader's generation (text so far, cache, sampler state); `run_generation`
precomputes a whole run for the pages to step through; `top_next` the likeliest next tokens of a
step (softmax of its logits). The model itself (and its one-token `step`) lives in
core/models/gpt2.py; what its KV cache holds and saves, checked on runs, in core/models/gpt2_cache.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
import torch
import torch.nn.functional as F

from core.models.gpt2 import GPT2, KVCache, gpt2_trace
from core.threads import threads as torch_threads
from core.trace import Trace


@dataclass
class Sampling:
    """temperature 0 → greedy (always the likeliest token); top_k None → the whole vocabulary."""

    temperature: float = 0.0
    top_k: int | None = None
    seed: int = 0


def choose_token(logits: torch.Tensor, sampling: Sampling, generator: torch.Generator) -> int:
    """Pick the next token from logits (V,)."""
    if sampling.temperature <= 0:
        return int(torch.argmax(logits))
    scaled = logits / sampling.temperature
    if sampling.top_k is not None and sampling.top_k < scaled.numel():
        kth = torch.topk(scaled, sampling.top_k).values[-1]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    probs = F.softmax(scaled, dim=-1)
    return int(torch.multinomial(probs, 1, generator=generator))


@dataclass
class Session:
    """One reader's generation: the text so far, the cache (if used) and the sampler's state.

    Weights are shared (read only); everything that changes lives here.
    """

    model: GPT2
    sampling: Sampling = field(default_factory=Sampling)
    tokens: list[int] = field(default_factory=list)
    use_cache: bool = True
    cache: KVCache | None = None
    fed: int = 0  # tokens already run through the model into the cache

    def start(self, prompt_ids: list[int], use_cache: bool = True) -> Session:
        if not prompt_ids:
            raise ValueError("the prompt needs at least one token (see core.tokenizer.prepare_prompt)")
        if len(prompt_ids) > self.model.config.block_size:
            raise ValueError("prompt longer than the context window; cut it with prepare_prompt")
        self.tokens = [int(t) for t in prompt_ids]
        self.use_cache = use_cache
        self.cache = self.model.new_cache() if use_cache else None
        self.fed = 0
        self._generator = torch.Generator().manual_seed(self.sampling.seed)
        return self

    @property
    def done(self) -> bool:
        """True once the text fills the context window: the model cannot read one more token."""
        return len(self.tokens) > self.model.config.block_size

    @torch.no_grad()
    def step(self, record_cache: bool = True, timing_repeats: int = 1) -> Trace:
        """Run the model once, append the chosen byte, and report what it cost.

        Without a cache the whole text goes in; with one, only the bytes not yet cached
        (the whole prompt on the first step, then one byte).
        `record_cache=False` leaves the (H, T, Dh) key/value copies out of the trace.
        `timing_repeats` > 1 runs the same forward pass again (the cache rewinds and
        rewrites the same rows) and reports the fastest run as wall_ms — the usual guard
        against another program stealing the CPU mid-measurement. Outputs are unchanged.
        """
        if self.done:
            raise RuntimeError(f"the context window of {self.model.config.block_size} positions is full")
        if self.use_cache:
            new = torch.tensor([self.tokens[self.fed :]])  # (1, T_new)
        else:
            new = torch.tensor([self.tokens])  # (1, T) — the whole text, every time
        forward_ms = float("inf")
        for _ in range(max(1, timing_repeats)):
            if self.cache is not None:
                self.cache.length = self.fed  # rewind: a repeat rewrites the same rows
            started = time.perf_counter()
            logits, weights = self.model.forward_with_attention(new, self.cache, last_only=True)
            forward_ms = min(forward_ms, (time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        last_logits = logits[0, -1]  # (V,)
        token = choose_token(last_logits, self.sampling, self._generator)
        wall_ms = forward_ms + (time.perf_counter() - started) * 1000
        computed = new.size(1)
        self.fed = len(self.tokens)
        position = len(self.tokens) - 1
        self.tokens.append(token)
        return gpt2_trace(
            self.model, self.cache, token, position, last_logits, weights, computed, wall_ms, record_cache
        )


def max_new_tokens(prompt_length: int, block_size: int) -> int:
    """How many bytes fit before the window is full (the last step reads block_size bytes)."""
    return max(0, block_size - prompt_length + 1)


@torch.no_grad()
def generate(
    model: GPT2, prompt_ids: list[int], n: int, use_cache: bool = True, sampling: Sampling | None = None
) -> list[int]:
    """Generate up to n new bytes; stops early when the context window is full."""
    session = Session(model, sampling or Sampling()).start(prompt_ids, use_cache)
    out = []
    while len(out) < n and not session.done:
        out.append(session.step(record_cache=False).token)
    return out


@dataclass
class GenerationRun:
    """A whole generation, precomputed once, for pages to step through."""

    prompt_ids: list[int]
    traces: list[Trace]  # one per new token; keys/values only in the last trace (rows never change)
    use_cache: bool
    stopped_at_window: bool  # True when generation ended because the window was full
    top: list[list[tuple[int, float]]] = field(default_factory=list)  # per step: top_next(logits)

    @property
    def new_ids(self) -> list[int]:
        return [t.token for t in self.traces]

    def without_logits(self) -> GenerationRun:
        """The same run with each trace's logits dropped (empty arrays) — for a large vocabulary,
        where 50,257 scores per step would dominate what a page keeps. Call after comparing."""
        empty = np.zeros(0, dtype=np.float32)
        traces = [replace(t, logits=empty) for t in self.traces]
        return replace(self, traces=traces)


def top_next(logits: np.ndarray, k: int = 5) -> list[tuple[int, float]]:
    """The k likeliest next tokens with their probabilities (softmax of the raw logits, likeliest first)."""
    x = np.asarray(logits, dtype=np.float64)
    probs = np.exp(x - x.max())
    probs /= probs.sum()
    order = np.argsort(-probs, kind="stable")[:k]
    return [(int(i), float(probs[i])) for i in order]


@torch.no_grad()
def run_generation(
    model: GPT2,
    prompt_ids: list[int],
    n: int,
    use_cache: bool = True,
    sampling: Sampling | None = None,
    threads: int | None = 1,
    timing_repeats: int = 1,
) -> GenerationRun:
    """Generate up to n bytes, keeping every step's trace.

    Cached keys/values are kept only in the final trace: a row, once written, never
    changes, so the cache after step t is the final cache's first rows.
    `threads`: torch CPU threads while generating (restored afterwards). A model this
    small runs fastest on one thread, and on a busy machine extra threads mostly wait
    on each other, which turns the measured ms/token into noise. None leaves it alone, and
    so does a count already in force — the app's case, which sets one thread once at
    start-up and must not change the process-wide count per request (`core/threads.py`).
    `timing_repeats`: see `Session.step` (fastest of k runs per step; same outputs).
    """
    session = Session(model, sampling or Sampling()).start(prompt_ids, use_cache)
    traces: list[Trace] = []
    with torch_threads(threads):
        while len(traces) < n and not session.done:
            traces.append(session.step(record_cache=False, timing_repeats=timing_repeats))
    if use_cache and traces:
        for i, layer in enumerate(traces[-1].layers):
            layer.keys, layer.values = session.cache.layer_arrays(i)
    top = [top_next(t.logits) for t in traces]
    return GenerationRun(list(prompt_ids), traces, use_cache, stopped_at_window=len(traces) < n, top=top)














