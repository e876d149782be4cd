"""How a KV cache is split under a VRAM budget, counting everything the process holds.

"Pretend my card has B bytes" must leave room for all of it: the CUDA context and what the
allocator already holds (weights included), a working allowance for one step's activations,
the device staging block that streamed rows land in (one layer's spilled positions), and
the resident cache rows. The rest of the cache lives in pinned host memory, so free host
RAM is checked before any of it is allocated: pinned pages cannot be swapped out, and
pinning more than the machine can spare would stall or kill the server (and every reader on
it) instead of measuring anything. At most `HOST_SHARE` of the free RAM is ever pinned, and
`HOST_MARGIN_BYTES` always stay free.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from core.i18n import N_

WORKSPACE_BYTES = 256 * 1024**2  # one step's activations, the graph pool and allocator slack on a GPU
HOST_MARGIN_BYTES = 2 * 1024**3  # host RAM left for everything else
HOST_SHARE = 0.5  # the largest share of free host RAM one benchmark may pin


def resident_positions(
    budget_bytes: int | None,
    held_bytes: int,
    bytes_per_position: int,
    stage_bytes_per_position: int = 0,
    max_len: int = 0,
) -> int | None:
    """How many cache positions fit on the device (None: no budget).

    held_bytes: what is already on the card before the cache (weights, context, workspace).
    With a staging block (`stage_bytes_per_position` × the spilled positions of `max_len`):
    R·b + (max_len − R)·s ≤ budget − held  →  R = (budget − held − max_len·s) / (b − s).
    """
    if budget_bytes is None:
        return None
    room = budget_bytes - held_bytes
    if not stage_bytes_per_position or max_len * bytes_per_position <= room:
        return max(0, room // bytes_per_position)
    if bytes_per_position <= stage_bytes_per_position:
        return 0
    return max(
        0, (room - max_len * stage_bytes_per_position) // (bytes_per_position - stage_bytes_per_position)
    )


def host_available_bytes() -> int | None:
    """Free host RAM the OS would hand out now (MemAvailable), or None where it cannot say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


@dataclass(frozen=True)
class HostCheck:
    """Whether `needed_bytes` of pinned memory fit in the safe share of `available_bytes` (None: unknown)."""

    needed_bytes: int
    available_bytes: int | None

    @property
    def allowed_bytes(self) -> int | None:
        """The most this benchmark may pin: a share of the free RAM, always leaving the margin free."""
        if self.available_bytes is None:
            return None
        share = int(self.available_bytes * HOST_SHARE)
        return max(0, min(share, self.available_bytes - HOST_MARGIN_BYTES))

    @property
    def fits(self) -> bool:
        return self.allowed_bytes is None or self.needed_bytes <= self.allowed_bytes

    @property
    def message(self) -> str:
        """Why the run stops short, in English (it is kept in the run's JSON; the page translates it
        from `REFUSAL`, ui.gpu.words)."""
        gib = 1024**3
        return REFUSAL.format(
            needed=f"{self.needed_bytes / gib:.1f}",
            allowed=f"{(self.allowed_bytes or 0) / gib:.1f}",
            share=f"{HOST_SHARE:.0%}",
            free=f"{(self.available_bytes or 0) / gib:.1f}",
            margin=f"{HOST_MARGIN_BYTES / gib:.0f}",
        )


REFUSAL = N_(
    "the spilled cache needs {needed} GiB of pinned host memory, more than this machine can safely spare: "
    "{allowed} GiB ({share} of the {free} GiB free, always leaving {margin} GiB). Pick a larger budget or a "
    "smaller model"
)


def check_host(needed_bytes: int, available_bytes: int | None = None) -> HostCheck:
    """Is there room in host RAM for `needed_bytes` of pinned cache?"""
    return HostCheck(needed_bytes, host_available_bytes() if available_bytes is None else available_bytes)


def pinnable_bytes(wanted: int, available_bytes: int | None = None) -> int:
    """`wanted`, cut down to the safe share of free host RAM (for a pinned test buffer)."""
    allowed = check_host(wanted, available_bytes).allowed_bytes
    return wanted if allowed is None else max(0, min(wanted, allowed))
