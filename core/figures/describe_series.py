"""One series of a chart in words: a line's first, last, highest and lowest points and its trend, a set
of bars read one by one or summed up, a heatmap's size, range and strongest cell.

Read from the figure dict with `core.figures.describe_values`; `core.figures.describe` puts the
sentences together.
"""

from __future__ import annotations

import numpy as np

from core.figures.describe_values import (
    as_labels,
    as_numbers,
    axes_hidden,
    labels_hidden,
    listed,
    num,
    panel_title,
    positions_said,
    unit_hint,
    words_of,
)
from core.i18n import _


def trace_sentence(trace: dict, layout: dict) -> str:
    kind = trace.get("type", "scatter")
    name = words_of(trace.get("name") or "") or panel_title(trace, layout)
    if kind == "heatmap":
        return _heatmap_sentence(trace, name)
    if kind not in ("scatter", "bar", "scattergl"):
        return _("{name}: a {kind} trace.").format(name=name or _("A series"), kind=kind)
    if kind != "bar" and axes_hidden(trace, layout):  # a picture of marks (Experts' expert grid):
        marks = as_numbers(trace.get("x"))  # where a mark sits means nothing, how many there are does
        count = 0 if marks is None else marks.size
        return (
            _("{name}: {count} marked").format(name=name, count=count)
            if name
            else _("{count} marks").format(count=count)
        )
    horizontal = kind == "bar" and trace.get("orientation") == "h"
    xs, ys = (trace.get("y"), trace.get("x")) if horizontal else (trace.get("x"), trace.get("y"))
    values = as_numbers(ys)
    if values is None and labels_hidden(layout, trace, "y"):  # a line across a bar whose name is not shown
        across = as_numbers(xs)  # (the planner's usable memory)
        if across is not None and across.size and np.allclose(across, across[0]):
            return _("{name}: a vertical line at {value}").format(
                name=name or _("a mark"), value=num(across[0]) + unit_hint(layout, trace, "x")
            )
    if values is None and ys is not None and len(ys) and xs is not None:  # marks on category axes
        places = [
            _("{y} at {x}").format(y=y, x=x)
            for x, y in zip(as_labels(xs, len(ys)), as_labels(ys, len(ys)), strict=True)
        ]
        return _("{name}: {n} marked, {places}").format(
            name=name or _("marks"), n=len(places), places=listed(places)
        )
    if values is None or not np.isfinite(values).any():
        return _("Legend key: {name}").format(name=name) if name else ""
    positions = as_labels(xs, len(values))
    keep = np.isfinite(values)
    printed = _printed(trace, keep) if kind == "bar" else None
    values, positions = values[keep], [p for p, k in zip(positions, keep, strict=True) if k]
    base = as_numbers(trace.get("base"))
    stacked = kind == "bar" and base is not None and base.size == keep.size  # stacked on another bar
    if stacked:
        values = values + np.nan_to_num(base[keep])
    label = name or (_("bars") if kind == "bar" else _("the line"))
    if stacked:  # its numbers are the stack's top, not its own part: say so (Kimi K3's "3.8 GiB")
        label = _("{label} (stacked on the bars below it; the stack's top)").format(label=label)
    suffix = unit_hint(layout, trace, "x" if horizontal else "y")
    if values.size == 1:
        said = printed[0] if printed else f"{num(values[0])}{suffix}"
        hidden = labels_hidden(layout, trace, "y" if horizontal else "x")
        if hidden:
            return _("{label}: {value}").format(label=label, value=said)
        return _("{label}: {value} at {position}").format(label=label, value=said, position=positions[0])
    if kind != "bar" and len(set(positions)) == 1:  # a line drawn straight up: a marker, not a series
        return _("{name}: a vertical line at {value}").format(name=label, value=positions[0])
    if kind == "bar" and np.allclose(values, values[0]):
        axis = layout.get("xaxis" if horizontal else "yaxis", {}) or {}
        if axis.get("visible") is False:
            return _("{label}: {n} bars, at {positions}").format(
                label=label, n=values.size, positions=positions_said(positions)
            )
        return _("{label}: {n} bars of {size}, at {positions}").format(
            label=label, n=values.size, size=f"{num(values[0])}{suffix}", positions=positions_said(positions)
        )
    if kind == "bar":
        return _bar_sentence(label, values, positions, suffix, printed)
    return _line_sentence(label, values, positions, suffix)


def _printed(trace: dict, keep: np.ndarray) -> list[str] | None:
    """The numbers printed on the bars ('100.0%', '8.0 KiB'), one per kept bar: what a sighted reader
    reads, so the words say the same; None when the bars carry no text of their own."""
    text = trace.get("text")
    if not isinstance(text, list | tuple) or len(text) != keep.size:
        return None
    shown = [words_of(str(t)) for t, k in zip(text, keep, strict=True) if k]
    return shown if all(shown) else None


def _line_sentence(label: str, v: np.ndarray, pos: list[str], unit: str) -> str:
    words = _("{label}: {n} points, from {first} at {first_at} to {last} at {last_at}").format(
        label=label,
        n=v.size,
        first=f"{num(v[0])}{unit}",
        first_at=pos[0],
        last=f"{num(v[-1])}{unit}",
        last_at=pos[-1],
    )
    words += _("; {trend}").format(trend=_trend(v))
    lo, hi = int(np.argmin(v)), int(np.argmax(v))
    if hi not in (0, v.size - 1):
        words += _("; highest {value} at {position}").format(value=num(v[hi]), position=pos[hi])
    if lo not in (0, v.size - 1):
        words += _("; lowest {value} at {position}").format(value=num(v[lo]), position=pos[lo])
    return words


def _bar_sentence(
    label: str, v: np.ndarray, pos: list[str], unit: str, printed: list[str] | None = None
) -> str:
    """Bars in words; each value as printed on its bar when the bars carry numbers, else from the data."""
    said = printed or [f"{num(x)}{unit}" for x in v]
    if v.size <= 6:  # few bars: read every one
        bars = _(", ").join(
            _("{position} {value}").format(position=p, value=s) for p, s in zip(pos, said, strict=True)
        )
        return _("{label}: {value}").format(label=label, value=bars)
    lo, hi = int(np.argmin(v)), int(np.argmax(v))
    return _(
        "{label}: {n} bars from {low} ({low_at}) to {high} ({high_at}); first {first_at} {first}, last {last_at} "
        "{last}; {trend}"
    ).format(
        label=label,
        n=v.size,
        low=said[lo],
        low_at=pos[lo],
        high=said[hi],
        high_at=pos[hi],
        first_at=pos[0],
        first=said[0],
        last_at=pos[-1],
        last=said[-1],
        trend=_trend(v),
    )


def _heatmap_sentence(trace: dict, name: str) -> str:
    z = as_numbers(trace.get("z"), keep_shape=True)
    if z is None or z.size == 0:
        return _("{name}: empty").format(name=name or _("Heatmap"))
    z = np.atleast_2d(z)
    rows, cols = z.shape
    if name:
        words = _("{name}: a grid of {rows} rows × {cols} columns").format(name=name, rows=rows, cols=cols)
    else:
        words = _("a grid of {rows} rows × {cols} columns").format(rows=rows, cols=cols)
    if not np.isfinite(z).any():
        return words + _(", nothing filled in yet")
    filled = np.isfinite(z)
    if not filled.all():
        rows_used = int(filled.any(axis=1).sum())
        if rows_used < rows:
            words += _(", {used} of {rows} rows filled in").format(used=rows_used, rows=rows)
        else:
            words += _(", {used} of {cells} cells filled in").format(used=int(filled.sum()), cells=z.size)
    lo, hi = float(np.nanmin(z)), float(np.nanmax(z))
    if lo == hi:  # an empty board before the first write: one value everywhere, nothing stands out
        return words + _("; every cell is {value}").format(value=num(lo))
    words += _("; values from {low} to {high}").format(low=num(lo), high=num(hi))
    zmin, zmax = trace.get("zmin"), trace.get("zmax")
    if zmin is not None and zmax is not None:
        words += _(" (colour scale fixed at {low} to {high})").format(low=num(zmin), high=num(zmax))
    r, c = np.unravel_index(int(np.nanargmax(np.abs(z))), z.shape)
    y_labels, x_labels = as_labels(trace.get("y"), rows), as_labels(trace.get("x"), cols)
    words += _("; strongest {value} at row {row}, column {column}").format(
        value=num(z[r, c]), row=y_labels[r], column=x_labels[c]
    )
    nonzero = int((np.abs(np.nan_to_num(z)) > 1e-9).sum())
    if nonzero < int(filled.sum()):
        words += _("; {nonzero} of {cells} cells non-zero").format(nonzero=nonzero, cells=int(filled.sum()))
    return words


def _trend(v: np.ndarray) -> str:
    d = np.diff(v)
    scale = max(float(np.max(np.abs(v))), 1e-12)
    tol = 1e-6 * scale
    if np.all(np.abs(d) <= tol):
        return _("flat")
    rises = v[-1] > v[0]
    if np.all(d >= -tol) or np.all(d <= tol):
        if np.allclose(d, d[0], rtol=1e-3, atol=tol):
            said = (
                _("rises by {step} per step, steadily") if rises else _("falls by {step} per step, steadily")
            )
            return said.format(step=num(abs(d[0])))
        ratio = v[1:] / np.where(v[:-1] == 0, np.nan, v[:-1])
        if np.all(np.isfinite(ratio)) and np.allclose(ratio, ratio[0], rtol=1e-3) and ratio[0] > 0:
            said = _("rises, {ratio}× per step") if rises else _("falls, {ratio}× per step")
            return said.format(ratio=num(ratio[0]))
        return _("rises all the way") if rises else _("falls all the way")
    if abs(v[-1] - v[0]) <= 0.05 * scale:
        return _("goes up and down, ending about where it started")
    return _("rises overall, not steadily") if rises else _("falls overall, not steadily")
