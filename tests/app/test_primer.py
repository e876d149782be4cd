"""The primer page: the numbers it shows are the arithmetic it teaches, and they follow the widgets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.board import vectors
from tests.app import driver


@pytest.fixture(scope="module")
def page():
    return driver.fresh("primer")


def shown_dot(at) -> float:
    return float(driver.metric_value(at, "dot product").replace("−", "-"))


def arrow_tip(spec: dict, name: str) -> np.ndarray:
    (trace,) = [t for t in spec["data"] if t.get("name") == name]
    return np.array([driver.plotly_array(trace["x"])[-1], driver.plotly_array(trace["y"])[-1]])


def test_moving_the_arrows_changes_the_dot_product_and_it_equals_numpys(page):
    at = page
    settings = [(20, 1.5, 70, 1.0), (0, 2.0, 90, 1.0), (30, 1.0, 210, 2.0), (45, 1.0, 45, 1.0)]
    seen = []
    for a_dir, a_len, b_dir, b_len in settings:
        at.slider(key="pr_a_dir").set_value(a_dir)
        at.slider(key="pr_a_len").set_value(a_len)
        at.slider(key="pr_b_dir").set_value(b_dir)
        at.slider(key="pr_b_len").set_value(b_len).run()
        driver.assert_clean(at, f"arrows at {a_dir}°, {b_dir}°")
        a = np.array([a_len * math.cos(math.radians(a_dir)), a_len * math.sin(math.radians(a_dir))])
        b = np.array([b_len * math.cos(math.radians(b_dir)), b_len * math.sin(math.radians(b_dir))])
        assert shown_dot(at) == pytest.approx(float(np.dot(a, b)), abs=0.005)
        spec = driver.chart_spec(at, "pr_dot")
        np.testing.assert_allclose(arrow_tip(spec, "a"), a, atol=1e-9)  # the picture draws those arrows
        np.testing.assert_allclose(arrow_tip(spec, "b"), b, atol=1e-9)
        seen.append(shown_dot(at))
    assert seen[1] == pytest.approx(0.0, abs=0.005)  # right angles: 0
    assert seen[2] < 0 < seen[0]  # pointing apart: negative; the same way: positive
    assert seen[3] == pytest.approx(1.0, abs=0.005)  # two unit arrows the same way: cosine 1
    assert driver.metric_value(at, "angle between") == "0°"


def test_the_fruit_arrow_is_the_two_numbers(page):
    at = page
    at.slider(key="pr_sweet").set_value(0.6)
    at.slider(key="pr_sour").set_value(0.8).run()
    np.testing.assert_allclose(arrow_tip(driver.chart_spec(at, "pr_vector"), "your fruit"), [0.6, 0.8])
    assert any("is 1.00 long" in c.value for c in at.caption)  # 0.6² + 0.8² = 1


def test_matrix_times_vector_shows_one_dot_product_per_row(page):
    at = page
    pairs = vectors.primer_pairs()
    for word in pairs.key_names:
        at.selectbox(key="pr_query").set_value(word).run()
        spec = driver.chart_spec(at, "pr_matvec")
        keys, result = (driver.plotly_array(t["z"]) for t in spec["data"][:2])
        np.testing.assert_allclose(keys, pairs.keys, rtol=1e-6)
        np.testing.assert_allclose(result.ravel(), pairs.keys @ pairs.key(word), rtol=1e-5, atol=1e-6)
        assert int(np.argmax(result)) == pairs.key_names.index(word)  # a unit key matches itself best


def test_the_board_read_equals_the_written_keys_dot_products(page):
    at = page
    pairs = vectors.primer_pairs()
    at.selectbox(key="pr_pair1").set_value("sky → blue").run()
    at.selectbox(key="pr_pair2").set_value("snow → white")
    at.radio(key="pr_read").set_value("apple").run()
    driver.assert_clean(at, "two pairs, read with apple")
    bars = driver.plotly_array(driver.chart_spec(at, "pr_readback")["data"][0]["y"])
    apple = pairs.key("apple")
    expected = np.zeros(4)
    expected[1] = apple @ pairs.key("sky")
    expected[3] = apple @ pairs.key("snow")
    np.testing.assert_allclose(bars, expected, rtol=1e-6, atol=1e-9)
    board = driver.plotly_array(driver.chart_spec(at, "pr_outer")["data"][2]["z"])
    written = np.outer(pairs.key("sky"), pairs.value("blue")) + np.outer(
        pairs.key("snow"), pairs.value("white")
    )
    np.testing.assert_allclose(board, written, atol=1e-6)


def test_the_matrix_product_reads_every_written_key_at_once(page):
    at = page
    pairs = vectors.primer_pairs()
    for n in (1, 3):
        at.slider(key="pr_n").set_value(n).run()
        product = driver.plotly_array(driver.chart_spec(at, "pr_matmul")["data"][2]["z"])
        np.testing.assert_allclose(product, pairs.keys[:n] @ pairs.keys[:n].T @ pairs.values[:n], atol=1e-6)
        right = int((product.argmax(axis=1) == np.arange(n)).sum())
        assert any(f"{right} of {n} keys come back" in c.value for c in at.caption)
