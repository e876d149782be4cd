"""The bytes one decode step really moves, and a tracer that checks the count against torch itself.

A batch-1 decode step is bound by memory traffic (docs/sources.md §7.1), so the
roofline is only as honest as its byte count. `Traffic` is the count a model gives for one
step — weights read, cache read and written, state read and written, and the scratch copies
plain PyTorch makes that a fused engine would not (the MoE's gathered experts, the spilled
cache's staging copy and its score vector). `trace_persistent_bytes` runs a step under a
`TorchDispatchMode` and adds up, op by op, the bytes read from and written to the model's
long-lived tensors (weights, cache, state): the test holds the two equal, so a change to a
model that moves more bytes cannot silently leave the roofline behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten


@dataclass(frozen=True)
class Traffic:
    """Bytes one decode step moves, by kind. `persistent` is what lives between steps."""

    weights: int = 0  # every weight read (one embedding row, the awake experts, …)
    cache_read: int = 0  # KV rows read by attention (resident and streamed)
    cache_write: int = 0  # the new row written into the cache (and its host copy)
    state: int = 0  # fixed-state reads + writes
    scratch: int = 0  # temporary copies a fused kernel would avoid (gathers, staging, scores)
    host_link: int = 0  # of the above, bytes that cross the host link (PCIe) this step
    cpu_side: int = 0  # of the above, bytes the CPU moves in host RAM (layers computed on the host)

    @property
    def persistent(self) -> int:
        """Bytes read from or written to the long-lived tensors (what the tracer sees)."""
        return self.weights + self.cache_read + self.cache_write + self.state

    @property
    def total(self) -> int:
        """Everything the step moves through memory (the roofline's bytes per token)."""
        return self.persistent + self.scratch

    def __add__(self, other: Traffic) -> Traffic:
        return Traffic(**{k: v + getattr(other, k) for k, v in asdict(self).items()})

    def to_dict(self) -> dict[str, int]:
        return asdict(self) | {"persistent": self.persistent, "total": self.total}


# Ops that read only the rows they return from their first argument (a table lookup).
_GATHERS = {"index_select", "embedding", "gather", "index"}


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


class _PersistentTraffic(TorchDispatchMode):
    """Counts bytes read from / written to tensors whose storage is one of the watched ones."""

    def __init__(self, watched: Iterable[torch.Tensor]) -> None:
        super().__init__()
        self.storages = {t.untyped_storage().data_ptr() for t in watched if t.numel()}
        self.read = 0
        self.written = 0
        self.ops: list[str] = []

    def _watched(self, x: object) -> bool:
        return (
            isinstance(x, torch.Tensor) and x.numel() > 0 and x.untyped_storage().data_ptr() in self.storages
        )

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001 — torch's protocol
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if func.is_view or func._schema.name in ("aten::detach", "aten::alias"):
            return out  # a view moves no bytes
        name = func._schema.name.removeprefix("aten::")
        mutated = [
            i
            for i, a in enumerate(func._schema.arguments)
            if a.alias_info is not None and a.alias_info.is_write
        ]
        flat_args = list(args)
        before = self.read + self.written
        for i, arg in enumerate(flat_args):
            tensors = [t for t in tree_flatten(arg)[0] if self._watched(t)]
            for t in tensors:
                if i in mutated:
                    self.written += _nbytes(t)
                    if name != "copy_":  # in-place arithmetic reads what it overwrites
                        self.read += _nbytes(t)
                elif name in _GATHERS and i == 0:
                    self.read += sum(_nbytes(o) for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor))
                elif name == "_grouped_mm" and i == 1:
                    self.read += _grouped_weight_bytes(t, args, kwargs)
                else:
                    self.read += _nbytes(t)
        for key, value in kwargs.items():
            if key != "out":
                self.read += sum(_nbytes(t) for t in tree_flatten(value)[0] if self._watched(t))
        if self.read + self.written != before:
            self.ops.append(name)
        return out


def _grouped_weight_bytes(weights: torch.Tensor, args: tuple, kwargs: dict) -> int:
    """What a grouped GEMM reads of its (G, K, N) weights: the groups that have rows (offs[g] is
    where group g's rows end), not the experts nobody chose."""
    offs = kwargs.get("offs", args[2] if len(args) > 2 else None)
    if offs is None:
        return _nbytes(weights)
    rows = torch.diff(offs.to(torch.int64), prepend=offs.new_zeros(1, dtype=torch.int64))  # (G,)
    return int((rows > 0).sum()) * _nbytes(weights[0])


def trace_persistent_bytes(
    step: Callable[[], object], watched: Iterable[torch.Tensor]
) -> tuple[int, list[str]]:
    """Run `step()` and return (bytes it read from + wrote to the watched tensors, the ops that did)."""
    mode = _PersistentTraffic(list(watched))
    with mode:
        step()
    return mode.read + mode.written, mode.ops
