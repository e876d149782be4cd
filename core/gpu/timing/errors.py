"""How a failed measurement is told: whether it ran out of memory, and its one line of text.

An out-of-memory error is a result (the page shows where the card ran out); any other error is
raised again, or cut to one 'TypeName: message' line for the page, the CLI or a JSON.
"""

from __future__ import annotations

import torch


def is_out_of_memory(error: BaseException) -> bool:
    """A CUDA OOM, or a CPU allocator failure."""
    if isinstance(error, torch.cuda.OutOfMemoryError):
        return True
    text = str(error).lower()
    return isinstance(error, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def oom_message(error: Exception) -> str:
    """An out-of-memory error's first line, kept as a result; any other error (Stop included) is raised again."""
    if not is_out_of_memory(error):
        raise error
    return str(error).splitlines()[0][:300]


def error_line(error: BaseException, limit: int = 200, whole: bool = False) -> str:
    """'TypeName: message' for the page, the CLI or a JSON: the first line of the message (the
    whole of it with `whole`), cut at `limit`; an empty message leaves the type name alone."""
    text = str(error) if whole else (str(error).splitlines() or [""])[0]
    return f"{type(error).__name__}: {text[:limit]}" if text else type(error).__name__
