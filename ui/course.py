"""The course outline: every lesson's slug, page file, title and section, in story order.

The router (`app.py`), the lesson frame (`ui/lesson.py`) and the map read this list, so a
lesson's title and its place in the story are written in one spot. Everything else names a
lesson by its **slug**; its number is its position in `OUTLINE` (the map is 0), so inserting a
lesson renumbers every later one — headers, links, the map and every "lesson N" in the prose
(`lesson_ref`) — without touching a page. The page file is given explicitly, so it can be
renamed without changing the number.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from core.i18n import DEFAULT, N_, _, use_language
from core.specs import SPECS

_K3 = SPECS["kimi_k3"]  # the hybrid's layer counts come from its config, never typed
# the numbers the K3 lessons' outline text names (filled in after translation: word order may change)
_K3_LAYERS = (
    ("ratio", round(_K3.num_linear_layers / _K3.num_full_attention_layers)),
    ("linear", _K3.num_linear_layers),
    ("full", _K3.num_full_attention_layers),
)
_K3_EXPERTS = tuple(zip(("experts", "active"), _K3.expert_counts(), strict=True))

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Lesson:
    slug: str  # the lesson's name everywhere in code: lesson_header("forgetting"), link_to("kv_cache", …)
    file: str  # page path relative to the repository root (what st.Page wants)
    title: str  # the English source, marked N_(): `lesson()` and `available()` hand out translated copies
    subtitle: str
    section: str
    icon: str
    takeaway: str = ""  # "In one sentence": the lesson's point in at most two plain sentences, shown first
    values: tuple[tuple[str, object], ...] = ()  # numbers for the {placeholders} of title, subtitle, takeaway
    number: int = -1  # set by `Course` from the lesson's position; never written by hand

    def in_reader_language(self) -> Lesson:
        """This lesson with its title, subtitle and takeaway in the reader's language, numbers filled in.
        `section` stays the English source: it groups lessons; show it with `_(item.section)`."""
        words = dict(self.values)

        def shown(text: str) -> str:
            return _(text).format(**words) if text else text

        return replace(
            self, title=shown(self.title), subtitle=shown(self.subtitle), takeaway=shown(self.takeaway)
        )

    @property
    def url_path(self) -> str:
        return self.slug.replace("_", "-")

    @property
    def exists(self) -> bool:
        return (ROOT / self.file).is_file()

    @property
    def label(self) -> str:
        return f"{self.number} · {self.title}"


class Course:
    """An ordered outline of lessons, numbered by position, looked up by slug."""

    def __init__(self, outline: Iterable[Lesson]):
        # the source text (with {placeholders}), numbered; lookups hand out copies in the reader's
        # language, `lessons` is the outline in English with its numbers filled in
        self._sources = tuple(replace(item, number=n) for n, item in enumerate(outline))
        with use_language(DEFAULT):
            self.lessons: tuple[Lesson, ...] = tuple(item.in_reader_language() for item in self._sources)
        self._by_slug = {item.slug: item for item in self._sources}
        if len(self._by_slug) != len(self.lessons):
            raise ValueError("two lessons share a slug")
        files = [item.file for item in self.lessons]
        if len(set(files)) != len(files):
            raise ValueError("two lessons share a page file")
        self.sections: tuple[str, ...] = tuple(dict.fromkeys(item.section for item in self.lessons))

    def lesson(self, slug: str) -> Lesson:
        """The lesson with this slug (ValueError for an unknown slug)."""
        try:
            return self._by_slug[slug].in_reader_language()
        except KeyError:
            raise ValueError(f"no lesson {slug!r}; known: {', '.join(self._by_slug)}") from None

    def number(self, slug: str) -> int:
        return self.lesson(slug).number

    def ref(self, *slugs: str) -> str:
        """Prose naming lessons: "lesson 2", "lessons 5 and 7", "lessons 1, 2 and 4"."""
        if not slugs:
            raise ValueError("name at least one lesson")
        numbers = [str(self.number(slug)) for slug in slugs]
        if len(numbers) == 1:
            return _("lesson {n}").format(n=numbers[0])
        return _("lessons {first} and {last}").format(first=_(", ").join(numbers[:-1]), last=numbers[-1])

    def span(self, first: str, last: str) -> str:
        """Prose naming a run of lessons: "lessons 2–9"."""
        a, b = self.number(first), self.number(last)
        if b <= a:
            raise ValueError(f"{last!r} does not come after {first!r}")
        return _("lessons {first}–{last}").format(first=a, last=b)

    @property
    def start(self) -> Lesson:
        """The first lesson (the map): the router's default page."""
        return self.lessons[0]

    def available(self) -> list[Lesson]:
        """Lessons whose page file exists, in course order."""
        return [item.in_reader_language() for item in self._sources if item.exists]

    def next_available(self, slug: str) -> Lesson | None:
        """The next lesson after `slug` that exists, or None at the end of the course."""
        n = self.number(slug)
        later = [item for item in self.available() if item.number > n]
        return later[0] if later else None

    def previous_available(self, slug: str) -> Lesson | None:
        """The last lesson before `slug` that exists, or None at the start of the course."""
        n = self.number(slug)
        earlier = [item for item in self.available() if item.number < n]
        return earlier[-1] if earlier else None


OUTLINE: tuple[Lesson, ...] = (
    Lesson(
        "map",
        "lessons/map.py",
        N_("Map"),
        N_("Seven years of LLMs as one story: how much must a model remember?"),
        N_("Start here"),
        ":material/map:",
        takeaway=(
            N_(
                "Every stage of the last seven years fixes what the one before left broken, and the fight is "
                "always about how much a model must remember. Pick a stage and see what it keeps in memory."
            )
        ),
    ),
    Lesson(
        "gpt2",
        "lessons/gpt2.py",
        N_("GPT-2, plain"),
        N_("Without a cache, every new token re-reads the whole text."),
        N_("Remembering everything"),
        ":material/replay:",
        takeaway=(
            N_(
                "A language model writes one token at a time, and each new token has to look back at all the text"
                " before it. Without a cache, that look back recomputes the whole text again at every token."
            )
        ),
    ),
    Lesson(
        "kv_cache",
        "lessons/kv_cache.py",
        N_("KV cache"),
        N_("Keep what you computed — and watch the memory grow."),
        N_("Remembering everything"),
        ":material/memory:",
        takeaway=(
            N_(
                "Keep each token's key and value once they are computed, and a new token only computes itself. "
                "The price is memory: the cache grows by one row per token, forever."
            )
        ),
    ),
    Lesson(
        "primer",
        "lessons/primer.py",
        N_("Vectors and matrices"),
        N_("The five pieces of arithmetic the board lessons use, each one live."),
        N_("A board of fixed size"),
        ":material/functions:",
        takeaway=(
            N_(
                "A vector is a list of numbers that means something, and the dot product says how much two of "
                "them point the same way. Everything the board lessons do is built from that one operation."
            )
        ),
    ),
    Lesson(
        "linear_attention",
        "lessons/linear_attention.py",
        N_("Linear attention"),
        N_("One board of fixed size, written over and over."),
        N_("A board of fixed size"),
        ":material/grid_on:",
        takeaway=(
            N_(
                "Replace the growing cache with one board of fixed size: every token adds its key–value pair to "
                "the same board. Memory stops growing, but every pair now shares the same space."
            )
        ),
    ),
    Lesson(
        "collisions",
        "lessons/collisions.py",
        N_("Collisions"),
        N_("A full board blurs: more pairs than dimensions collide."),
        N_("A board of fixed size"),
        ":material/blur_on:",
        takeaway=(
            N_(
                "A board with d rows holds about d pairs cleanly; write more and they blur into each other. Past "
                "that point reading one key returns a mix of many values."
            )
        ),
    ),
    Lesson(
        "deltanet",
        "lessons/deltanet.py",
        N_("DeltaNet"),
        N_("Erase, then write: a rewritten key replaces instead of blurring."),
        N_("A board of fixed size"),
        ":material/edit_note:",
        takeaway=(
            N_(
                "Before writing, erase what the key already returns, then write the new value. A rewritten key "
                "replaces its old value instead of piling up on top of it."
            )
        ),
    ),
    Lesson(
        "chunks",
        "lessons/chunks.py",
        N_("Chunks"),
        N_("Rewriting in order is slow; cut the text into chunks and go parallel."),
        N_("A board of fixed size"),
        ":material/view_week:",
        takeaway=(
            N_(
                "Erase-then-write looks strictly one token after another, which is slow to train. Cutting the "
                "text into chunks gives the same board with most of the work done in parallel."
            )
        ),
    ),
    Lesson(
        "forgetting",
        "lessons/forgetting.py",
        N_("Forgetting"),
        N_("Fade the board: one rate (Gated DeltaNet) or one per channel (KDA)."),
        N_("A board of fixed size"),
        ":material/hourglass_bottom:",
        takeaway=(
            N_(
                "A board that never forgets fills up with old topics. Gated DeltaNet fades the whole board a "
                "little each token; Kimi Delta Attention fades each channel at its own rate."
            )
        ),
    ),
    Lesson(
        "kimi_k3",
        "lessons/kimi_k3.py",
        N_("Kimi K3"),
        N_(
            "About {ratio} KDA layers to each full-attention layer ({linear} + {full} in K3), and a look back "
            "over depth."
        ),
        N_("Kimi K3"),
        ":material/stacks:",
        values=_K3_LAYERS,
        takeaway=N_(
            "Kimi K3 is a hybrid that mixes layers: about {ratio} fixed-board (KDA) layers for each full-attention "
            "layer, so most layers need no growing cache. And where a plain stack hands every layer the sum of all "
            "the layers below with equal weight, each K3 layer learns how much to take from each earlier layer."
        ),
    ),
    Lesson(
        "experts",
        "lessons/experts.py",
        N_("Experts"),
        N_("{experts} experts, {active} awake per token."),
        N_("Kimi K3"),
        ":material/groups:",
        values=_K3_EXPERTS,
        takeaway=(
            N_(
                "Kimi K3 holds hundreds of small feed-forward networks (experts) but sends each token through "
                "only a few of them. Total size and the work per token come apart."
            )
        ),
    ),
    Lesson(
        "real_hybrid",
        "lessons/real_hybrid.py",
        N_("A real hybrid"),
        N_("A miniature built like Qwen3.5, stepped token by token; the released model once its weights are here."),
        N_("A real model"),
        ":material/developer_board:",
        takeaway=(
            N_(
                "Qwen3.5 is a released model built like the course's hybrids: three fixed-board layers to each "
                "attention layer. Step a miniature built the same way and watch where a trained model forgets and "
                "where it writes hard."
            )
        ),
    ),
    Lesson(
        "your_gpu",
        "lessons/your_gpu.py",
        N_("Your GPU"),
        N_("Measure the memory wall and the power bill on your own card."),
        N_("Your hardware"),
        ":material/speed:",
        takeaway=(
            N_(
                "For one conversation at a time (batch 1), writing a token means reading every weight that token "
                "uses from memory — the whole model when it is dense, only the experts it wakes when it is a "
                "mixture of experts — so memory speed, not arithmetic, usually sets the pace. Measure that wall on "
                "the machine in front of you."
            )
        ),
    ),
    Lesson(
        "planner",
        "lessons/planner.py",
        N_("Planner"),
        N_("Any config.json: what fits on your cards, and how fast it can decode."),
        N_("Your hardware"),
        ":material/calculate:",
        takeaway=(
            N_(
                "Whether a model fits on a card, and how fast it writes, follows from its config: the weights "
                "plus the cache or board must fit, and each decoding step reads them once for the whole batch."
            )
        ),
    ),
    Lesson(
        "what_changed",
        "lessons/what_changed.py",
        N_("What changed"),
        N_("Add, rewrite, forget, forget per channel — side by side."),
        N_("Wrap-up"),
        ":material/summarize:",
        takeaway=(
            N_(
                "Seven years in four rules for one board: add, rewrite, forget, forget per channel. Run them side"
                " by side on the same text."
            )
        ),
    ),
    Lesson(
        "glossary",
        "lessons/glossary.py",
        N_("Glossary"),
        N_("Every word the course uses, in one plain sentence."),
        N_("Reference"),
        ":material/menu_book:",
        takeaway=N_(
            "Every word the course uses, each in one plain sentence, with the lesson that explains it."
        ),
    ),
)

COURSE = Course(OUTLINE)
LESSONS: tuple[Lesson, ...] = COURSE.lessons
SECTIONS: tuple[str, ...] = COURSE.sections


# The course's lookups as plain functions. They read COURSE when called, so a test can swap in
# another outline (monkeypatch ui.course.COURSE) and every page and helper follows it.
def lesson(slug: str) -> Lesson:
    """The lesson with this slug (ValueError for an unknown slug)."""
    return COURSE.lesson(slug)


def number(slug: str) -> int:
    """The lesson's number: its position in the outline."""
    return COURSE.number(slug)


def lesson_ref(*slugs: str) -> str:
    """How prose names lessons: lesson_ref("kv_cache") → "lesson 2"; two or more → "lessons 5 and 7"."""
    return COURSE.ref(*slugs)


def lesson_span(first: str, last: str) -> str:
    """How prose names a run of lessons: lesson_span("kv_cache", "experts") → "lessons 2–9"."""
    return COURSE.span(first, last)


def available() -> list[Lesson]:
    """Lessons whose page file exists, in course order."""
    return COURSE.available()


def next_available(slug: str) -> Lesson | None:
    """The next lesson after `slug` that exists, or None at the end of the course."""
    return COURSE.next_available(slug)


def previous_available(slug: str) -> Lesson | None:
    """The last lesson before `slug` that exists, or None at the start of the course."""
    return COURSE.previous_available(slug)
