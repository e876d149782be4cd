"""A training recipe run twice, for the models' determinism tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch


def assert_same_weights_twice(
    main: Callable[[list[str]], object], outs: list[Path], read: Callable[[Path], dict]
) -> None:
    """Run the recipe `main` for 3 steps into each of the two `outs`; `read(out)` returns the weights one
    run saved (and checks what else it wrote). The two must be bit-identical. The recipe pins global torch
    settings (threads, deterministic algorithms): they are put back as they were."""
    states = []
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    try:
        for out in outs:
            main(["--steps", "3", "--out", str(out)])
            states.append(read(out))
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)
    assert states[0].keys() == states[1].keys()
    assert all(torch.equal(states[0][k], states[1][k]) for k in states[0])
