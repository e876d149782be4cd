"""Which lessons end with a check, and their questions (issue 45): one builder per lesson slug, in course
order. A builder makes its questions in the reader's language when called, with every number computed by
the `core` code its page draws with.

Two pages of the outline have none, on purpose (`NOT_CHECKED`): the map is where the course starts and
shows the reader's progress, and the glossary is a reference, not a lesson with one idea.
"""

from __future__ import annotations

from collections.abc import Callable

from core.checks import boards, hardware, hybrids, memory, rewrites
from core.checks.questions import Question

BUILDERS: dict[str, Callable[[], tuple[Question, ...]]] = {
    "gpt2": memory.gpt2,
    "kv_cache": memory.kv_cache,
    "primer": boards.primer,
    "linear_attention": boards.linear_attention,
    "collisions": boards.collisions,
    "deltanet": rewrites.deltanet,
    "chunks": rewrites.chunks,
    "forgetting": rewrites.forgetting,
    "kimi_k3": hybrids.kimi_k3,
    "experts": hybrids.experts,
    "real_hybrid": hybrids.real_hybrid,
    "your_gpu": hardware.your_gpu,
    "planner": hardware.planner,
    "what_changed": hardware.what_changed,
}
CHECKED: tuple[str, ...] = tuple(BUILDERS)
NOT_CHECKED = {
    "map": "the start page: it shows the reader's progress instead",
    "glossary": "a reference of words, not a lesson with one idea",
}


def questions(slug: str) -> tuple[Question, ...]:
    """The check of lesson `slug` in the reader's language; () for a page without one."""
    builder = BUILDERS.get(slug)
    return builder() if builder else ()
