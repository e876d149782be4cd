"""Charts in words: a short text alternative computed from any plotly figure's own data.

A screen reader cannot read a plotly chart, and a reader who cannot tell two colours apart cannot
read a legend by colour (WCAG 2.1, 1.1.1 non-text content and 1.4.1 use of colour). So every chart
the course draws (`ui.charts.show_figure`) carries a description built here from the figure
itself: what it shows (title, axes), the key numbers of each series (first, last, smallest,
largest, with their positions) and the trend ("rises by 1 per step", "falls overall").

It reads the figure's data without validating or copying it, so it costs well under a
millisecond per chart and can run on every Step click. It accepts the figure dict the page sends,
before its arrays are encoded (core/figures/figure_dict.py), or a `go.Figure`. One series is put
in words by `core.figures.describe_series`, from values read by `core.figures.describe_values`.
"""

from __future__ import annotations

from core.figures.describe_series import trace_sentence
from core.figures.describe_values import axis_title, legend_only, listed, title_of, words_of
from core.i18n import N_, _, full_stop, ngettext, run_on

MAX_SERIES = 8  # series described one by one; more are summed up in one sentence
_KINDS = {"bar": N_("Bar chart"), "heatmap": N_("Heatmap"), "scatter": N_("Line chart")}
CHART, SCATTER, DIAGRAM = N_("Chart"), N_("Scatter chart"), N_("Diagram")  # translated where shown


def describe(fig) -> str:
    """The whole text alternative of a figure: title, axes, every series, marked lines, notes."""
    data, layout = _parts(fig)
    meta = layout.get("meta")
    own = meta.get("words") if isinstance(meta, dict) else None
    if own:  # a picture whose marks are a diagram, not data series, says what it shows itself
        return run_on(describe_what(fig, kind=DIAGRAM), words_of(own))
    sentences = [describe_what(fig)]
    shown = [t for t in data if t.get("visible", True) is True]
    described = [s for s in (trace_sentence(t, layout) for t in shown[:MAX_SERIES]) if s]
    described = list(dict.fromkeys(described))  # a legend entry repeated per panel is read once
    sentences += described
    if len(shown) > MAX_SERIES:
        sentences.append(_("{n} more series are not described one by one.").format(n=len(shown) - MAX_SERIES))
    lines = _marked_lines(layout)
    if lines:
        sentences.append(lines)
    notes = [words_of(a.get("text", "")) for a in layout.get("annotations", ()) or ()]
    notes = [n for n in notes if n]
    if notes:
        sentences.append(_("Notes on the chart: {notes}.").format(notes=_("; ").join(notes[:4])))
    return run_on(*(full_stop(s) for s in sentences))


def describe_what(fig, kind: str = "") -> str:
    """One sentence: the chart's title (or its kind) and what its axes measure; `kind` (an English
    kind, such as DIAGRAM) names it when the figure knows better. Said in the reader's language."""
    data, layout = _parts(fig)
    title = chart_title(fig)
    drawn = [t for t in data if not legend_only(t)]
    kinds = sorted({t.get("type", "scatter") for t in drawn})
    kind = kind or _KINDS.get(kinds[0] if len(kinds) == 1 else "", CHART)
    if kind == _KINDS["scatter"] and all("lines" not in t.get("mode", "lines") for t in drawn):
        kind = SCATTER
    x_title, y_title = axis_title(layout, "x"), axis_title(layout, "y")
    axes = []
    if x_title:
        axes.append(_("across: {title}").format(title=x_title))
    if y_title:
        axes.append(_("up: {title}").format(title=y_title))
    head = _("{kind}: {title}").format(kind=_(kind), title=title) if title else _(kind)
    return full_stop(head + (_(" ({axes})").format(axes=_("; ").join(axes)) if axes else ""))


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
        said = ngettext(
            "{n} vertical line at x = {where}", "{n} vertical lines at x = {where}", len(vertical)
        )
        parts.append(said.format(n=len(vertical), where=listed(vertical)))
    if horizontal:
        said = ngettext(
            "{n} horizontal line at y = {where}", "{n} horizontal lines at y = {where}", len(horizontal)
        )
        parts.append(said.format(n=len(horizontal), where=listed(horizontal)))
    return _("Marked: {lines}").format(lines=_("; ").join(parts)) if parts else ""


def _parts(fig) -> tuple[list[dict], dict]:
    if isinstance(fig, dict):
        return list(fig.get("data", ())), dict(fig.get("layout", {}))
    # a go.Figure keeps its validated traces and layout as plain dicts in `_data` / `_layout`
    # (arrays as numpy): reading them copies and encodes nothing
    return list(fig._data), dict(fig._layout)


def chart_title(fig) -> str:
    """The figure's title as plain words ('' for none); also where the page moved it to show it
    as text above the chart (`layout.meta.title`, core.figures.figure_dict.untitled)."""
    layout = _parts(fig)[1]
    meta = layout.get("meta")
    moved = meta.get("title", "") if isinstance(meta, dict) else ""
    return words_of(title_of(layout.get("title")) or moved)
