"""The memory mechanisms of the story (What changed): the two stages before the board, then every rule."""

from __future__ import annotations

from dataclasses import dataclass

from core.i18n import N_, _
from core.mechanisms import get as get_rule
from core.mechanisms import rule_keys

# ---------------------------------------------------------------------------------------------
# The memory mechanisms of the story (What changed), at one shared width
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    """One stage of the story: how a layer keeps what it has read. The words are English sources
    (marked N_); the `shown_*` methods give them in the reader's language."""

    key: str
    label: str
    verb: str  # what it does to memory when a token arrives
    update_words: str  # the state rule, in words
    lesson: str  # slug of the lesson (ui/course.py)
    grows: bool  # True: memory grows with context; False: fixed-size board
    year: int
    source: str
    rule: str = ""  # the state rule as one line of maths, when it has one (never translated)

    @property
    def update(self) -> str:
        """The rule in English: maths, then words ("S ← S + k vᵀ: adds k vᵀ to the board")."""
        return f"{self.rule}: {self.update_words}" if self.rule else self.update_words

    def shown_label(self) -> str:
        return _(self.label)

    def shown_verb(self) -> str:
        return _(self.verb)

    def shown_update(self) -> str:
        """`update` in the reader's language (the maths stays as it is)."""
        words = _(self.update_words)
        return _("{rule}: {words}").format(rule=self.rule, words=words) if self.rule else words


def _rule_stage(key: str) -> Stage:
    m = get_rule(key)
    return Stage(key, m.label, m.verb, m.update_words, m.lesson, False, m.year, m.source, rule=m.update)


# The two stages before the fixed-size board, then every rule of the registry (core/mechanisms.py).
MECHANISMS: dict[str, Stage] = {
    s.key: s
    for s in (
        Stage(
            "no_cache",
            N_("No cache (baseline)"),  # a teaching baseline: GPT-2's own 2019 sampler kept a cache
            N_("recompute"),
            N_("keeps nothing; re-reads the whole text every step (at the chosen width, not GPT-2's own)"),
            "gpt2",
            False,
            2019,
            "Radford et al. 2019; nanoGPT model.py. A teaching baseline: GPT-2's own sampler already "
            "cached keys and values (openai/gpt-2 src/sample.py, past / presents)",
        ),
        Stage(
            "attention",
            N_("KV cache"),
            N_("keep everything"),
            N_("appends one key and one value per token (per key/value head: GQA shares them)"),
            "kv_cache",
            True,
            2019,
            "standard decoding; DeepSeek-V3 / Llama-3 configs",
        ),
        *(_rule_stage(key) for key in rule_keys()),
    )
}
