"""Keyboard only (issue 14): every control of a lesson is reachable with Tab, shows a focus ring, and a
lesson can be stepped, its answers revealed and its charts described without a mouse.

A focus ring is "visible" when the pixels around the focused control change as focus arrives: the
control's box (grown by 6 px, where rings and shadows are drawn) is photographed while focused and
again once focus has moved on.
"""

from __future__ import annotations

import contextlib
import re

import numpy as np
import pytest

from tests.browser.conftest import ROOT, rerun_of, settle_frames, step_position, wait_for_app
from ui.a11y import FOCUS_CSS
from ui.course import lesson

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Streamlit 1.67 draws no focus indicator on these links; ui.a11y.focus_rings() adds one.
LINKS_WITHOUT_RING = {"stSidebarNavLink", "stPageLink-NavLink"}
ROUTER_ADDS_FOCUS_RINGS = "focus_rings()" in (ROOT / "app.py").read_text()

# controls a reader uses: the lesson's own and the sidebar's lesson links
CONTROLS = (
    "[data-testid='stMain'] button, [data-testid='stMain'] input, [data-testid='stMain'] summary, "
    "[data-testid='stMain'] [role='slider'], [data-testid='stMain'] a[href]:not([data-testid='stHeaderActionElements'] a), "
    "[data-testid='stSidebarNav'] a[href]"
)
FOCUSED = """() => { const e = document.activeElement;
  if (!e || e === document.body) return null;
  const box = (e.closest('label') || e).getBoundingClientRect();
  return {id: e.dataset.kbd || '', tag: e.tagName, testid: e.getAttribute('data-testid') || '', text: (e.innerText || e.getAttribute('aria-label') || '').trim(),
          x: box.x, y: box.y, w: box.width, h: box.height}; }"""


def _tag_controls(page) -> int:
    """Number every visible, enabled control of the main pane (data-kbd) so Tab stops can be matched."""
    return page.evaluate(
        """(selector) => { let n = 0;
        for (const e of document.querySelectorAll(selector)) {
            const r = (e.closest('label') || e).getBoundingClientRect();
            if (e.disabled || r.width === 0 || r.height === 0 || e.closest('[aria-hidden=true], [inert]')) continue;
            if (e.type === 'radio' && !e.checked) continue;  // a radio group is one Tab stop; arrows pick
            e.dataset.kbd = String(n++); }
        return n; }""",
        CONTROLS,
    )


def _shot(page, box) -> np.ndarray | None:
    from io import BytesIO

    from PIL import Image

    pad = 6
    clip = {"x": max(0, box["x"] - pad), "y": max(0, box["y"] - pad), "width": box["w"] + 2 * pad,
            "height": box["h"] + 2 * pad}  # fmt: skip
    if clip["width"] < 4 or clip["height"] < 4:
        return None
    return np.asarray(Image.open(BytesIO(page.screenshot(clip=clip))).convert("RGB"), dtype=np.int16)


def _box_of(page, kbd_id: str) -> dict | None:
    """Where the control is, scrolled to the middle of the window first (scrolling moves no focus),
    so its shots with and without focus are both whole: one at the window's edge is cut."""
    return page.evaluate(
        """(id) => { const e = document.querySelector(`[data-kbd="${id}"]`); if (!e) return null;
        const el = e.closest('label') || e;
        el.scrollIntoView({block: 'center', inline: 'nearest'});
        const b = el.getBoundingClientRect();
        return {x: b.x, y: b.y, w: b.width, h: b.height}; }""",
        kbd_id,
    )


def _tab_through(page, max_stops: int = 120) -> list[dict]:
    """Press Tab until focus wraps around; for each stop, whether its ring is visible."""
    stops: list[dict] = []
    seen_ids: set[str] = set()
    for _ in range(max_stops):
        page.keyboard.press("Tab")
        settle_frames(page)
        now = page.evaluate(FOCUSED)
        if stops and "focused_pixels" in stops[-1]:  # the previous stop, now without focus
            before = stops[-1].pop("focused_pixels")
            box = _box_of(page, stops[-1]["id"])  # where it is now (the pane may have scrolled)
            settle_frames(page)
            after = _shot(page, box) if before is not None and box else None
            same_place = after is not None and after.shape == before.shape
            stops[-1]["ring"] = bool(same_place and (np.abs(after - before).sum(axis=2) > 60).sum() >= 8)
        if now is None:
            continue
        if now["id"] and now["id"] in seen_ids:
            break  # wrapped around
        seen_ids.add(now["id"])
        if now["id"]:
            now.update(_box_of(page, now["id"]) or {})
            settle_frames(page)
            now["focused_pixels"] = _shot(page, now)
        stops.append(now)
    return stops


def open_deltanet(page, server_url) -> None:
    """The DeltaNet lesson by its own link."""
    page.goto(f"{server_url}/{lesson('deltanet').url_path}")
    wait_for_app(page)


def test_every_control_is_reachable_and_shows_a_focus_ring(page, server_url):
    open_deltanet(page, server_url)
    total = _tag_controls(page)
    assert total >= 8, "the lesson should have its sliders, Step controls, toggles and chart words"
    stops = _tab_through(page)
    reached = {s["id"] for s in stops if s["id"]}
    missing = sorted(set(map(str, range(total))) - reached, key=int)
    assert not missing, f"controls never reached with Tab: {missing}"
    no_ring = [s for s in stops if s["id"] and not s.get("ring", True)]
    if not ROUTER_ADDS_FOCUS_RINGS:  # until app.py calls ui.a11y.focus_rings(), only Streamlit's links
        no_ring = [s for s in no_ring if s["testid"] not in LINKS_WITHOUT_RING]
    named = [f"{s['testid']} {s['text'][:40]!r}" for s in no_ring]
    assert not named, f"focused without a visible ring: {named}"


def test_the_focus_ring_styles_give_streamlits_links_a_visible_ring(page, server_url):
    """ui.a11y.FOCUS_CSS (what focus_rings() adds) makes the sidebar and page links show focus."""
    open_deltanet(page, server_url)
    page.add_style_tag(content=FOCUS_CSS)
    _tag_controls(page)
    stops = _tab_through(page)
    links = [s for s in stops if s["testid"] in LINKS_WITHOUT_RING]
    assert len(links) >= 5
    assert all(s.get("ring") for s in links), [s["text"][:30] for s in links if not s.get("ring")]


def test_a_lesson_can_be_stepped_revealed_and_described_with_the_keyboard_only(page, server_url):
    open_deltanet(page, server_url)
    main = page.locator("[data-testid='stMain']")

    def tab_to(pattern: str, limit: int = 80) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            focused = page.evaluate(FOCUSED)
            if focused and re.search(pattern, focused["text"]):
                return
        pytest.fail(f"Tab never reached a control matching {pattern!r}")

    def position() -> int:
        found = step_position(page)
        assert found is not None, "no step counter on the page"
        return found

    start = position()
    tab_to(r"\bStep$")
    for _ in range(3):
        with rerun_of(page):
            page.keyboard.press("Enter")
        if page.evaluate(FOCUSED) is None or not page.evaluate(FOCUSED)["text"].endswith("Step"):
            tab_to(r"\bStep$")  # a rerun may drop focus; find Step again
    assert position() == start + 3, "Enter on Step did not advance three tokens"
    tab_to(r"\bBack$")
    with rerun_of(page):
        page.keyboard.press("Space")
    assert position() == start + 2, "Space on Back did not go back one token"

    tab_to(r"Describe this chart")
    page.keyboard.press("Enter")
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    words = main.locator("[data-testid='stExpanderDetails']").filter(has_text="grid of").first
    with contextlib.suppress(PlaywrightTimeout):
        words.wait_for(state="visible", timeout=10_000)
    assert words.is_visible(), "Enter on 'Describe this chart' did not open the chart's words"

    tab_to(r"Show the answer")
    with rerun_of(page):
        page.keyboard.press("Space")
    assert main.locator("[data-testid='stCheckbox'] input[role='switch']:checked").count() >= 1
