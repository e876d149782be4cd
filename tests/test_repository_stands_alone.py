"""The repository stands alone: nothing in it points at notes a reader who clones it does not have.

Design and sources live in docs/architecture.md and docs/sources.md; code cites them as
`docs/sources.md §1.4` or `docs/architecture.md, Model protocol`, and every such citation must name a
section that exists. The private names are built from pieces here so this file does not match itself.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.git_files import git_files

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FOLDERS = ("core", "ui", "lessons", "bench", "tests", "docs", "deploy", "scripts", "assets")
SUFFIXES = {".py", ".md", ".sh", ".toml", ".txt", ".json", ".template"}
PRIVATE_NAMES = (
    "../" + "shared",
    "facts" + ".md",
    "DESIGN" + ".md",
    "gpu-" + "measurement.md",
    "explainers-and-" + "streamlit.md",
)

SECTION_HEADING = re.compile(r"^#+\s*§(\d+(?:\.\d+)?)\s", re.MULTILINE)
HEADING = re.compile(r"^#{2,}\s+(.+?)\s*$", re.MULTILINE)
# "docs/sources.md §1.4–1.6", "docs/sources.md §1.1, §5", "docs/sources.md §3.3-3.6"
SOURCES_CITE = re.compile(
    r"docs/sources\.md((?:(?:,\s*|\s+and\s+|\s+)§\d+(?:\.\d+)?(?:\s*[–-]\s*\d+(?:\.\d+)?)?)*)"
)
SECTION_NUMBER = re.compile(r"\d+(?:\.\d+)?")
ARCH_CITE = re.compile(r"docs/architecture\.md,\s*\"?([A-Z][^\"\n]*)")


def _repository_files() -> list[Path]:
    """Text files git tracks (or will: untracked but not ignored) in the folders above or at the top."""
    listed = git_files()
    files = []
    for name in sorted(set(listed)):
        path = ROOT / name
        top_level = "/" not in name
        if path.suffix in SUFFIXES and (top_level or name.split("/")[0] in FOLDERS) and path.is_file():
            files.append(path)
    return files


def _text(path: Path) -> str:
    # a JSON file may spell § as an escape; read it as the character
    return path.read_text(encoding="utf-8", errors="replace").replace("\\u00a7", "§")


FILES = _repository_files()


def test_the_scan_covers_the_code_and_the_docs() -> None:
    names = {path.relative_to(ROOT).as_posix() for path in FILES}
    for expected in (
        "README.md",
        "CONTRIBUTING.md",
        "core/ops/common.py",
        "docs/sources.md",
        "docs/architecture.md",
    ):
        assert expected in names


def test_no_file_names_the_private_notes() -> None:
    hits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in FILES
        for n, line in enumerate(_text(path).splitlines(), 1)
        if any(name in line for name in PRIVATE_NAMES)
    ]
    assert not hits, "cite docs/architecture.md or docs/sources.md instead:\n" + "\n".join(hits)


def source_sections() -> set[str]:
    return set(SECTION_HEADING.findall((DOCS / "sources.md").read_text(encoding="utf-8")))


def architecture_headings() -> list[str]:
    return HEADING.findall((DOCS / "architecture.md").read_text(encoding="utf-8"))


def cited_sections(text: str) -> list[str]:
    """Every section number a `docs/sources.md §…` citation names (both ends of a range)."""
    return [
        number for match in SOURCES_CITE.finditer(text) for number in SECTION_NUMBER.findall(match.group(1))
    ]


def cited_headings(text: str) -> list[str]:
    return [match.group(1) for match in ARCH_CITE.finditer(text)]


def test_the_citation_parser_reads_ranges_lists_and_headings() -> None:
    assert cited_sections("(docs/sources.md §1.4–1.6): and docs/sources.md §1.1, §5) —") == [
        "1.4",
        "1.6",
        "1.1",
        "5",
    ]
    assert cited_sections("docs/sources.md §3.3-3.6 and §9") == ["3.3", "3.6", "9"]
    assert cited_headings('(docs/architecture.md, "Model protocol").') == ["Model protocol"]
    assert cited_headings("Frame (docs/architecture.md, Lesson frame): the problem") == [
        "Lesson frame): the problem"
    ]
    assert cited_headings("see docs/architecture.md, and then") == []


def test_sources_has_numbered_sections() -> None:
    sections = source_sections()
    # the sections the code cites most: the board layout, the chunked forms, the roofline
    assert {"0", "1.4", "1.5", "1.6", "7.1"} <= sections


def test_every_citation_names_a_section_that_exists() -> None:
    sections, headings = source_sections(), architecture_headings()
    bad = []
    cites = 0
    for path in FILES:
        if path.name == Path(__file__).name:
            continue
        text = _text(path)
        for number in cited_sections(text):
            cites += 1
            if number not in sections:
                bad.append(f"{path.relative_to(ROOT)}: docs/sources.md §{number}")
        for words in cited_headings(text):
            cites += 1
            if not any(words.startswith(heading) for heading in headings):
                bad.append(f"{path.relative_to(ROOT)}: docs/architecture.md, {words[:40]}")
    assert not bad, "no such section:\n" + "\n".join(bad)
    assert cites >= 20  # the code does cite the docs (a scan that found nothing would prove nothing)


def test_a_missing_section_is_caught() -> None:
    sections, headings = source_sections(), architecture_headings()
    assert "99.9" not in sections
    assert cited_sections("docs/sources.md §99.9") == ["99.9"]
    assert not any("No such heading".startswith(h) for h in headings)
