"""The board lessons agree: one setting gives one number on every page (or the pages say which draw),
the sentence about random keys says what the curve shows, and each page points to the primer."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from core import board as bd
from tests.app import driver
from tests.app.driver import chart_spec as chart
from ui.course import lesson_ref


def run(slug: str) -> AppTest:
    """The page at Engineer depth: the captions these numbers sit in are the engineers' (Story shows fewer)."""
    at = AppTest.from_file(driver.page_path(slug), default_timeout=180)
    at.query_params["depth"] = "engineer"
    at.run()
    driver.assert_clean(at, f"{slug}, first run")
    return at


def captions(at: AppTest) -> str:
    return "\n".join(c.value for c in at.caption)


def curve(at: AppTest, name: str) -> dict[int, float]:
    """One trace of the collisions curves chart, as drawn: n → recall."""
    trace = next(t for t in chart(at, "co_curves")["data"] if t["name"] == name)
    return dict(zip(map(int, driver.plotly_array(trace["x"])), driver.plotly_array(trace["y"]), strict=True))


def percent(x: float) -> str:
    return f"{x:.0%}"


def test_the_same_setting_prints_the_same_numbers_on_every_page():
    """d = 8, 12 pairs, random keys: one draw (draw 1) and the average over the draws, both labelled."""
    la, co = run("linear_attention"), run("collisions")
    assert (la.slider(key="la_d").value, la.slider(key="la_n").value) == (8, 12)
    assert (co.slider(key="co_d").value, co.slider(key="co_n").value) == (8, 12)
    lin, soft = (
        curve(co, "linear attention, random keys")[12],
        curve(co, "softmax attention (keeps every pair)")[12],
    )
    one_draw = next(m.value for m in co.metric if m.label == "keys recalled, this draw")
    la_text = captions(la)
    # lesson linear_attention: the pictured draw, then the average the collisions curve draws
    shown = re.search(
        r"one random draw of keys .*?the board recalls (\d+%) .*?softmax attention (\d+%)", la_text
    )
    assert shown and shown.group(1) == one_draw
    assert f"Averaged over {len(bd.DRAWS)} draws" in la_text
    assert f"board {percent(lin)}, softmax {percent(soft)}" in la_text
    # lesson collisions: the same draw's metric, and its average equals the curve's point
    assert f"this setting recalls {percent(lin)} on average" in captions(co)
    assert one_draw != percent(lin), (
        "draw 1 and the average differ here: the labels are what keeps them apart"
    )
    # lesson deltanet, set to the same keys: its single draw and its average are the same two numbers
    dn = run("deltanet")
    dn.radio(key="dn_keys").set_value("random").run()
    assert dn.slider(key="dn_n").value == 12 and dn.slider(key="dn_d").value == 8
    metric = next(m.value for m in dn.metric if m.label == "keys recalled: linear → DeltaNet")
    assert metric.startswith(f"{one_draw} →")
    assert f"Averaged over {len(bd.DRAWS)} draws, as the curves below: linear {percent(lin)}" in captions(dn)


@pytest.mark.parametrize("d", [8, 4, 16])
def test_the_random_keys_sentence_says_what_the_curves_show(d: int):
    at = run("collisions")
    if d != 8:
        at.slider(key="co_d").set_value(d).run()
        driver.assert_clean(at, f"d = {d}")
    ortho, rand = curve(at, "linear attention, orthogonal keys"), curve(at, "linear attention, random keys")
    o = bd.first_loss(list(ortho), list(ortho.values()))
    r = bd.first_loss(list(rand), list(rand.values()))
    text = captions(at)
    assert ("start losing earlier" in text) == (
        r.first_short is not None and r.first_short < (o.first_short or 0)
    )
    if r.first_short == o.first_short and r.first_short is not None:
        assert f"Random keys also recall everything up to n = {r.last_full}" in text
        assert (
            f"at n = {r.first_short}, {percent(r.at_first_short)} against {percent(o.at_first_short)}" in text
        )
    elif r.first_short is not None and o.first_short is not None and r.first_short < o.first_short:
        assert f"their curve drops at n = {r.first_short}" in text


def test_softmax_misses_are_explained_from_the_draw():
    at = run("collisions")
    misses = bd.softmax_misses(bd.write_stream(bd.word_stream(12), "softmax", d=8, keys="random"))
    text = captions(at)
    for name in misses.missed:
        twin, overlap = misses.twin[name]
        assert f"{name} (overlap {overlap:.2f} with {twin})" in text
    low, high = misses.own_weight_range
    assert f"only {low:.0%}–{high:.0%} of the weight" in text


@pytest.mark.parametrize("slug", ["linear_attention", "collisions", "deltanet", "chunks", "forgetting"])
def test_every_board_lesson_points_to_the_primer(slug: str):
    at = run(slug)
    pointers = [m.value for m in at.markdown if f"See {lesson_ref('primer')}" in m.value]
    assert len(pointers) == 1 and "New to " in pointers[0]
