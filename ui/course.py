"""The course outline: every lesson's number, title, section and page file.

The router (`app.py`) and the lesson frame (`ui/lesson.py`) both read this list,
so a lesson's title and its place in the story are written in one spot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Lesson:
    number: int
    slug: str
    title: str
    subtitle: str
    section: str
    icon: str

    @property
    def file(self) -> str:
        """Page path relative to the repository root (what st.Page wants)."""
        return f"pages/{self.number:02d}_{self.slug}.py"

    @property
    def url_path(self) -> str:
        return self.slug.replace("_", "-")

    @property
    def exists(self) -> bool:
        return (ROOT / self.file).is_file()

    @property
    def label(self) -> str:
        return f"{self.number} · {self.title}"


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        0,
        "map",
        "Map",
        "Seven years of LLMs as one story: how much must a model remember?",
        "Start here",
        ":material/map:",
    ),
    Lesson(
        1,
        "gpt2",
        "GPT-2, plain",
        "Every new byte re-reads the whole text from the start.",
        "Remembering everything",
        ":material/replay:",
    ),
    Lesson(
        2,
        "kv_cache",
        "KV cache",
        "Keep what you computed — and watch the memory grow.",
        "Remembering everything",
        ":material/memory:",
    ),
    Lesson(
        3,
        "linear_attention",
        "Linear attention",
        "One board of fixed size, written over and over.",
        "A board of fixed size",
        ":material/grid_on:",
    ),
    Lesson(
        4,
        "collisions",
        "Collisions",
        "A full board blurs: more pairs than dimensions collide.",
        "A board of fixed size",
        ":material/blur_on:",
    ),
    Lesson(
        5,
        "deltanet",
        "DeltaNet",
        "Erase, then write: a rewritten key replaces instead of blurring.",
        "A board of fixed size",
        ":material/edit_note:",
    ),
    Lesson(
        6,
        "chunks",
        "Chunks",
        "Rewriting in order is slow; cut the text into chunks and go parallel.",
        "A board of fixed size",
        ":material/view_week:",
    ),
    Lesson(
        7,
        "forgetting",
        "Forgetting",
        "Fade the board: one rate (Gated DeltaNet) or one per channel (KDA).",
        "A board of fixed size",
        ":material/hourglass_bottom:",
    ),
    Lesson(
        8,
        "kimi_k3",
        "Kimi K3",
        "Three boards to one full-attention layer, and a look back over depth.",
        "Kimi K3",
        ":material/stacks:",
    ),
    Lesson(9, "experts", "Experts", "898 experts, 18 awake per token.", "Kimi K3", ":material/groups:"),
    Lesson(
        10,
        "your_gpu",
        "Your GPU",
        "Measure the memory wall and the power bill on your own card.",
        "Your hardware",
        ":material/speed:",
    ),
    Lesson(
        11,
        "what_changed",
        "What changed",
        "Add, rewrite, forget, forget per channel — side by side.",
        "Wrap-up",
        ":material/summarize:",
    ),
)

SECTIONS: tuple[str, ...] = tuple(dict.fromkeys(lesson.section for lesson in LESSONS))


def lesson(number: int) -> Lesson:
    """The lesson with this number (ValueError for an unknown number)."""
    for item in LESSONS:
        if item.number == number:
            return item
    raise ValueError(f"no lesson number {number}")


def available() -> list[Lesson]:
    """Lessons whose page file exists, in course order."""
    return [item for item in LESSONS if item.exists]


def next_available(number: int) -> Lesson | None:
    """The next lesson after `number` that exists, or None at the end of the course."""
    later = [item for item in available() if item.number > number]
    return later[0] if later else None
