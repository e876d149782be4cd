"""Wherever a page says a token reads every weight (or the weights are read per token, or speed is bytes read ÷
bandwidth), it says "at batch 1" nearby and the page links to the planner's batch setting (issue 15).

A batch of sequences shares one read of the weights per step, so "every token reads every weight" is true
only for one conversation at a time. The scan covers the pages' sources (lessons/, ui/), the figure builders
(core/figures/) and the glossary's table of terms (core/glossary_terms.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import streamlit as st

from core.plan import PlanInputs
from core.plan.export import from_query
from ui import deeper

ROOT = Path(__file__).resolve().parents[1]
SCANNED = sorted(
    [
        *ROOT.glob("lessons/*.py"),
        *ROOT.glob("ui/**/*.py"),
        *ROOT.glob("core/figures/*.py"),
        ROOT / "core" / "glossary_terms.py",
    ]
)
WINDOW = 400  # characters either side of a claim that must hold "batch 1"

# claims that the weights are read for every token — true only for one sequence at a time
CLAIMS = [
    r"read(?:s|ing)? every weight",
    r"every weight (?:is |gets )?(?:re-?)?read",
    r"read(?:s|ing)? (?:them )?all (?:of them )?(?:per|for every|for each) token",
    r"(?:weights?|bytes|GiB)(?: \w+){0,2} read per token",
    r"weights? (?:are|is) (?:re-?)?read",
    r"re-?read(?:s|ing)? (?:all |every |the |its )?weights",
    r"read(?:s|ing)? (?:all |the |its )?weights (?:per|for every|for each|at every) (?:token|step)",
    r"read(?:s|ing)? (?:its |the )?(?:awake |active )?weights",
    r"bytes read ÷",
    r"÷ \(weights \+ cache\)",
]
CLAIM = re.compile("|".join(f"(?:{c})" for c in CLAIMS), re.IGNORECASE)
BATCH_ONE = re.compile(r"batch[ -]1\b", re.IGNORECASE)


def joined(source: str) -> str:
    """The source with adjacent string literals glued together, so a sentence split over lines reads whole."""
    return re.sub(r"\"\s*\n\s*[frbu]*\"", "", source)


def claims_in(path: Path) -> list[tuple[str, str]]:
    """(the claim, the text around it) for every claim in one file."""
    text = joined(path.read_text(encoding="utf-8"))
    return [(m.group(0), text[max(0, m.start() - WINDOW) : m.end() + WINDOW]) for m in CLAIM.finditer(text)]


FOUND = {path: claims_in(path) for path in SCANNED}
WITH_CLAIMS = [path for path, found in FOUND.items() if found]


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_the_scan_finds_the_known_claims():
    """Guard against a pattern that matches nothing: the lessons that make the claim are found."""
    names = {_rel(p) for p in WITH_CLAIMS}
    assert {"lessons/kv_cache.py", "lessons/experts.py", "lessons/kimi_k3.py"} <= names, names


@pytest.mark.parametrize("path", WITH_CLAIMS, ids=_rel)
def test_every_claim_says_batch_1_nearby(path):
    for claim, around in FOUND[path]:
        assert BATCH_ONE.search(around), f"{_rel(path)}: '{claim}' without 'batch 1' nearby:\n…{around}…"


def _lessons_showing(path: Path, seen: frozenset[Path] = frozenset()) -> list[Path]:
    """The lesson pages whose claim this file makes: the file itself, or the lessons that import it, directly
    or through the ui/ modules that do (ui/gpu/batch.py is shown by Your GPU through ui/gpu/results.py)."""
    if path.parent.name == "lessons":
        return [path]
    module = _rel(path).removesuffix(".py").replace("/", ".")
    parent, name = module.rsplit(".", 1)
    imports = re.compile(
        rf"from {re.escape(module)} import|import {re.escape(module)}\b|from {re.escape(parent)} import [^\n]*\b{name}\b"
    )
    importers = [
        f
        for f in [*ROOT.glob("lessons/*.py"), *ROOT.glob("ui/**/*.py")]
        if f not in seen and f != path and imports.search(f.read_text(encoding="utf-8"))
    ]
    found: list[Path] = []
    for importer in importers:
        for lesson in _lessons_showing(importer, seen | {path}):
            if lesson not in found:
                found.append(lesson)
    return found


@pytest.mark.parametrize("path", [p for p in WITH_CLAIMS if p.name != "glossary_terms.py"], ids=_rel)
def test_the_page_links_to_the_planner_batch_setting(path):
    lessons = _lessons_showing(path)
    assert lessons, f"no lesson shows {_rel(path)}"
    linked = [lesson for lesson in lessons if "planner_batch_link()" in lesson.read_text(encoding="utf-8")]
    assert linked, (
        f"{_rel(path)} claims every weight is read per token; link the planner's batch from "
        + ", ".join(_rel(p) for p in lessons)
    )


def test_the_link_opens_the_planner_with_a_batch(monkeypatch):
    calls = []
    monkeypatch.setattr(st, "page_link", lambda page, **kw: calls.append((page, kw)))
    deeper.planner_batch_link()
    ((page, kw),) = calls
    assert page.endswith("lessons/planner.py")
    assert "batch" in kw["label"]
    inputs = from_query(kw["query_params"])
    assert inputs.batch == deeper.PLANNER_BATCH != PlanInputs().batch
