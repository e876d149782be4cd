"""Charts in words: a short text alternative computed from any plotly figure's own data.

A screen reader cannot read a plotly chart, and a reader who cannot tell two colours apart cannot
read a legend by colour (WCAG 2.1, 1.1.1 non-text content and 1.4.1 use of colour). So every chart
the course draws (`ui.lesson.show_figure`) carries a description built here from the figure
itself: what it shows (title, axes), the key numbers of each series (first, last, smallest,
largest, with their positions) and the trend ("rises by 1 per step", "falls overall").

It reads the figure's data without validating or copying it, so it costs well under a
millisecond per chart and can run on every Step click. It accepts a `go.Figure` (also one built
from a dict with `_validate=False`, see `style.patched_figure`) or the figure dict itself, with
arrays as lists, numpy arrays or plotly's base64 typed arrays (`{"dtype", "bdata", "shape"}`).
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Sequence

import numpy as np

MAX_SERIES = 8  # series described one by one; more are summed up in one sentence
MAX_POSITIONS = 6  # positions listed for a set of equal bars ("at layers 1–3, 5–7, …")
_TAG = re.compile(r"<[^>]+>")
_UNIT = re.compile(r"^(?:[KMGT]i?B|B|bytes|[mµn]?s|W|[mk]?J|%|[KMGT]?B/s|tokens?/s|°C|[MG]Hz)$")
_DTYPES = {
    "f8": "<f8",
    "f4": "<f4",
    "i4": "<i4",
    "u4": "<u4",
    "i2": "<i2",
    "u2": "<u2",
    "i1": "i1",
    "u1": "u1",
}


def describe(fig) -> str:
    """The whole text alternative of a figure: title, axes, every series, marked lines, notes."""
    data, layout = _parts(fig)
    meta = layout.get("meta")
    own = meta.get("words") if isinstance(meta, dict) else None
    if own:  # a picture whose marks are a diagram, not data series, says what it shows itself
        return " ".join([describe_what(fig, kind="Diagram"), _text(own)])
    sentences = [describe_what(fig)]
    shown = [t for t in data if t.get("visible", True) is True]
    described = [s for s in (_trace_sentence(t, layout) for t in shown[:MAX_SERIES]) if s]
    described = list(dict.fromkeys(described))  # a legend entry repeated per panel is read once
    sentences += described
    if len(shown) > MAX_SERIES:
        sentences.append(f"{len(shown) - MAX_SERIES} more series are not described one by one.")
    lines = _marked_lines(layout)
    if lines:
        sentences.append(lines)
    notes = [_text(a.get("text", "")) for a in layout.get("annotations", ()) or ()]
    notes = [n for n in notes if n]
    if notes:
        sentences.append("Notes on the chart: " + "; ".join(notes[:4]) + ".")
    return " ".join(s if s.endswith((".", "!", "?", "…")) else s + "." for s in sentences if s)


def describe_what(fig, kind: str = "") -> str:
    """One sentence: the chart's title (or its kind) and what its axes measure; `kind` names it
    when the figure knows better (a diagram)."""
    data, layout = _parts(fig)
    title = chart_title(fig)
    drawn = [t for t in data if not _legend_only(t)]
    kinds = sorted({t.get("type", "scatter") for t in drawn})
    kind = kind or {"bar": "Bar chart", "heatmap": "Heatmap", "scatter": "Line chart"}.get(
        kinds[0] if len(kinds) == 1 else "", "Chart"
    )
    if kind == "Line chart" and all("lines" not in t.get("mode", "lines") for t in drawn):
        kind = "Scatter chart"
    x_title, y_title = _axis_title(layout, "x"), _axis_title(layout, "y")
    axes = []
    if x_title:
        axes.append(f"across: {x_title}")
    if y_title:
        axes.append(f"up: {y_title}")
    head = f"{kind}: {title}" if title else kind
    return head + (f" ({'; '.join(axes)})" if axes else "") + "."


# ---------------------------------------------------------------------------------------------
# one series
# ---------------------------------------------------------------------------------------------


def _trace_sentence(trace: dict, layout: dict) -> str:
    kind = trace.get("type", "scatter")
    name = _text(trace.get("name") or "") or _panel_title(trace, layout)
    if kind == "heatmap":
        return _heatmap_sentence(trace, name)
    if kind not in ("scatter", "bar", "scattergl"):
        return f"{name or 'A series'}: a {kind} trace."
    if kind != "bar" and _axes_hidden(trace, layout):  # a picture of marks (lesson 9's expert grid):
        marks = _numbers(trace.get("x"))  # where a mark sits means nothing, how many there are does
        count = 0 if marks is None else marks.size
        return f"{name}: {count} marked" if name else f"{count} marks"
    horizontal = kind == "bar" and trace.get("orientation") == "h"
    xs, ys = (trace.get("y"), trace.get("x")) if horizontal else (trace.get("x"), trace.get("y"))
    values = _numbers(ys)
    if values is None and _labels_hidden(layout, trace, "y"):  # a line across a bar whose name is not shown
        across = _numbers(xs)  # (the planner's usable memory)
        if across is not None and across.size and np.allclose(across, across[0]):
            return f"{name or 'a mark'}: a vertical line at {_num(across[0])}{_unit_hint(layout, trace, 'x')}"
    if values is None and ys is not None and len(ys) and xs is not None:  # marks on category axes
        places = [f"{y} at {x}" for x, y in zip(_labels(xs, len(ys)), _labels(ys, len(ys)), strict=True)]
        return f"{name or 'marks'}: {len(places)} marked, {_list(places)}"
    if values is None or not np.isfinite(values).any():
        return f"Legend key: {name}" if name else ""
    positions = _labels(xs, len(values))
    keep = np.isfinite(values)
    printed = _printed(trace, keep) if kind == "bar" else None
    values, positions = values[keep], [p for p, k in zip(positions, keep, strict=True) if k]
    base = _numbers(trace.get("base"))
    stacked = kind == "bar" and base is not None and base.size == keep.size  # stacked on another bar
    if stacked:
        values = values + np.nan_to_num(base[keep])
    label = name or ("bars" if kind == "bar" else "the line")
    if stacked:  # its numbers are the stack's top, not its own part: say so (lesson 8's "3.8 GiB")
        label += " (stacked on the bars below it; the stack's top)"
    suffix = _unit_hint(layout, trace, "x" if horizontal else "y")
    if values.size == 1:
        said = printed[0] if printed else f"{_num(values[0])}{suffix}"
        hidden = _labels_hidden(layout, trace, "y" if horizontal else "x")
        return f"{label}: {said}" + ("" if hidden else f" at {positions[0]}")
    if kind != "bar" and len(set(positions)) == 1:  # a line drawn straight up: a marker, not a series
        return f"{label}: a vertical line at {positions[0]}"
    if kind == "bar" and np.allclose(values, values[0]):
        axis = layout.get("xaxis" if horizontal else "yaxis", {}) or {}
        size = "" if axis.get("visible") is False else f" of {_num(values[0])}{suffix}"
        return f"{label}: {values.size} bars{size}, at {_positions(positions)}"
    if kind == "bar":
        return _bar_sentence(label, values, positions, suffix, printed)
    return _line_sentence(label, values, positions, suffix)


def _printed(trace: dict, keep: np.ndarray) -> list[str] | None:
    """The numbers printed on the bars ('100.0%', '8.0 KiB'), one per kept bar: what a sighted reader
    reads, so the words say the same; None when the bars carry no text of their own."""
    text = trace.get("text")
    if not isinstance(text, list | tuple) or len(text) != keep.size:
        return None
    shown = [_text(str(t)) for t, k in zip(text, keep, strict=True) if k]
    return shown if all(shown) else None


def _line_sentence(label: str, v: np.ndarray, pos: list[str], unit: str) -> str:
    words = (
        f"{label}: {v.size} points, from {_num(v[0])}{unit} at {pos[0]} to {_num(v[-1])}{unit} at {pos[-1]}"
    )
    words += f"; {_trend(v)}"
    lo, hi = int(np.argmin(v)), int(np.argmax(v))
    if hi not in (0, v.size - 1):
        words += f"; highest {_num(v[hi])} at {pos[hi]}"
    if lo not in (0, v.size - 1):
        words += f"; lowest {_num(v[lo])} at {pos[lo]}"
    return words


def _bar_sentence(
    label: str, v: np.ndarray, pos: list[str], unit: str, printed: list[str] | None = None
) -> str:
    """Bars in words; each value as printed on its bar when the bars carry numbers, else from the data."""
    said = printed or [f"{_num(x)}{unit}" for x in v]
    if v.size <= 6:  # few bars: read every one
        return f"{label}: " + ", ".join(f"{p} {s}" for p, s in zip(pos, said, strict=True))
    lo, hi = int(np.argmin(v)), int(np.argmax(v))
    return (
        f"{label}: {v.size} bars from {said[lo]} ({pos[lo]}) to {said[hi]} ({pos[hi]}); "
        f"first {pos[0]} {said[0]}, last {pos[-1]} {said[-1]}; {_trend(v)}"
    )


def _heatmap_sentence(trace: dict, name: str) -> str:
    z = _numbers(trace.get("z"), keep_shape=True)
    if z is None or z.size == 0:
        return f"{name or 'Heatmap'}: empty"
    z = np.atleast_2d(z)
    rows, cols = z.shape
    words = f"{name + ': ' if name else ''}a grid of {rows} rows × {cols} columns"
    if not np.isfinite(z).any():
        return words + ", nothing filled in yet"
    filled = np.isfinite(z)
    if not filled.all():
        rows_used = int(filled.any(axis=1).sum())
        used = f"{rows_used} of {rows} rows" if rows_used < rows else f"{int(filled.sum())} of {z.size} cells"
        words += f", {used} filled in"
    lo, hi = float(np.nanmin(z)), float(np.nanmax(z))
    if lo == hi:  # an empty board before the first write: one value everywhere, nothing stands out
        return words + f"; every cell is {_num(lo)}"
    words += f"; values from {_num(lo)} to {_num(hi)}"
    zmin, zmax = trace.get("zmin"), trace.get("zmax")
    if zmin is not None and zmax is not None:
        words += f" (colour scale fixed at {_num(zmin)} to {_num(zmax)})"
    r, c = np.unravel_index(int(np.nanargmax(np.abs(z))), z.shape)
    y_labels, x_labels = _labels(trace.get("y"), rows), _labels(trace.get("x"), cols)
    words += f"; strongest {_num(z[r, c])} at row {y_labels[r]}, column {x_labels[c]}"
    nonzero = int((np.abs(np.nan_to_num(z)) > 1e-9).sum())
    if nonzero < int(filled.sum()):
        words += f"; {nonzero} of {int(filled.sum())} cells non-zero"
    return words


def _trend(v: np.ndarray) -> str:
    d = np.diff(v)
    scale = max(float(np.max(np.abs(v))), 1e-12)
    tol = 1e-6 * scale
    if np.all(np.abs(d) <= tol):
        return "flat"
    if np.all(d >= -tol) or np.all(d <= tol):
        direction = "rises" if v[-1] > v[0] else "falls"
        if np.allclose(d, d[0], rtol=1e-3, atol=tol):
            return f"{direction} by {_num(abs(d[0]))} per step, steadily"
        ratio = v[1:] / np.where(v[:-1] == 0, np.nan, v[:-1])
        if np.all(np.isfinite(ratio)) and np.allclose(ratio, ratio[0], rtol=1e-3) and ratio[0] > 0:
            return f"{direction}, {_num(ratio[0])}× per step"
        return f"{direction} all the way"
    if abs(v[-1] - v[0]) <= 0.05 * scale:
        return "goes up and down, ending about where it started"
    return f"{'rises' if v[-1] > v[0] else 'falls'} overall, not steadily"


# ---------------------------------------------------------------------------------------------
# layout: lines drawn across the chart
# ---------------------------------------------------------------------------------------------


def _marked_lines(layout: dict) -> str:
    vertical, horizontal = [], []
    for shape in layout.get("shapes", ()) or ():
        if shape.get("type", "line") != "line":
            continue
        x0, x1, y0, y1 = (shape.get(k) for k in ("x0", "x1", "y0", "y1"))
        if x0 is not None and x0 == x1 and str(shape.get("xref", "x")).startswith("x"):
            vertical.append(x0)
        elif y0 is not None and y0 == y1 and str(shape.get("yref", "y")).startswith("y"):
            horizontal.append(y0)
    parts = []
    if vertical:
        parts.append(f"{len(vertical)} vertical line{'s' * (len(vertical) > 1)} at x = {_list(vertical)}")
    if horizontal:
        parts.append(
            f"{len(horizontal)} horizontal line{'s' * (len(horizontal) > 1)} at y = {_list(horizontal)}"
        )
    return "Marked: " + "; ".join(parts) if parts else ""


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def _parts(fig) -> tuple[list[dict], dict]:
    if isinstance(fig, dict):
        return list(fig.get("data", ())), dict(fig.get("layout", {}))
    # plotly keeps the figure as plain dicts in `_data` / `_layout`; reading them avoids
    # building and validating a trace object per series on every rerun
    return list(getattr(fig, "_data", None) or fig.to_dict()["data"]), dict(getattr(fig, "_layout", {}) or {})


def _panel_title(trace: dict, layout: dict) -> str:
    """The subplot title above a nameless trace's panel (make_subplots puts it in a paper annotation
    just above the panel): the title over the panel's columns nearest its top edge, so panels stacked
    one above the other get their own titles."""
    x_suffix = str(trace.get("xaxis", "x"))[1:]
    y_suffix = str(trace.get("yaxis", "y"))[1:]
    domain = (layout.get(f"xaxis{x_suffix}") or {}).get("domain")
    if not domain:
        return ""
    lo, hi = domain
    top = ((layout.get(f"yaxis{y_suffix}") or {}).get("domain") or [0.0, 1.0])[1]
    titles = [
        note
        for note in layout.get("annotations", ()) or ()
        if note.get("xref") == "paper"
        and isinstance(note.get("x"), int | float)
        and isinstance(note.get("y", 0), int | float)
        and lo <= note["x"] <= hi
        and top - 0.1 <= note.get("y", 0) <= top + 0.15
    ]
    if not titles:
        return ""
    return _text(min(titles, key=lambda note: abs(note.get("y", 0) - top)).get("text", ""))


def _legend_only(trace: dict) -> bool:
    """A trace drawn only to put an entry in the legend (x=[None], y=[None])."""
    values = _numbers(trace.get("z") if trace.get("type") == "heatmap" else trace.get("y"))
    return values is not None and not np.isfinite(values).any()


def chart_title(fig) -> str:
    """The figure's title as plain words ('' for none); also where the page moved it to show it
    as text above the chart (`layout.meta.title`, ui.lesson.untitled)."""
    layout = _parts(fig)[1]
    meta = layout.get("meta")
    moved = meta.get("title", "") if isinstance(meta, dict) else ""
    return _text(_title_of(layout.get("title")) or moved)


def _title_of(title) -> str:
    if isinstance(title, dict):
        return title.get("text", "") or ""
    return title or ""


def _labels_hidden(layout: dict, trace: dict, axis: str) -> bool:
    """True when the trace's `axis` shows no tick labels: its positions are not named on the chart."""
    ref = str(trace.get(f"{axis}axis", axis))
    spec = layout.get(f"{axis}axis{ref[1:]}", {}) or {}
    return spec.get("showticklabels") is False or spec.get("visible") is False


def _axes_hidden(trace: dict, layout: dict) -> bool:
    """True when both axes a trace is drawn on are hidden: its positions carry no values."""
    refs = (trace.get("xaxis", "x"), trace.get("yaxis", "y"))
    specs = [layout.get(f"{ref[0]}axis{ref[1:]}", {}) or {} for ref in refs]
    return all(spec.get("visible") is False for spec in specs)


def _axis_title(layout: dict, axis: str) -> str:
    spec = layout.get(f"{axis}axis", {}) or {}
    if spec.get("visible") is False:
        return ""
    words = _text(_title_of(spec.get("title")))
    shared = spec.get("matches")  # panels sharing one axis (make_subplots) title it under the bottom one
    if not words and isinstance(shared, str) and shared[1:] and shared[0] == axis:
        words = _text(_title_of((layout.get(f"{axis}axis{shared[1:]}", {}) or {}).get("title")))
    if spec.get("type") == "log" and words and "log" not in words:
        words += ", log scale"
    return words


def _unit_hint(layout: dict, trace: dict, axis: str) -> str:
    """' GiB' when the value axis title ends in a unit in brackets: 'memory (GiB)'."""
    ref = trace.get(f"{axis}axis", axis)
    spec = layout.get(f"{axis}axis{ref[1:]}", {}) or {}
    found = re.search(r"\(([^()]{1,12})\)\s*$", _text(_title_of(spec.get("title"))))
    return " " + found.group(1).strip() if found and _UNIT.match(found.group(1).strip()) else ""


def _numbers(values, keep_shape: bool = False) -> np.ndarray | None:
    """Any plotly array (list, tuple, numpy, base64 typed array) as float64; None if not numeric."""
    if values is None:
        return None
    if isinstance(values, dict) and "bdata" in values:
        dtype = np.dtype(_DTYPES.get(values.get("dtype", "f8"), "<f8"))
        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=dtype)
        shape = values.get("shape")
        if shape:
            dims = [int(s) for s in str(shape).split(",")] if isinstance(shape, str) else list(shape)
            array = array.reshape(dims)
        return array.astype(np.float64)
    try:
        array = np.asarray(values, dtype=np.float64) if not isinstance(values, str) else None
    except (TypeError, ValueError):
        try:  # ragged rows or None holes: fill them with NaN
            array = np.array([[np.nan if x is None else x for x in row] for row in values], dtype=np.float64)
        except (TypeError, ValueError):
            return None
    if array is None:
        return None
    return array if keep_shape else array.reshape(-1)


def _labels(values, n: int) -> list[str]:
    """Positions as a reader says them: the axis labels, else 1-based item numbers."""
    if values is None:
        return [str(i) for i in range(n)]
    numbers = _numbers(values)
    if numbers is not None and numbers.size == n:
        return [_num(x) for x in numbers]
    items = list(values)[:n]
    return [_text(str(x)) for x in items] + [str(i) for i in range(len(items), n)]


def _positions(labels: Sequence[str]) -> str:
    """'1–3, 5–7, 9 …' for integer positions; else the first few labels."""
    try:
        ints = [int(float(p.replace(",", ""))) for p in labels]
    except ValueError:
        return _list(labels)
    runs: list[list[int]] = []
    for i in ints:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    parts = [f"{a}–{b}" if b > a else f"{a}" for a, b in runs]
    return ", ".join(parts[:MAX_POSITIONS]) + (", …" if len(parts) > MAX_POSITIONS else "")


def _list(items: Sequence) -> str:
    shown = [_num(x) if isinstance(x, int | float) else str(x) for x in items[:MAX_POSITIONS]]
    return ", ".join(shown) + (", …" if len(items) > MAX_POSITIONS else "")


def _num(v) -> str:
    """3 significant digits, thousands separators, k/M/G for large numbers: 1,536 · 0.125 · 2.8T."""
    v = float(v)
    if not math.isfinite(v):
        return "none"
    if v == int(v) and abs(v) < 1e6:
        return f"{int(v):,}"
    for size, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1.0, "")):
        if abs(v) >= size:
            scaled = v / size
            return (f"{scaled:,.0f}" if abs(scaled) >= 100 else f"{scaled:.3g}") + suffix
    return f"{v:.3g}"


def _text(words: str) -> str:
    """Plotly label markup as plain words: <br> → space, tags dropped, entities decoded."""
    words = _TAG.sub(" ", str(words).replace("<br>", " "))
    return re.sub(r"\s+", " ", html.unescape(words)).strip()
