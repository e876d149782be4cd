"""Reading a plotly figure dict for its words: values as numbers, positions as labels, markup as
plain words, and what its axes show (`core.figures.describe` says them in sentences).

Arrays may be lists, numpy arrays or plotly's base64 typed arrays (`{"dtype", "bdata", "shape"}`).
The course describes a figure's dict before it is encoded (`ui.charts.show_figure`, numpy arrays as
they are), so it never decodes its own; typed arrays are read for a spec read back from the wire,
as the tests and the browser checks compare a chart's words with the chart a browser got.
"""

from __future__ import annotations

import base64
import html
import math
import re
from collections.abc import Sequence

import numpy as np

from core.i18n import _

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


def panel_title(trace: dict, layout: dict) -> str:
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
    return words_of(min(titles, key=lambda note: abs(note.get("y", 0) - top)).get("text", ""))


def legend_only(trace: dict) -> bool:
    """A trace drawn only to put an entry in the legend (x=[None], y=[None])."""
    values = as_numbers(trace.get("z") if trace.get("type") == "heatmap" else trace.get("y"))
    return values is not None and not np.isfinite(values).any()


def title_of(title) -> str:
    if isinstance(title, dict):
        return title.get("text", "") or ""
    return title or ""


def labels_hidden(layout: dict, trace: dict, axis: str) -> bool:
    """True when the trace's `axis` shows no tick labels: its positions are not named on the chart."""
    ref = str(trace.get(f"{axis}axis", axis))
    spec = layout.get(f"{axis}axis{ref[1:]}", {}) or {}
    return spec.get("showticklabels") is False or spec.get("visible") is False


def axes_hidden(trace: dict, layout: dict) -> bool:
    """True when both axes a trace is drawn on are hidden: its positions carry no values."""
    refs = (trace.get("xaxis", "x"), trace.get("yaxis", "y"))
    specs = [layout.get(f"{ref[0]}axis{ref[1:]}", {}) or {} for ref in refs]
    return all(spec.get("visible") is False for spec in specs)


def axis_title(layout: dict, axis: str) -> str:
    spec = layout.get(f"{axis}axis", {}) or {}
    if spec.get("visible") is False:
        return ""
    words = words_of(title_of(spec.get("title")))
    shared = spec.get("matches")  # panels sharing one axis (make_subplots) title it under the bottom one
    if not words and isinstance(shared, str) and shared[1:] and shared[0] == axis:
        words = words_of(title_of((layout.get(f"{axis}axis{shared[1:]}", {}) or {}).get("title")))
    if spec.get("type") == "log" and words and "log" not in words and "対数" not in words:
        words = _("{title}, log scale").format(title=words)
    return words


def unit_hint(layout: dict, trace: dict, axis: str) -> str:
    """' GiB' when the value axis title ends in a unit in brackets: 'memory (GiB)'."""
    ref = trace.get(f"{axis}axis", axis)
    spec = layout.get(f"{axis}axis{ref[1:]}", {}) or {}
    found = re.search(r"\(([^()]{1,12})\)\s*$", words_of(title_of(spec.get("title"))))
    return " " + found.group(1).strip() if found and _UNIT.match(found.group(1).strip()) else ""


def as_numbers(values, keep_shape: bool = False) -> np.ndarray | None:
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


def as_labels(values, n: int) -> list[str]:
    """Positions as a reader says them: the axis labels, else 1-based item numbers."""
    if values is None:
        return [str(i) for i in range(n)]
    numbers = as_numbers(values)
    if numbers is not None and numbers.size == n:
        return [num(x) for x in numbers]
    items = list(values)[:n]
    return [words_of(str(x)) for x in items] + [str(i) for i in range(len(items), n)]


def positions_said(labels: Sequence[str]) -> str:
    """'1–3, 5–7, 9 …' for integer positions; else the first few labels."""
    try:
        ints = [int(float(p.replace(",", ""))) for p in labels]
    except ValueError:
        return listed(labels)
    runs: list[list[int]] = []
    for i in ints:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    parts = [f"{a}–{b}" if b > a else f"{a}" for a, b in runs]
    return _(", ").join(parts[:MAX_POSITIONS]) + (_(", ") + "…" if len(parts) > MAX_POSITIONS else "")


def listed(items: Sequence) -> str:
    shown = [num(x) if isinstance(x, int | float) else str(x) for x in items[:MAX_POSITIONS]]
    return _(", ").join(shown) + (_(", ") + "…" if len(items) > MAX_POSITIONS else "")


def num(v) -> str:
    """3 significant digits, thousands separators, k/M/G for large numbers: 1,536 · 0.125 · 2.8T."""
    v = float(v)
    if not math.isfinite(v):
        return _("none")
    if v == int(v) and abs(v) < 1e6:
        return f"{int(v):,}"
    for size, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1.0, "")):
        if abs(v) >= size:
            scaled = v / size
            return (f"{scaled:,.0f}" if abs(scaled) >= 100 else f"{scaled:.3g}") + suffix
    return f"{v:.3g}"


def words_of(words: str) -> str:
    """Plotly label markup as plain words: <br> → space, tags dropped, entities decoded."""
    words = _TAG.sub(" ", str(words).replace("<br>", " "))
    return re.sub(r"\s+", " ", html.unescape(words)).strip()
