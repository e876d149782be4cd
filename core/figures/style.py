"""One look for every chart: fonts, colours per mechanism, heatmap defaults.

Pages pass figures to `ui.charts.show_figure`, which draws them with `theme=None`
so these choices — above all the fixed colour ranges — survive untouched.
"""

from __future__ import annotations

import math
import unicodedata

import numpy as np
import plotly.graph_objects as go

from core.figures.figure_dict import TITLE_MARGIN
from core.i18n import N_, _
from core.mechanisms import RULES
from core.units import format_si

# Japanese glyphs come from the CJK fonts after the Latin ones (a browser picks per character).
FONT = dict(
    family="Inter, system-ui, -apple-system, Segoe UI, Noto Sans CJK JP, Noto Sans JP, Hiragino Sans, Meiryo, sans-serif",
    size=13,
    color="#1f2933",
)

# One colour per mechanism, used everywhere the mechanism appears; the fixed-board rules'
# colours and names come from the registry (core/mechanisms.py).
#
# Colours for every eye (issue 14, tests/core/figures/test_style.py): the seven mechanism colours stay at
# least ΔE2000 = 10 apart from each other for normal vision and under simulated protanopia, deuteranopia
# and tritanopia (Machado et al. 2009), and every colour keeps 3 : 1 against the white plot
# (WCAG 1.4.11, graphics); colours also drawn as text keep 4.5 : 1. Colour is never the only cue:
# charts that compare mechanisms also give each its own marker, dash and, for bars, fill pattern.
COLORS = {
    "attention": "#1c4fd8",  # softmax attention / KV cache: strong blue
    "mla": "#8b7cf6",  # multi-head latent attention: light violet
    **{key: m.color for key, m in RULES.items()},
    "hybrid": "#5c2a74",  # KDA layers + attention layers: dark purple
    "moe": "#b85c00",
    "dense": "#495057",
    "measured": "#1971c2",
    "predicted": "#868e96",
    "warning": "#e03131",
}
LABELS = {
    "attention": N_("Softmax attention"),
    "mla": N_("MLA (latent attention)"),
    **{key: m.label for key, m in RULES.items()},
    "hybrid": N_("Hybrid (KDA + attention)"),
}
# The second cue beside colour: a marker symbol, a line dash and a bar fill pattern per mechanism.
# Attention-style memories (the growing cache) draw solid; fixed boards draw dashed and hatched.
MARKERS = {"attention": "circle", "mla": "diamond", "hybrid": "star"}
DASHES = {"attention": "solid", "mla": "solid", "hybrid": "dashdot"}
PATTERNS = {"attention": "", "mla": "", "hybrid": "+"}
_RULE_MARKERS = ("square", "triangle-up", "cross", "x", "triangle-down", "pentagon", "hexagon")
_RULE_DASHES = ("dot", "dash", "longdash", "longdashdot", "dashdot")
_RULE_PATTERNS = ("\\", ".", "x", "/", "-", "|")  # KDA (4th) gets "/"


def color_of(key: str) -> str:
    """A mechanism's colour, looked up live so a rule registered later gets its own."""
    return RULES[key].color if key in RULES else COLORS.get(key, COLORS["dense"])


def label_of(key: str) -> str:
    """A mechanism's reader-facing name in the reader's language (the key itself when it is not a
    known mechanism; LABELS and the rules' labels are the English, marked for translation)."""
    return _(RULES[key].label if key in RULES else LABELS.get(key, key))


def _by_rule(key: str, table: dict[str, str], choices: tuple[str, ...], default: str) -> str:
    if key in table:
        return table[key]
    rules = list(RULES)
    return choices[rules.index(key) % len(choices)] if key in rules else default


def marker_of(key: str) -> str:
    """A mechanism's marker symbol, so series differ by shape as well as colour."""
    return _by_rule(key, MARKERS, _RULE_MARKERS, "circle")


def dash_of(key: str) -> str:
    """A mechanism's line dash: solid for caches, a dash per fixed-board rule."""
    return _by_rule(key, DASHES, _RULE_DASHES, "solid")


def pattern_of(key: str) -> str:
    """A mechanism's bar fill pattern ('' = solid): fixed boards are hatched, caches solid."""
    return _by_rule(key, PATTERNS, _RULE_PATTERNS, "")


def bar_pattern(key: str) -> dict:
    """plotly `marker.pattern` for a mechanism's bars: white hatching over its colour ({} = solid)."""
    shape = pattern_of(key)
    return dict(shape=shape, fillmode="overlay", fgcolor="white", size=7, solidity=0.35) if shape else {}


def relative_luminance(color: str) -> float:
    """WCAG 2.1 relative luminance of '#rrggbb'."""
    channels = [int(color.lstrip("#")[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(foreground: str, background: str = "#ffffff") -> float:
    """WCAG 2.1 contrast ratio of two '#rrggbb' colours (1 … 21; AA text needs 4.5)."""
    lighter, darker = sorted((relative_luminance(foreground), relative_luminance(background)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


DIVERGING = "RdBu_r"  # signed values (board entries, keys, values): blue < 0 < red
SEQUENTIAL = "Blues"  # non-negative values (weights, counts)


def base_layout(
    fig: go.Figure,
    title: str = "",
    x_title: str = "",
    y_title: str = "",
    height: int = 360,
) -> go.Figure:
    """Apply the shared layout: white background, readable font, titled axes."""
    fig.update_layout(
        # the title sits at the very top, so a legend above the plot (y = 1.02) never runs into it
        title=dict(
            text=title,
            x=0.0,
            xanchor="left",
            y=1.0,
            yref="container",
            yanchor="top",
            pad=dict(t=8),
            font=dict(size=15),
        ),
        font=FONT,
        height=height,
        margin=dict(l=60, r=20, t=TITLE_MARGIN if title else 20, b=50),
        plot_bgcolor="white",
        paper_bgcolor="white",
        legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1.0),
        hoverlabel=dict(font_size=12),
        # a bar's number is shrunk to fit the bar; one that would shrink below 9 px is left out instead
        # (on a phone, grouped bars' numbers ran together as "0.680.680.68"); hover and the chart's
        # words still give every value
        uniformtext=dict(minsize=9, mode="hide"),
    )
    # automargin: long or rotated tick labels push the margin out and the axis title with them,
    # instead of running into each other (standoff = gap between tick labels and axis title)
    axis = dict(showgrid=True, gridcolor="#eceff1", zeroline=False, linecolor="#adb5bd", automargin=True)
    fig.update_xaxes(title=dict(text=x_title, standoff=8), **axis)
    fig.update_yaxes(title=dict(text=y_title, standoff=8), **axis)
    return fig


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Clean ticks for a log axis covering lo..hi: 1-2-5 steps over up to two decades, else powers of ten.

    Plotly's own log ticks label every minor step ("2, 3, …, 9, 10k"); these stay readable.
    """
    if not (lo > 0 and hi > 0):
        raise ValueError("a log axis needs positive bounds")
    lo, hi = min(lo, hi), max(lo, hi)
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    steps = (1, 2, 5) if last - first <= 2 else (1,)
    values = [m * 10.0**e for e in range(first, last + 1) for m in steps]
    inside = [v for v in values if lo / 1.001 <= v <= hi * 1.001]
    if len(inside) < 2:  # less than a step wide: take the nearest steps on either side too
        below = [v for v in values if v < lo]
        above = [v for v in values if v > hi]
        inside = below[-1:] + inside + above[:1]
    return inside, [format_si(v) for v in inside]


def shown_width(text: str) -> int:
    """How wide a label is, in Latin characters: a kana or kanji takes about two ('読み出し' ≈ 8)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def wrap_text(text: str, width: int = 11) -> str:
    """Break a label into lines of about `width` characters (at spaces, else after hyphens) with
    <br>, so labels stay short where plotly cannot wrap: 'Qwen3-Next-80B-A3B' → 'Qwen3-Next-<br>80B-A3B'."""
    pieces: list[str] = []
    for word in text.split(" "):
        if shown_width(word) <= width or "-" not in word:
            pieces.append(word)
            continue
        parts = word.split("-")
        pieces.extend([p + "-" for p in parts[:-1]] + [parts[-1]])
    lines: list[str] = []
    for piece in pieces:
        glue = "" if lines and lines[-1].endswith("-") else " "
        if lines and shown_width(lines[-1] + glue + piece) <= width:
            lines[-1] += glue + piece
        else:
            lines.append(piece)
    return "<br>".join(lines)


def heatmap(
    z: np.ndarray,
    zmin: float,
    zmax: float,
    x_labels=None,
    y_labels=None,
    colorscale: str = DIVERGING,
    colorbar_title: str = "",
    hover: str = "row %{y}<br>column %{x}<br>value %{z:.3f}<extra></extra>",
) -> go.Heatmap:
    """A heatmap trace with a fixed colour range, so the same value looks the same at every step."""
    return go.Heatmap(
        z=np.asarray(z, dtype=np.float32),
        x=x_labels,
        y=y_labels,
        zmin=zmin,
        zmax=zmax,
        colorscale=colorscale,
        colorbar=dict(title=dict(text=colorbar_title, side="right"), thickness=12),
        hovertemplate=hover,
    )


def marker_line(fig: go.Figure, x: float, top: float, name: str, dash: str, hover: str, **text) -> None:
    """A vertical line at `x` from 0 to `top`, in the warning colour, with its name and hover.

    A trace, not a shape: it gets a legend entry and hover, and sits right on a log axis (shapes and
    annotations take log10 units there, traces take data). `text` adds labels (mode "lines+text").
    """
    fig.add_scatter(
        x=[x, x],
        y=[0, top],
        mode="lines+text" if text else "lines",
        name=name,
        line=dict(color=COLORS["warning"], dash=dash, width=2),
        hovertemplate=hover,
        **text,
    )


def weight_heatmap(z: np.ndarray, zmax: float, x_labels, y_labels, hover: str) -> go.Heatmap:
    """A heatmap of weights from 0 to `zmax` (mixing or routing weights): sequential colours, a "weight"
    colour bar, and `hover` (the words for a cell, with plotly's %{…} fields) as the whole hover."""
    return heatmap(
        z,
        zmin=0.0,
        zmax=zmax,
        x_labels=x_labels,
        y_labels=y_labels,
        colorscale=SEQUENTIAL,
        colorbar_title=_("weight"),
        hover=hover + "<extra></extra>",
    )


def legend_below(fig: go.Figure, y: float = -0.14, bottom: int = 90, grow: int = 0) -> go.Figure:
    """Legend under the x axis: above the plot, a legend of long entries wraps over the chart's title
    on a phone. `y` clears the axis title (lower for two-line tick labels), `bottom` makes room for it,
    `grow` adds that many pixels of height so the plot itself keeps its size."""
    fig.update_layout(
        legend=dict(orientation="h", x=0.0, xanchor="left", y=y, yanchor="top"),
        margin=dict(t=40 if fig.layout.title.text else 30, b=bottom),
    )
    if grow:
        fig.update_layout(height=(fig.layout.height or 340) + grow)
    return fig


def two_lines(title: str) -> str:
    """'speed (tokens per second)' → 'speed<br>(tokens per second)'; the same before a Japanese '（'."""
    for opening in (" (", "（"):
        if opening in title:
            head, tail = title.split(opening, 1)
            return f"{head}<br>{opening.strip()}{tail}"
    return title
