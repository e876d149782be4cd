"""The memory mechanisms of the story (lesson 11): the two stages before the board, then every rule."""

from __future__ import annotations

from dataclasses import dataclass

from core.mechanisms import get as get_rule
from core.mechanisms import rule_keys

# ---------------------------------------------------------------------------------------------
# The memory mechanisms of the story (lesson 11), at one shared width
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    """One stage of the story: how a layer keeps what it has read."""

    key: str
    label: str
    verb: str  # what it does to memory when a token arrives
    update: str  # the state rule, in words
    lesson: str  # slug of the lesson (ui/course.py)
    grows: bool  # True: memory grows with context; False: fixed-size board
    year: int
    source: str


def _rule_stage(key: str) -> Stage:
    m = get_rule(key)
    return Stage(key, m.label, m.verb, f"{m.update}: {m.update_words}", m.lesson, False, m.year, m.source)


# The two stages before the fixed-size board, then every rule of the registry (core/mechanisms.py).
MECHANISMS: dict[str, Stage] = {
    s.key: s
    for s in (
        Stage(
            "no_cache",
            "No cache (baseline)",  # a teaching baseline: GPT-2's own 2019 sampler kept a cache
            "recompute",
            "keeps nothing; re-reads the whole text every step (at the chosen width, not GPT-2's own)",
            "gpt2",
            False,
            2019,
            "Radford et al. 2019; nanoGPT model.py. A teaching baseline: GPT-2's own sampler already "
            "cached keys and values (openai/gpt-2 src/sample.py, past / presents)",
        ),
        Stage(
            "attention",
            "KV cache",
            "keep everything",
            "appends one key and one value per token (per key/value head: GQA shares them)",
            "kv_cache",
            True,
            2019,
            "standard decoding; DeepSeek-V3 / Llama-3 configs",
        ),
        *(_rule_stage(key) for key in rule_keys()),
    )
}
