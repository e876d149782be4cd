"""Japanese line breaking as Chromium draws it (issue 41): kinsoku (no small kana, 「ー」, closing bracket or
「、。」 at the start of a line: ui/a11y.JAPANESE_CSS sets `line-break: strict` for lang=ja), no katakana word
broken inside a heading, label, button or table header (「レッス／ン」), and no label or header cut with an
ellipsis (「実行：密なモデルとエキ…」). Read on every page, in the Japanese load that test_japanese_in_chromium.py
(Story) or test_depths_in_chromium.py (Engineer) makes anyway, at 1,400 px and, narrowed, at a phone's 390 px."""

from __future__ import annotations

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


def check_line_breaking(page, findings, where: str) -> None:
    """Record in `findings` each way the page's Japanese lines break wrongly as drawn now."""
    found = broken_lines(page)
    with findings.check("line breaking (kinsoku)"):
        assert not found["starts"], f"{where}: lines starting where kinsoku forbids: {found['starts'][:10]}"
    with findings.check("line breaking (katakana words)"):
        assert not found["splits"], (
            f"{where}: a katakana word broken in a heading or label: {found['splits'][:10]}"
        )
    with findings.check("line breaking (cut labels)"):
        assert not found["cut"], f"{where}: labels cut with an ellipsis: {found['cut'][:10]}"
