"""Japanese line breaking in Chromium (issue 41), at 1,400 px and at a phone's 390 px: kinsoku (no small
kana, 「ー」, closing bracket or 「、。」 at the start of a line: ui/a11y.JAPANESE_CSS sets
`line-break: strict` for lang=ja), no katakana word broken inside a heading, label, button or table
header (「レッス／ン」), and no label or header cut with an ellipsis (「実行：密なモデルとエキ…」). A few
pages, the ones readers flagged, each visited once and narrowed for the phone."""

from __future__ import annotations

import pytest

from tests.browser.conftest import link, wait_for_app
from ui.course import lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = (  # (slug, depth): Engineer depth where the tables and notes readers flagged live
    ("your_gpu", "engineer"),
    ("kimi_k3", "engineer"),
    ("experts", "engineer"),
    ("collisions", "engineer"),
    ("linear_attention", "story"),
    ("map", "story"),  # its table's 「レッスン」 header
)

# Walks every Japanese text node of the main area and the sidebar (when open), character by character,
# and finds where a new line starts: a character below and to the left of the one before it.
LINE_STARTS = """() => {
  const NO_START = "ぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶㇰㇱㇲㇳㇴㇵㇶㇷㇸㇹㇺㇻㇼㇽㇾㇿーｰ）」』】〕〉》］｝、。，．：；！？・ゝゞヽヾ々";
  const KATAKANA = /[\\u30a1-\\u30fa\\u30fc]/;
  const HEADS = "th, h1, h2, h3, h4, h5, h6, label, button, summary, [data-testid=stWidgetLabel]";
  const found = {starts: [], splits: [], cut: []};
  for (const root of document.querySelectorAll("[data-testid=stMain], [data-testid=stSidebar]")) {
    if (root.getBoundingClientRect().width < 50 || root.getAttribute("aria-expanded") === "false") continue;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    let previous = null, node;
    while ((node = walker.nextNode())) {
      const text = node.textContent, element = node.parentElement;
      if (!/[\\u3040-\\u30ff\\u4e00-\\u9fff]/.test(text) || !element
          || element.closest("code, pre, .katex, svg, [data-testid=stCode]")) { previous = null; continue; }
      const range = document.createRange();
      for (let i = 0; i < text.length; i++) {
        if (text[i] === " " || text[i] === "\\n") continue;
        range.setStart(node, i); range.setEnd(node, i + 1);
        const box = range.getClientRects()[0];
        if (!box || (box.width === 0 && box.height === 0)) continue;
        if (previous && box.top > previous.top + previous.height / 2 && box.left < previous.left) {
          const shown = text.slice(Math.max(0, i - 12), i) + "／" + text.slice(i, i + 12);
          if (NO_START.includes(text[i])) found.starts.push(shown);
          if (i > 0 && KATAKANA.test(text[i]) && KATAKANA.test(text[i - 1]) && element.closest(HEADS)) {
            found.splits.push(shown);
          }
        }
        previous = box;
      }
    }
  }
  for (const element of document.querySelectorAll("[data-testid=stMain] *, [data-testid=stSidebar] *")) {
    const style = getComputedStyle(element);
    if (style.textOverflow === "ellipsis" && element.scrollWidth > element.clientWidth + 1
        && element.getBoundingClientRect().width > 0 && element.textContent.trim()) {
      found.cut.push(element.textContent.trim().slice(0, 60));
    }
  }
  return found;
}"""


def broken_lines(page) -> dict[str, list[str]]:
    return page.evaluate(LINE_STARTS)


@pytest.mark.parametrize(("slug", "depth"), PAGES, ids=[f"{s}-{d}" for s, d in PAGES])
def test_japanese_breaks_lines_as_a_japanese_reader_expects(page, server_url, slug, depth):
    query = "?lang=ja" + ("&depth=engineer" if depth == "engineer" else "")
    page.goto(f"{server_url}{link(lesson(slug))}{query}")
    wait_for_app(page)
    assert page.evaluate("() => document.documentElement.lang") == "ja"
    for width in (1400, 390):
        page.set_viewport_size({"width": width, "height": 1000})
        page.wait_for_timeout(600)
        found = broken_lines(page)
        where = f"{slug} at {width} px ({depth})"
        assert not found["starts"], f"{where}: lines starting where kinsoku forbids: {found['starts'][:10]}"
        assert not found["splits"], (
            f"{where}: a katakana word broken in a heading or label: {found['splits'][:10]}"
        )
        assert not found["cut"], f"{where}: labels cut with an ellipsis: {found['cut'][:10]}"
