"""The planner's "Go deeper: serving a hybrid" section (ui/deeper.py): shown inline at Engineer depth only
(ui/depth.py, issue 40), and every statement in it — batching, prefix caching, speculative decoding, which
engines run KDA and Gated DeltaNet — carries a link to where it is said (issue 15)."""

from __future__ import annotations

import re
from urllib.parse import urlparse

import pytest
from streamlit.testing.v1 import AppTest

from tests.app import driver
from ui.deeper import ENGINES, SERVING, SERVING_INTRO, engines_table

LINK = re.compile(r"\[[^\]]+\]\((https://[^)\s]+)\)")
CLAIMS = [SERVING_INTRO, *(claim for _, claims in SERVING for claim in claims)]


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.text[:40])
def test_every_statement_has_a_link(claim):
    assert claim.sources, claim.text
    for label, url in claim.sources:
        parsed = urlparse(url)
        assert label.strip() and parsed.scheme == "https" and parsed.netloc, (label, url)
    rendered = claim.markdown()
    assert rendered.startswith(claim.text) and len(LINK.findall(rendered)) == len(claim.sources)


def test_the_three_topics_and_the_snapshot_idea_are_there():
    titles = [title for title, _ in SERVING]
    assert [t.split(" ")[0] for t in titles] == ["Batching", "Prefix", "Speculative"]
    prefix = " ".join(c.text for c in dict(SERVING)["Prefix caching (state snapshots)"])
    assert "snapshot" in prefix and "cannot be cut back" in prefix
    spec = " ".join(c.text for c in dict(SERVING)["Speculative decoding"])
    assert "drops their rows" in spec and "last accepted token" in spec


def test_every_yes_in_the_engine_table_is_linked():
    rows = engines_table().splitlines()[2:]
    assert len(rows) == len(ENGINES)
    for row, (name, gdn, kda) in zip(rows, ENGINES, strict=True):
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[0] == name
        for cell, sources in ((cells[1], gdn), (cells[2], kda)):
            if sources is None:
                assert cell == "—"
            else:
                assert cell.startswith("yes: ") and len(LINK.findall(cell)) == len(sources)
    names = [name for name, _, _ in ENGINES]
    assert {"vLLM", "SGLang", "llama.cpp", "transformers"} <= set(names)


HEADING = "#### :material/engineering: Go deeper: serving a hybrid"


def _planner(depth: str) -> AppTest:
    at = AppTest.from_file(driver.page_path("planner"), default_timeout=120)
    at.query_params["depth"] = depth
    at.run()
    driver.assert_clean(at, f"first run at {depth} depth")
    return at


def _section(at: AppTest) -> list[str]:
    """The markdown blocks of the serving section: from its heading to the next Engineer heading or the
    end of the page's engineering part (the code toggle and "what is still missing" follow it)."""
    texts = [m.value for m in at.markdown]
    start = next(i for i, text in enumerate(texts) if text.startswith(HEADING))
    blocks = []
    for text in texts[start + 1 :]:
        if text.startswith(("#### ", "**:material/arrow_forward:")):
            break
        blocks.append(text)
    return blocks


def test_story_leaves_the_serving_section_out():
    at = _planner("story")
    text = "\n".join(m.value for m in at.markdown)
    assert HEADING not in text and "| engine | Gated DeltaNet" not in text
    assert not any(url in text for claim in CLAIMS for _, url in claim.sources)


def test_the_planner_shows_it_at_engineer_depth_with_every_link():
    at = _planner("engineer")
    blocks = _section(at)
    text = "\n".join(blocks)
    for title, _ in SERVING:
        assert f"**{title}.**" in text
    # every paragraph that states something links its sources; the heading above the table is the only other line
    for block in blocks:
        if block.startswith("**Which engines run these layers**"):
            continue
        assert LINK.search(block), f"a paragraph without a source: {block[:80]}"
    for claim in CLAIMS:
        for _, url in claim.sources:
            assert url in text
    assert "| engine | Gated DeltaNet" in text and "KDA" in text
