"""A static KV cache laid out position-first, split between the device and pinned host memory.

Per layer the cache is one `(positions, 2, H, Dh)` block: a position's key and value rows sit
next to each other and positions follow one another, so "the first n positions" is one
contiguous range of bytes. Positions `[0, R)` live on the device; positions `[R, max_len)`
(the spill, when a VRAM budget is set) live in pinned host memory. At every step each
spilled layer copies its first n host positions into one device staging block with a single
contiguous host→device copy (one `cudaMemcpyAsync`, non-blocking from pinned memory), writes
the new row to the stage and, non-blocking, to its host home — the cache "streamed over
PCIe" that HF transformers' OffloadedCache and a driver's system-memory fallback produce
(docs/sources.md §6.3, §7.4). Nothing here blocks the host, so a step can be
captured in a CUDA graph.

Attention over a resident cache is one `F.scaled_dot_product_attention` call. With a spill
it is two parts (device rows, staged rows) joined by one softmax over their scores.
Buffers are allocated once at their final size; `release()` frees them and returns the
pinned pages to the OS (PyTorch's host allocator would otherwise keep them).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from core.gpu.decode.traffic import Traffic


def empty_host_cache() -> None:
    """Hand cached pinned host blocks back to the OS (no-op where torch has no such call)."""
    for name in ("_host_emptyCache", "_accelerator_emptyHostCache"):
        fn = getattr(torch._C, name, None)
        if fn is not None:
            try:
                fn()
            except Exception:  # no CUDA, or nothing cached: nothing to hand back
                pass
            return


def pinned_host_bytes() -> int | None:
    """Bytes PyTorch's pinned host allocator holds now (None where it cannot say)."""
    if not torch.cuda.is_available():
        return None
    try:
        stats = torch.cuda.host_memory_stats()
    except Exception:
        return None
    for key in ("allocated_bytes.current", "reserved_bytes.current"):  # blocks owned: in use + cached
        if key in stats:
            return int(stats[key])
    return None


class KVCache:
    """Keys and values of every layer: device rows [0, resident), host rows after them."""

    def __init__(
        self, n_layers: int, n_heads: int, head_dim: int, device: torch.device, dtype: torch.dtype
    ) -> None:
        self.n_layers, self.n_heads, self.head_dim = n_layers, n_heads, head_dim
        self.device, self.dtype = device, dtype
        self.elem_bytes = torch.finfo(dtype).bits // 8
        self.max_len = 0
        self.resident = 0  # positions kept on the device
        self.dev: list[torch.Tensor] = []  # per layer (R, 2, H, Dh)
        self.host: list[torch.Tensor] = []  # per layer (max_len − R, 2, H, Dh), pinned on CUDA
        self.stage: torch.Tensor | None = None  # one layer's streamed rows on the device

    # -- sizes ---------------------------------------------------------------------------------
    @property
    def row_bytes(self) -> int:
        """One position of one layer: its key and its value."""
        return 2 * self.n_heads * self.head_dim * self.elem_bytes

    @property
    def spilled(self) -> int:
        return self.max_len - self.resident

    @property
    def device_bytes(self) -> int:
        return self.n_layers * self.resident * self.row_bytes + self.spilled * self.row_bytes

    @property
    def host_bytes(self) -> int:
        return self.n_layers * self.spilled * self.row_bytes

    # -- life cycle ----------------------------------------------------------------------------
    def allocate(self, max_len: int, resident: int | None = None) -> None:
        """Room for `max_len` positions, `resident` of them on the device (None: all)."""
        self.release()
        resident = max_len if resident is None else max(0, min(max_len, resident))
        spilled = max_len - resident
        shape = (2, self.n_heads, self.head_dim)
        on_cuda = self.device.type == "cuda"
        host = torch.device("cpu") if on_cuda else self.device
        for _ in range(self.n_layers):
            self.dev.append(torch.empty(resident, *shape, device=self.device, dtype=self.dtype))
            if spilled:
                self.host.append(
                    torch.empty(spilled, *shape, device=host, dtype=self.dtype, pin_memory=on_cuda)
                )
        if spilled:
            self.stage = torch.empty(spilled, *shape, device=self.device, dtype=self.dtype)
        self.max_len, self.resident = max_len, resident

    def release(self) -> None:
        had_host = bool(self.host)
        self.dev, self.host, self.stage = [], [], None
        self.max_len = self.resident = 0
        if had_host:
            empty_host_cache()

    def fill(self, depth: int) -> None:
        """Random unit-scale rows for positions [0, depth): the cache holds d tokens."""
        if depth + 1 > self.max_len:
            raise ValueError(f"depth {depth} does not fit the allocated {self.max_len} positions")
        on_dev = min(depth, self.resident)
        n_host = max(0, depth - self.resident)
        for layer in range(self.n_layers):
            _fill_random(self.dev[layer][:on_dev])
            if not n_host:
                continue
            if self.stage is not None and self.device.type == "cuda":  # draw on the GPU, copy over: fast
                self.stage[:n_host].normal_()
                self.host[layer][:n_host].copy_(self.stage[:n_host])
            else:
                _fill_random(self.host[layer][:n_host])

    def host_rows(self, layer: int, n: int) -> torch.Tensor:
        """The first n spilled positions of a layer: what one step streams (contiguous)."""
        return self.host[layer][:n]

    # -- one step --------------------------------------------------------------------------------
    def attend(self, layer: int, pos: int, q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
        """Store position `pos`'s (2, H, Dh) key/value, then attend q (H, Dh) over [0, pos] → (H, Dh)."""
        r = self.resident
        if pos < r:
            self.dev[layer][pos].copy_(kv)
            return _sdpa(q, self.dev[layer][: pos + 1])
        n = pos - r  # spilled positions before this one
        stage = self.stage
        if n:
            stage[:n].copy_(self.host[layer][:n], non_blocking=True)  # one contiguous H→D copy
        stage[n].copy_(kv)
        self.host[layer][n].copy_(kv, non_blocking=True)  # the new row's home, D→H, no wait
        if r == 0:
            return _sdpa(q, stage[: n + 1])
        return _two_part_attention(q, self.dev[layer][:r], stage[: n + 1])

    def traffic(self, pos: int) -> Traffic:
        """Bytes the cache moves in one step at position `pos`, all layers."""
        row = self.row_bytes
        r = self.resident if self.max_len else pos + 1  # not allocated: as if all of it were resident
        if pos < r:
            return Traffic(cache_read=self.n_layers * (pos + 1) * row, cache_write=self.n_layers * row)
        n = pos - r
        length = pos + 1
        per_layer = Traffic(
            cache_read=n * row + r * row + (n + 1) * row,  # host rows, device rows, the stage
            cache_write=n * row + 2 * row,  # the stage filled; the new row on stage and host
            scratch=_score_bytes(self.n_heads, length, self.elem_bytes) if r else 0,
            host_link=n * row + row,
        )
        total = Traffic()
        for _ in range(self.n_layers):
            total = total + per_layer
        return total


def _fill_random(rows: torch.Tensor, block: int = 4096) -> None:
    """Unit-scale random rows. On the CPU, random numbers are slow (~1 GB/s), so one block of
    rows is drawn and copied over the rest at memcpy speed: decode time depends on how many
    bytes are read, not on their values."""
    if rows.device.type != "cpu" or len(rows) <= block:
        rows.normal_()
        return
    rows[:block].normal_()
    for start in range(block, len(rows), block):
        n = min(block, len(rows) - start)
        rows[start : start + n].copy_(rows[:n])


def _kv_views(block: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(L, 2, H, Dh) → keys and values as (H, L, Dh) views (no copy)."""
    return block[:, 0].transpose(0, 1), block[:, 1].transpose(0, 1)


def _sdpa(q: torch.Tensor, block: torch.Tensor) -> torch.Tensor:
    """One query per head over a contiguous block of positions: the fused attention kernel."""
    k, v = _kv_views(block)
    return F.scaled_dot_product_attention(q[None, :, None], k[None], v[None])[0, :, 0]  # (H, Dh)


def _score_bytes(n_heads: int, length: int, elem_bytes: int) -> int:
    """The score vector of the two-part path: written, joined, softmaxed in fp32, cast back, read."""
    return n_heads * length * (2 * elem_bytes + 2 * 4 + 2 * 4 + 2 * elem_bytes)


def _two_part_attention(q: torch.Tensor, resident: torch.Tensor, staged: torch.Tensor) -> torch.Tensor:
    """Softmax attention over device rows then staged rows, as if they were one cache."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    k1, v1 = _kv_views(resident)
    k2, v2 = _kv_views(staged)
    q3 = q[:, None]  # (H, 1, Dh)
    scores = torch.cat([q3 @ k1.transpose(-1, -2), q3 @ k2.transpose(-1, -2)], -1)  # (H, 1, L)
    wide = torch.promote_types(scores.dtype, torch.float32)  # fp32 softmax for 16-bit caches
    weights = torch.softmax(scores.to(wide) * scale, -1).to(q.dtype)
    r = k1.shape[1]
    out = weights[..., :r] @ v1 + weights[..., r:] @ v2  # (H, 1, Dh)
    return out[:, 0]
