"""The one protocol every live model answers (docs/architecture.md, "Model protocol").

The tiny GPT-2 (`core.models.gpt2.GPT2`), mini-K3 (`core.models.mini_k3.MiniK3`) and the
recall models (`core.recall.models.RecallModel`) all offer the same calls, so a page,
a recipe, a benchmark or a test never needs to know which one it holds:

    model = Cls.load(path)             # a saved checkpoint, in eval mode; `model.meta` = what was saved beside it
    model.save(path, meta={...})       # config + weights + metadata in one file
    model.num_params()                 # parameters stored (a tied matrix counted once)
    model.cache_bytes_per_token()      # bytes the growing memory (KV / latent cache) adds per token read
    model.state_bytes()                # bytes of fixed-size memory (boards, convolution windows)
    model.memory_bytes(tokens)         # both together after reading `tokens` tokens
    cache = model.new_cache()          # empty decoding memory for one sequence
    trace = model.step(token, cache)   # feed one token → a core.trace.Trace (greedy next token)

`step` updates `cache` in place; feeding a text token by token gives the same logits as one
full forward pass over it (tests/core/models/test_protocol.py checks this for all three).
Memory bytes always come from the model, never from a page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import torch

from core.trace import Trace


@runtime_checkable
class LiveModel(Protocol):
    """What every live model answers; see the module docstring for the meaning of each call."""

    meta: dict

    @classmethod
    def load(cls, path: Path | str = ...) -> LiveModel: ...

    def save(self, path: Path | str, meta: dict | None = None) -> None: ...

    def num_params(self) -> int: ...

    def cache_bytes_per_token(self) -> int: ...

    def state_bytes(self) -> int: ...

    def memory_bytes(self, tokens: int) -> int: ...

    def new_cache(self) -> Any: ...

    def step(self, token: int, cache: Any) -> Trace: ...


class ModelBase:
    """Shared parts of the protocol for nn.Module models: parameter count and total memory."""

    meta: dict = {}

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())  # parameters() yields a tied matrix once

    def memory_bytes(self, tokens: int) -> int:
        """Bytes held after reading `tokens` tokens: the fixed state plus the cache rows."""
        return self.state_bytes() + tokens * self.cache_bytes_per_token()

    def element_bytes(self) -> int:
        """Bytes per number of the weights (and so of the caches and boards they produce)."""
        return next(self.parameters()).element_size()


def greedy_run(model: Any, prompt: list[int], new_tokens: int, keep_parts: bool, unit: str) -> list[Trace]:
    """Step `model` (its `step(token, cache, keep_parts)`) through `prompt`, then feed its greedy guess back
    `new_tokens` times, on one fresh cache; one Trace per `unit` (token, byte) fed; an empty prompt: ValueError."""
    if not prompt:
        raise ValueError(f"prompt must hold at least one {unit}")
    cache = model.new_cache()
    traces = [model.step(t, cache, keep_parts) for t in prompt]
    for _ in range(new_tokens):
        traces.append(model.step(traces[-1].token, cache, keep_parts))
    return traces


class CheckpointMismatch(ValueError):
    """A checkpoint whose tensors do not fit the model built from its config; the message is one line."""


def load_weights(model: torch.nn.Module, state_dict: dict, path: Path | str, rebuild: str) -> None:
    """Load `state_dict` into `model` with `strict=True`, after checking it ourselves so that a
    missing, unexpected or wrongly shaped tensor is one clear line (CheckpointMismatch) rather than
    torch's many-line RuntimeError — a checkpoint that fits only in part is never half-loaded."""
    expected = model.state_dict()
    missing = [name for name in expected if name not in state_dict]
    extra = [name for name in state_dict if name not in expected]
    wrong = [
        name
        for name, tensor in expected.items()
        if name in state_dict and tuple(state_dict[name].shape) != tuple(tensor.shape)
    ]
    problems = []
    if missing:
        problems.append(f"{len(missing)} missing (e.g. {missing[0]})")
    if extra:
        problems.append(f"{len(extra)} unexpected (e.g. {extra[0]})")
    if wrong:
        name = wrong[0]
        problems.append(
            f"{len(wrong)} of the wrong shape (e.g. {name}: {tuple(state_dict[name].shape)} in the file, "
            f"{tuple(expected[name].shape)} in the model)"
        )
    if problems:
        where = "/".join(Path(path).parts[-2:])  # the asset's folder and name, never a server path
        raise CheckpointMismatch(
            f"{where} does not fit this model: tensors {'; '.join(problems)}; rebuild it with `{rebuild}`"
        )
    model.load_state_dict(state_dict, strict=True)


def read_checkpoint(path: Path | str, rebuild: str) -> dict:
    """The saved dict of a checkpoint; a missing file names the command that rebuilds it."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{path} is missing; rebuild it with `{rebuild}`")
    return torch.load(path, map_location="cpu", weights_only=True)


def write_checkpoint(path: Path | str, blob: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(blob, path)
