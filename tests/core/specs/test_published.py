"""Your GPU's published table (core/specs/published.py): every row has a source URL, a source kind
and a what-was-measured text; community reports are labelled as such on the page (issue 15)."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from streamlit.testing.v1 import AppTest

from core.specs.published import COMMUNITY, KINDS, PRIMARY, PUBLISHED, published_table
from tests.app import driver

# hosts that publish first-hand: papers, the projects' own repositories and docs, a leaderboard's maintainers
PRIMARY_HOSTS = ("arxiv.org", "github.com/ggml-org/", "github.com/MoonshotAI/", "ml.energy")


def _url(source: str) -> str:
    return source.split()[0]


@pytest.mark.parametrize("row", PUBLISHED, ids=lambda p: f"{p.topic}:{p.model}")
def test_every_row_has_a_url_a_kind_and_what_was_measured(row):
    parsed = urlparse(_url(row.source))
    assert parsed.scheme == "https" and parsed.netloc, f"not a URL: {row.source}"
    assert row.source_kind in KINDS
    assert len(row.source_what.split()) >= 1
    # says which number, not just the model: a quantity word and more than a couple of words
    assert len(row.measured.split()) >= 5
    assert re.search(r"speed|power|energy|time|cache|throughput", row.measured), row.measured


@pytest.mark.parametrize("row", PUBLISHED, ids=lambda p: f"{p.topic}:{p.model}")
def test_primary_only_for_papers_official_repos_and_maintainers(row):
    """A row may call itself primary only when its URL is one of the first-hand hosts."""
    is_first_hand = any(host in row.source for host in PRIMARY_HOSTS)
    if row.source_kind == PRIMARY:
        assert is_first_hand, f"{row.source} is not a paper, official repository or maintainer's post"
    # a fork of llama.cpp is not llama.cpp: only ggml-org's repository is official
    if "llama.cpp" in row.source and "ggml-org" not in row.source:
        assert row.source_kind == COMMUNITY


@pytest.mark.parametrize("row", PUBLISHED, ids=lambda p: f"{p.topic}:{p.model}")
def test_columns_hold_what_their_header_says(row):
    # the card column holds a card (or says it is not stated), never a model description
    assert row.gpu.startswith("(card not stated") or re.search(r"RTX|H100|A100|H200|MI\d", row.gpu), row.gpu
    # the result carries a unit
    assert re.search(r"tokens/s|J/token|W\b|%|×", row.result), row.result
    # values listed with " / " in both setting and result line up one to one
    if " / " in row.setting and " / " in row.result.split("(")[0]:
        assert row.setting.count(" / ") == row.result.split("(")[0].count(" / "), (row.setting, row.result)


def test_ngl_rows_say_weights_moved_not_the_cache():
    for row in PUBLISHED:
        if "-ngl" in row.setting:
            assert "weights" in row.measured and "not the cache" in row.measured


def test_the_table_numbers_sources_with_their_kind():
    rows, sources = published_table()
    assert len(rows) == len(PUBLISHED)
    for row, pub in zip(rows, PUBLISHED, strict=True):
        number = int(re.match(r"\[(\d+)\]", row["source"]).group(1))
        assert sources[number - 1].startswith(pub.source_kind)
        assert sources[number - 1].endswith(pub.source)
        assert row["source"].endswith(pub.source_kind)
        assert row["what was measured"].endswith(pub.measured) and pub.model in row["what was measured"]
    brief, same_sources = published_table(brief=True)
    assert same_sources == sources and len(brief) == len(rows)
    for short, row in zip(brief, rows, strict=True):
        assert row["what was measured"].startswith(short["model on card"] + ": ")
        assert [short[c] for c in ("setting", "result", "source")] == [
            row[c] for c in ("setting", "result", "source")
        ]


def test_community_rows_are_labelled_on_the_page():
    at = AppTest.from_file(driver.page_path("your_gpu"), default_timeout=120)
    at.query_params["depth"] = "engineer"  # other people's benchmarks are never in the Story (issue 40)
    at.run()
    driver.assert_clean(at, "first run")
    # a short table to compare at a glance, and how each number was measured in the expander under it
    brief = next(t for t in at.table if "model on card" in t.value.columns).value
    assert [cells["result"] for _, cells in brief.iterrows()] == [pub.result for pub in PUBLISHED]
    (how,) = [e for e in at.expander if e.label == f"How each of the {len(PUBLISHED)} numbers was measured"]
    table = next(t for t in how.table if "what was measured" in t.value.columns)
    shown = table.value
    assert len(shown) == len(PUBLISHED)
    for (_, cells), pub in zip(shown.iterrows(), PUBLISHED, strict=True):
        assert pub.source_kind in cells["source"]
        assert cells["what was measured"].endswith(pub.measured)
    (sources,) = [m.value for m in at.markdown if m.value.startswith("Sources:")]
    assert "community report" in sources and "primary" in sources
    for pub in PUBLISHED:
        assert pub.source in sources
