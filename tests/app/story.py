"""Read a page as a Story reader reads it: its running text at a given depth and language, its word count,
and what Story must never show (issue 40). Run as a script for every page's counts:

    .venv/bin/python -m tests.app.story            # English and Japanese, Story and Engineer

Running text is what the reader reads in the main area on opening the page: markdown, captions, callouts,
headings and the answers of metrics. Left out, as the issue says: the "words you will meet" box, formulas,
code, the words a chart draws (and its "Describe this chart" text), widget labels and the glossary page.
Left out too: the lesson's "Check yourself" box at its end (issue 45) — an exercise the reader answers,
not the story told; only that one box, found by its key (`ui.checks.CONTAINER`).
"""

from __future__ import annotations

import re
import sys

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.driver import assert_clean, page_path
from ui.checks import CONTAINER as CHECK_BOX
from ui.course import LESSONS

WORD_BOXES = (
    "New words in this lesson",
    "Words you will meet",
    "What is training?",
    "このレッスンの新しい用語",
    "これから出会う用語",
    "学習とは？",
)  # noqa: E501
CHART_WORDS = ("Describe this chart", "このグラフを言葉で")
TEXT_KINDS = {"markdown", "caption", "info", "warning", "success", "error", "subheader", "header", "title"}
STORY_LIMIT = 700  # words of running text on a Story page (issue 40)
# Japanese has no spaces: the course's own translations run about 3 characters to an English word (measured
# over all pages on 2026-12-03), so a Japanese Story page is held to 3 characters a word
JA_CHARS_PER_WORD = 3.0

# What Story never shows (one list): file paths and module names, paper and pull-request ids, engine and
# tool names a beginner has not met. A sentence may name a tool when it says what it is in plain words:
# those are the PLAIN_TOOLS exceptions, matched with the explanation beside the name.
FORBIDDEN = {
    "file path": re.compile(r"\b[\w-]+/[\w./-]+\.(?:py|md|json|js|txt|toml|safetensors)\b"),
    "module name": re.compile(r"`?\b(?:core|ui|lessons|bench|tests|scripts)\.[a-z_]+(?:\.[a-z_]+)*\b"),
    "arXiv id": re.compile(r"\barXiv\b|\b\d{4}\.\d{4,5}\b"),
    "pull request": re.compile(r"\bPR\s*#?\d+|pull request|#\d{3,}\b", re.I),
    "engine or tool": re.compile(r"\b(?:llama\.cpp|vLLM|SGLang|Ollama|NVML|CUDA graphs?|eager|fla|Triton)\b"),
    "seed or learning rate": re.compile(r"\bseed\b|learning rate|シード|学習率"),
}


def rendered(slug: str, depth: str = "story", lang: str = "en", timeout: float = 180) -> AppTest:
    """A page run once at `depth` in `lang`, as a link `?depth=…&lang=…` opens it; fails on an exception."""
    at = AppTest.from_file(page_path(slug), default_timeout=timeout)
    at.query_params["depth"] = depth
    at.query_params["lang"] = lang
    at.run()
    assert_clean(at, f"{slug} at {depth} depth in {lang}")
    return at


def page_fixture(slug: str, depth: str = "engineer", lang: str = "en", timeout: float = 180):
    """A test file's module-scoped fixture `at`: the page rendered once (`rendered`), shared by its tests."""

    def at() -> AppTest:
        return rendered(slug, depth, lang, timeout)

    return pytest.fixture(scope="module", name="at")(at)


def running_text(node) -> list[str]:
    """The running text under `node` in page order (see the module docstring for what is left out)."""
    children = getattr(node, "children", None)
    if children is not None:
        label = getattr(node, "label", "") or ""
        if getattr(node, "type", "") == "expander" and label.startswith(WORD_BOXES + CHART_WORDS):
            return []
        if _is_check_box(node):  # an exercise, not running text (see the module docstring)
            return []
        texts = []
        for key in sorted(children):
            texts += running_text(children[key])
        return texts
    kind = getattr(node, "type", "")
    if kind in TEXT_KINDS:
        return [str(node.value)]
    if kind == "metric":
        return [str(node.value)]
    return []


def _is_check_box(node) -> bool:
    """Whether `node` is the "Check yourself" box (a container keyed `CHECK_BOX`: its id ends in "-key")."""
    block_id = getattr(getattr(node, "proto", None), "id", "") or ""
    return block_id.endswith(f"-{CHECK_BOX}")


_MARKUP = re.compile(r":material/[a-z0-9_]+:|[*_#>|`]|\$[^$]*\$|\]\([^)]*\)")


def words(texts: list[str], lang: str = "en") -> int:
    """Words of running text: whitespace-separated for English; for Japanese the characters over
    `JA_CHARS_PER_WORD`, so both languages are held to one limit."""
    body = _MARKUP.sub(" ", "\n".join(texts))
    if lang == "ja":
        chars = len(re.sub(r"\s", "", body))
        return round(chars / JA_CHARS_PER_WORD)
    return len([w for w in body.split() if re.search(r"\w", w)])


def forbidden(texts: list[str]) -> list[str]:
    """What Story must not show, as '<kind>: <the sentence>' lines."""
    found = []
    for text in texts:
        for kind, pattern in FORBIDDEN.items():
            for match in pattern.finditer(text):
                around = text[max(0, match.start() - 60) : match.end() + 60].replace("\n", " ")
                found.append(f"{kind}: …{around}…")
    return found


def main() -> None:
    langs = sys.argv[1:] or ["en", "ja"]
    print(
        f"{'page':16} " + " ".join(f"{lang}-{depth:9}" for lang in langs for depth in ("story", "engineer"))
    )
    for item in LESSONS:
        if item.slug == "glossary" or not item.exists:
            continue
        counts = []
        for lang in langs:
            for depth in ("story", "engineer"):
                at = rendered(item.slug, depth, lang)
                counts.append(words(running_text(at.main), lang))
        print(f"{item.slug:16} " + " ".join(f"{c:12d}" for c in counts), flush=True)


if __name__ == "__main__":
    main()
