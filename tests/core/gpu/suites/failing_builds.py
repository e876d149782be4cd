"""A `build` that runs out of memory on purpose: how the suites' tests check that out of memory while a
model is built becomes a result, not a crash."""

from __future__ import annotations

import torch


def out_of_memory_building(module, when):
    """Make `module.build` run out of memory for the models `when(kind, ffn)` picks (not on 'meta')."""
    real = module.build

    def build(kind, preset, device, dtype, ffn="dense"):
        if str(device) != "meta" and when(kind, ffn):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 9.00 GiB (simulated)")
        return real(kind, preset, device, dtype, ffn=ffn)

    return build
