"""The two kinds of question a lesson's "Check yourself" asks (issue 45): pick one of a few choices, or
type a number. A question carries its own answer and a one-line *why* that points back to the picture on
the page that shows it, so the widget (ui/checks.py) only draws and compares.

Questions are built at render time in the reader's language, and a number in one is computed by the same
`core` code the page draws with, never typed: change a spec or a model and the answer follows.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Choice:
    """Pick one of `options`; `answer` is the index of the right one."""

    key: str  # stable within its lesson: the widget's key, in any language
    ask: str
    options: tuple[str, ...]
    answer: int
    why: str

    def __post_init__(self) -> None:
        if not 0 <= self.answer < len(self.options) or len(self.options) < 2:
            raise ValueError(f"{self.key}: answer {self.answer} is not one of {len(self.options)} options")

    def is_right(self, given: object) -> bool:
        return given == self.answer


@dataclass(frozen=True)
class Number:
    """Type a number; right within `tolerance` of `answer` (0: exactly). `step` is the input's step and
    says how many decimals the reader types (1: whole numbers, 0.01: two decimals)."""

    key: str
    ask: str
    answer: float
    why: str
    tolerance: float = 0.0
    step: float = 1.0

    @property
    def decimals(self) -> int:
        """Decimals the input shows: those of `step`."""
        text = f"{self.step:.10f}".rstrip("0")
        return len(text.split(".")[1]) if "." in text else 0

    def is_right(self, given: object) -> bool:
        if given is None or isinstance(given, bool) or not isinstance(given, int | float):
            return False
        return abs(float(given) - self.answer) <= self.tolerance + 1e-9


Question = Choice | Number


def all_right(questions: tuple[Question, ...], answers: dict[str, object]) -> bool:
    """Whether every question has its right answer in `answers` (question key → what the reader gave)."""
    return bool(questions) and all(q.is_right(answers.get(q.key)) for q in questions)
