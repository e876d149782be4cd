"""A figure as one plain dict, from the builder to the browser: read, patched per step, encoded once.

A picture is built and validated as a `go.Figure` once (per run, per language); from then on it
travels as its plain dict — `{"data": [trace dicts], "layout": {…}}` with numpy arrays as they are —
because a Step only swaps a few arrays and labels, and building a Figure again costs milliseconds.
The chart's words (`core.figures.describe`) are read from that dict, and only what is sent to the
browser is `encoded`: numpy arrays become plotly's base64 typed arrays, the template keeps only the
trace types drawn, and the title moves out of the plot (`untitled`). Nothing here mutates its input:
dicts shared read-only through a cache (`ui.stepped`) stay as they are.

    base = as_dict(build_figure(run))                    # once per run
    step = patched(base, {0: {"z": grid}}, {"title": {"text": "step 3"}})   # per step
    sent = encoded(slim(untitled(step)))                 # what the browser gets
"""

from __future__ import annotations

import base64

import numpy as np
import plotly.graph_objects as go
from _plotly_utils.utils import plotlyjsShortTypes

# top margin of a titled chart (style.base_layout): the title above, a horizontal legend under it
TITLE_MARGIN = 60
# keys whose values plotly never encodes (`_plotly_utils.utils.is_skipped_key`): an axis range stays a pair
_NOT_ENCODED = frozenset({"geojson", "layer", "layers", "range"})


def as_dict(fig: go.Figure | dict) -> dict:
    """A built figure as its plain dict (arrays kept as numpy, not encoded); a dict as it is.

    The same properties as `fig.to_dict()` — the figure's validated traces and layout, template
    included — without its deep copy and base64 pass: the dict shares the figure's values and is
    read-only."""
    if isinstance(fig, dict):
        return fig
    return {"data": [trace.to_plotly_json() for trace in fig.data], "layout": fig.layout.to_plotly_json()}


def patched(base: dict, traces: dict[int, dict] | None = None, layout: dict | None = None) -> dict:
    """A copy of a figure dict with some trace and layout properties replaced.

    `traces` maps a trace's index to its new properties; layout values that are dicts are merged one
    level deep (e.g. `{"yaxis": {"tickvals": …}}`). Only the dicts on the path are copied: the base's
    arrays are shared, so a step costs what it changes."""
    traces, layout = traces or {}, layout or {}
    data = [{**trace, **traces.get(i, {})} for i, trace in enumerate(base["data"])]
    merged = dict(base["layout"])
    for name, value in layout.items():
        old = merged.get(name)
        merged[name] = {**old, **value} if isinstance(value, dict) and isinstance(old, dict) else value
    return {**base, "data": data, "layout": merged}


def encoded(spec: dict) -> dict:
    """The figure dict as plotly sends it: every numpy array as a base64 typed array (`{"dtype",
    "bdata", "shape"}`, what `go.Figure.to_dict()` gives), copied where an array sits, shared
    elsewhere. A validated figure holds its arrays as numpy (plotly's validators turn pandas and
    the like into numpy), and the template is plotly's own JSON, so only numpy is looked for and the
    template is not walked."""
    layout = spec.get("layout", {})
    sent = {name: value if name == "template" else _encoded(value) for name, value in layout.items()}
    return {**spec, "data": [_encoded(trace) for trace in spec.get("data", ())], "layout": sent}


def _encoded(value):
    if isinstance(value, np.ndarray):
        return _typed_array(value)
    if isinstance(value, dict):
        items = {key: item if key in _NOT_ENCODED else _encoded(item) for key, item in value.items()}
        return value if all(items[key] is value[key] for key in value) else items
    if isinstance(value, list | tuple):
        items = [_encoded(item) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else type(value)(items)
    return value


def _typed_array(array: np.ndarray):
    """plotly's typed array for a numpy array (`_plotly_utils.utils.to_typed_array_spec`, less its
    array-library detour, a third of a millisecond an array): 64-bit integers narrowed to the
    smallest type that holds them, as plotly.js has no 64-bit integer arrays; an empty array or
    one of another type (strings, dates) stays as it is, written out as a list."""
    if array.size == 0:
        return array
    if array.dtype in (np.int64, np.uint64):
        lo, hi = array.min(), array.max()
        kinds = ("int8", "int16", "int32") if array.dtype == np.int64 else ("uint8", "uint16", "uint32")
        fits = [kind for kind in kinds if np.iinfo(kind).min <= lo and hi <= np.iinfo(kind).max]
        if not fits:
            return array
        array = array.astype(fits[0])
    short = plotlyjsShortTypes.get(str(array.dtype))
    if short is None:
        return array
    spec = {"dtype": short, "bdata": base64.b64encode(np.ascontiguousarray(array)).decode("ascii")}
    if array.ndim > 1:
        spec["shape"] = str(array.shape)[1:-1]
    return spec


def slim(spec: dict) -> dict:
    """The figure dict without the parts of its template no trace can use: the template carries
    defaults for every trace type (~2 kB), plotly.js reads only those of the types drawn."""
    template = spec.get("layout", {}).get("template")
    if isinstance(template, dict) and isinstance(template.get("data"), dict):
        kinds = {trace.get("type", "scatter") for trace in spec.get("data", ())}
        data = {kind: styles for kind, styles in template["data"].items() if kind in kinds}
        spec = {**spec, "layout": {**spec["layout"], "template": {**template, "data": data}}}
    return spec


def untitled(spec: dict) -> dict:
    """The figure dict without its title (shown as text above the chart), the top margin that held
    it given back to the plot (plotly still widens a margin a legend needs); the title is kept in
    `layout.meta` so the chart's words (`core.figures.describe`) still name it."""
    layout = spec.get("layout", {})
    title = layout.get("title")
    if not (isinstance(title, dict) and title.get("text")):
        return spec
    margin = dict(layout.get("margin", {}))
    margin["t"] = max(20, margin.get("t", TITLE_MARGIN) - (TITLE_MARGIN - 20))
    meta = layout.get("meta") if isinstance(layout.get("meta"), dict) else {}
    moved = {"title": {**title, "text": ""}, "margin": margin, "meta": {**meta, "title": title["text"]}}
    return {**spec, "layout": {**layout, **moved}}
