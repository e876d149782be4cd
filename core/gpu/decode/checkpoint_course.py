"""GPT-2, Qwen3 (dense) and Qwen3.5 (hybrid) folders in the course's own modules, for the checkpoint benchmark.

The protocol is core.gpu.decode.checkpoint_decoders.Decoder's (the one core.gpu.timing.decode_timer.time_decode and
core.gpu.timing.graphs.time_graphed drive). Both keep every tensor a step touches at a fixed address —
the KV rows in `StaticKV` buffers allocated for the depth's room (core/models/static_kv.py), the
Qwen3.5 boards and convolution windows overwritten in place (core/models/qwen35_static.py) — so on
CUDA the benchmark captures each repetition's steps as one CUDA graph (`graphable`), as it does the
synthetic models; on a CPU they run eagerly. No transformers code runs in either.

Going back to a depth (`pos = d`, before every repetition) rewinds the KV rows — the next steps
overwrite the rows past d — but not a board, which cannot be unwound: it keeps the tokens it read.
A step reads and writes the same bytes either way, which is all the timing measures.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import torch

from core.i18n import N_
from core.models import hf_causal

QWEN3, QWEN35 = ("qwen3",), ("qwen3_5", "qwen3_5_text")  # model_type values these decoders read
FAMILIES = QWEN3 + QWEN35


class _CourseDecoder:
    """What both share: weights on the device, a static cache per `allocate`, position bookkeeping."""

    graphable = True  # every step's tensors stay put: core.gpu.timing.graphs may capture it on CUDA
    cache_kind = ""
    loader = ""

    def __init__(self, model: torch.nn.Module, device: torch.device) -> None:
        self.device = torch.device(device)
        self.model = model.to(self.device).eval()
        self.vocab = int(model.config.vocab_size)
        self.cache = None

    def parameters(self) -> list[torch.Tensor]:
        return list(self.model.parameters())  # a tied head is the embedding's tensor: counted once

    def _new_cache(self, room: int):
        raise NotImplementedError

    def _run(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (1, T) after the cached positions → logits (1, T, V)."""
        raise NotImplementedError

    def allocate(self, room: int) -> None:
        """Fresh buffers for `room` positions (the old ones freed first)."""
        self.cache = None
        self.cache = self._new_cache(room)

    def _forward(self, ids: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return self._run(ids)[0, -1]  # (V,)

    def fill(self, depth: int, seed: int = 0) -> None:
        """Untimed prefill of `depth` random tokens, in chunks (the same tokens as every decoder's)."""
        hf_causal.random_prefill(self._forward, self.vocab, depth, self.device, seed)

    def step(self, token: torch.Tensor) -> torch.Tensor:
        """One token (a 1-element tensor on the device) → its logits (V,)."""
        return self._forward(token.view(1, 1))

    @property
    def pos(self) -> int:
        return 0 if self.cache is None else self._length()

    @pos.setter
    def pos(self, depth: int) -> None:
        if depth > self.pos:
            raise ValueError(f"cannot move forward to {depth}: the cache holds {self.pos} positions")
        self._rewind(depth)

    def _length(self) -> int:
        return self.cache.position

    def _rewind(self, depth: int) -> None:
        self.cache.position = depth  # the rows past it are overwritten by the next steps

    def cache_tensors(self) -> list[torch.Tensor]:
        """The KV buffers, each (B, Hkv, room, Dh): what grows with depth."""
        return [] if self.cache is None else self.cache.kv_tensors()

    def state_tensors(self) -> list[torch.Tensor]:
        """What stays the same size at every depth (boards, convolution windows); none in a dense model."""
        return []

    def release(self) -> None:
        self.cache = None


class GPT2Decoder(_CourseDecoder):
    """A GPT-2 folder in the course's module, stepped over its `KVCache` (core/models/gpt2.py):
    buffers for the whole window, allocated once; `length` says how many rows are real."""

    graphable = False  # stepped eagerly: its attention reads `length` rows, a size that changes
    cache_kind = N_("course KVCache (preallocated for the window)")
    loader = N_("the course's GPT-2 module (core/models/gpt2.py)")

    def __init__(self, folder: Path | str, device: torch.device, dtype: torch.dtype) -> None:
        from core.models.hf_gpt2 import load_gpt2

        super().__init__(load_gpt2(folder, dtype=dtype).model, device)

    def allocate(self, room: int) -> None:
        if self.cache is None:  # the window's buffers serve every depth
            with self.device:
                self.cache = self.model.new_cache()
        self.cache.length = 0

    def _run(self, ids: torch.Tensor) -> torch.Tensor:
        # the module makes its position indices with torch.arange: on a GPU, make them there
        on_device = self.device if self.device.type != "cpu" else contextlib.nullcontext()
        with on_device:
            logits, _ = self.model.forward_with_attention(ids, self.cache, last_only=True)  # (1, 1, V)
        return logits

    def _length(self) -> int:
        return self.cache.length

    def _rewind(self, depth: int) -> None:
        self.cache.length = depth

    def cache_tensors(self) -> list[torch.Tensor]:
        return [] if self.cache is None else [*self.cache.keys, *self.cache.values]  # each (B, H, T_max, Dh)


class Qwen3Decoder(_CourseDecoder):
    """A Qwen3 folder in core/models/qwen3.py: every layer attention, over static KV buffers."""

    cache_kind = N_("course static KV cache (preallocated per depth)")
    loader = N_("the course's Qwen3 module (core/models/qwen3.py)")

    def __init__(self, folder: Path | str, device: torch.device, dtype: torch.dtype) -> None:
        from core.models.qwen3 import load_qwen3

        super().__init__(load_qwen3(folder, dtype), device)

    def _new_cache(self, room: int):
        return self.model.new_cache(room, device=self.device)

    def _run(self, ids: torch.Tensor) -> torch.Tensor:
        return self.model(ids, self.cache)


class Qwen35Decoder(_CourseDecoder):
    """A Qwen3.5 folder in core/models/qwen35.py, stepped by core/models/qwen35_static.py: static KV
    buffers in the attention layers, fixed boards and convolution windows in the Gated DeltaNet ones."""

    cache_kind = N_("course static KV cache + fixed boards (preallocated per depth)")
    loader = N_("the course's Qwen3.5 module (core/models/qwen35.py)")

    def __init__(self, folder: Path | str, device: torch.device, dtype: torch.dtype) -> None:
        from core.models.qwen35 import load_qwen35

        super().__init__(load_qwen35(folder, dtype).model, device)

    def _new_cache(self, room: int):
        from core.models.qwen35_static import new_static_cache

        return new_static_cache(self.model, room, device=self.device)

    def _run(self, ids: torch.Tensor) -> torch.Tensor:
        from core.models.qwen35_static import run_static

        return run_static(self.model, ids, self.cache)

    def state_tensors(self) -> list[torch.Tensor]:
        return [] if self.cache is None else self.cache.board_tensors()


def open_course_decoder(family: str, folder: Path, device: torch.device, dtype: torch.dtype):
    """The course decoder for `family` (one of FAMILIES)."""
    return (Qwen35Decoder if family in QWEN35 else Qwen3Decoder)(folder, device, dtype)
