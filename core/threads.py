"""torch's CPU thread count: set once for a server, changed around work only where nothing else runs.

`torch.set_num_threads` is process-wide state (a new thread starts with the last count any thread
set), so in the app — one process, every reader's script run on its own thread — setting it per
request would race: reader A's "one thread, then back to what it was" could undo the count that
reader B's run just set, and every run after them inherits whichever came last. So the app calls
`set_once` at start-up, and `threads(n)` — which the command lines, the benchmarks and the tests
use around their work — changes nothing when the count already is `n`, as it always is in the app.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import torch

_lock = threading.Lock()
_fixed: int | None = None


def set_once(n: int) -> int:
    """Set torch's thread count to `n` the first time this process asks; later calls change
    nothing. Returns the count in force (the first caller's `n`)."""
    global _fixed
    if n < 1:
        raise ValueError(f"threads must be at least 1, got {n}")
    with _lock:
        if _fixed is None:
            if torch.get_num_threads() != n:
                torch.set_num_threads(n)
            _fixed = n
        return _fixed


@contextlib.contextmanager
def threads(n: int | None) -> Iterator[None]:
    """Run the block on `n` torch threads and put the count back after. A no-op when `n` is None or
    the count is already `n` (the app's case: its count was set once at start-up), so a server
    never touches the process-wide setting per request."""
    before = torch.get_num_threads()
    if n is None or n == before:
        yield
        return
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
