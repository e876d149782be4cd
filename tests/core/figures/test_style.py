"""Colours for every eye (issue 14): the palette under simulated colour-vision deficiency, and contrast.

Simulation: Machado, Oliveira & Fernandes 2009, "A Physiologically-based Model for Simulation of
Color Vision Deficiency" (IEEE TVCG 15(6)), severity 1.0 matrices, applied in linear sRGB. Distance:
CIEDE2000 in CIELAB (D65), checked against Sharma, Wu & Dalal 2005's test data. Threshold: ΔE00 ≥ 10
between any two colours that share a chart — about four times the just-noticeable difference
(≈ 2.3), enough to tell thin lines and small markers apart at a glance, not only side by side.
"""

from __future__ import annotations

import itertools
import tomllib
from pathlib import Path

import numpy as np
import pytest

from core.figures.style import (
    COLORS,
    FONT,
    contrast_ratio,
    dash_of,
    label_of,
    marker_of,
    pattern_of,
)
from core.mechanisms import RULES

ROOT = Path(__file__).resolve().parents[3]
MIN_DELTA_E = 10.0
MACHADO = {  # severity 1.0, rows → simulated linear RGB
    "protanopia": [
        [0.152286, 1.052583, -0.204868],
        [0.114503, 0.786281, 0.099216],
        [-0.003882, -0.048116, 1.051998],
    ],
    "deuteranopia": [
        [0.367322, 0.860646, -0.227968],
        [0.280085, 0.672501, 0.047413],
        [-0.011820, 0.042940, 0.968881],
    ],
    "tritanopia": [
        [1.255528, -0.076749, -0.178779],
        [-0.078411, 0.930809, 0.147602],
        [0.004733, 0.691367, 0.303900],
    ],
}
VISIONS = ("normal", *MACHADO)
MECHANISMS = ("attention", "mla", *RULES, "hybrid")  # drawn together: Collisions' recall chart, What changed
TOGETHER = [MECHANISMS, ("moe", "dense"), ("measured", "predicted", "warning")]
TEXT_COLORS = {"chart font": FONT["color"], "warning": COLORS["warning"], "dense": COLORS["dense"]}


def _linear(color: str) -> np.ndarray:
    c = np.array([int(color.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)])
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(rgb_linear: np.ndarray) -> np.ndarray:
    m = np.array(
        [
            [0.4124564, 0.3575761, 0.1804375],
            [0.2126729, 0.7151522, 0.0721750],
            [0.0193339, 0.1191920, 0.9503041],
        ]
    )
    xyz = m @ rgb_linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def seen_as(color: str, vision: str) -> np.ndarray:
    """CIELAB of `color` as a viewer with `vision` sees it."""
    rgb = _linear(color)
    if vision != "normal":
        rgb = np.clip(np.array(MACHADO[vision]) @ rgb, 0, 1)
    return _lab(rgb)


def delta_e2000(lab1, lab2) -> float:
    """CIEDE2000 colour difference (Sharma, Wu & Dalal 2005, eqs. 1–22)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    h1, h2 = np.degrees(np.arctan2(b1, a1)) % 360, np.degrees(np.arctan2(b2, a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_hue = 2 * np.sqrt(c1 * c2) * np.sin(np.radians(dh / 2))
    l_bar, c_bar = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_bar = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_bar = (h1 + h2) / 2
    else:
        h_bar = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (
        1
        - 0.17 * np.cos(np.radians(h_bar - 30))
        + 0.24 * np.cos(np.radians(2 * h_bar))
        + 0.32 * np.cos(np.radians(3 * h_bar + 6))
        - 0.20 * np.cos(np.radians(4 * h_bar - 63))
    )
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_bar, 1 + 0.015 * c_bar * t
    r_t = (
        -np.sin(np.radians(60 * np.exp(-(((h_bar - 275) / 25) ** 2))))
        * 2
        * np.sqrt(c_bar**7 / (c_bar**7 + 25**7))
    )
    dl, dc, dhh = (l2 - l1) / s_l, (c2 - c1) / s_c, d_hue / s_h
    return float(np.sqrt(dl**2 + dc**2 + dhh**2 + r_t * dc * dhh))


@pytest.mark.parametrize(
    ("lab1", "lab2", "expected"),
    [  # Sharma, Wu & Dalal 2005, table 1: pairs 1, 7, 17 and 25
        ((50, 2.6772, -79.7751), (50, 0, -82.7485), 2.0425),
        ((50, 0, 0), (50, -1, 2), 2.3669),
        ((50, 2.5, 0), (73, 25, -18), 27.1492),
        ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ],
)
def test_the_colour_difference_matches_published_values(lab1, lab2, expected):
    assert delta_e2000(lab1, lab2) == pytest.approx(expected, abs=1e-3)


def test_simulation_keeps_grey_grey_and_merges_red_and_green_for_deuteranopes():
    assert np.allclose(seen_as("#777777", "deuteranopia"), seen_as("#777777", "normal"), atol=1.0)
    normal = delta_e2000(seen_as("#d62728", "normal"), seen_as("#2ca02c", "normal"))
    deutan = delta_e2000(seen_as("#d62728", "deuteranopia"), seen_as("#2ca02c", "deuteranopia"))
    assert deutan < normal / 3  # the classic red/green pair nearly collapses


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("group", TOGETHER, ids=lambda g: "+".join(g))
def test_colours_that_share_a_chart_stay_apart(group, vision):
    too_close = []
    for a, b in itertools.combinations(group, 2):
        d = delta_e2000(seen_as(COLORS[a], vision), seen_as(COLORS[b], vision))
        if d < MIN_DELTA_E:
            too_close.append(f"{label_of(a)} {COLORS[a]} vs {label_of(b)} {COLORS[b]}: ΔE00 = {d:.1f}")
    assert not too_close, f"under {vision}: " + "; ".join(too_close)


def test_the_palette_comes_from_the_registry():
    for key, rule in RULES.items():
        assert COLORS[key] == rule.color


@pytest.mark.parametrize("key", sorted(COLORS))
def test_every_chart_colour_stands_out_from_the_white_plot(key):
    assert contrast_ratio(COLORS[key]) >= 3.0, f"{key} {COLORS[key]}: graphics need 3 : 1 (WCAG 1.4.11)"


@pytest.mark.parametrize("name", sorted(TEXT_COLORS))
def test_colours_used_for_chart_text_are_readable(name):
    assert contrast_ratio(TEXT_COLORS[name]) >= 4.5, f"{name} {TEXT_COLORS[name]}: text needs 4.5 : 1"


def test_mechanisms_also_differ_by_marker_dash_and_pattern():
    assert len({marker_of(k) for k in MECHANISMS}) == len(MECHANISMS)
    assert len({(dash_of(k), marker_of(k)) for k in MECHANISMS}) == len(MECHANISMS)
    assert len({pattern_of(k) for k in RULES}) == len(RULES)
    assert all(dash_of(k) != "solid" and pattern_of(k) for k in RULES)  # boards: dashed and hatched


def _blend(color: str, background: str, alpha: float) -> str:
    fg, bg = (np.array([int(c.lstrip("#")[i : i + 2], 16) for i in (0, 2, 4)]) for c in (color, background))
    return "#" + "".join(f"{round(x):02x}" for x in alpha * fg + (1 - alpha) * bg)


def test_the_theme_keeps_captions_and_the_sidebar_caption_at_aa_contrast():
    """Streamlit draws captions in the text colour at 60 % opacity (its `fadedText60`)."""
    theme = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]
    for background in (theme["backgroundColor"], theme["secondaryBackgroundColor"]):
        caption = _blend(theme["textColor"], background, 0.6)
        assert contrast_ratio(caption, background) >= 4.5, f"caption {caption} on {background}"
        assert contrast_ratio(_blend(theme["codeTextColor"], background, 0.6), background) >= 4.5
        assert contrast_ratio(theme["primaryColor"], background) >= 4.5  # links, primary buttons
