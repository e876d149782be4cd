"""Collisions: more pairs than board rows, and the readback blurs."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core import board as bd
from core.figures import board as fb
from core.figures import board_charts as fbc
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, show_figure, still_missing
from ui.recall_panel import render_trained_recall

KEY_CHOICES = {"random": "random unit vectors", "orthogonal": "orthogonal while they last"}
SEEDS = (0, 1, 2, 3, 4, 5)


@st.cache_data(show_spinner=False)
def stream(n: int, d: int, keys: str, rule: str) -> bd.BoardRun:
    return bd.write_stream(bd.word_stream(n), rule, d=d, keys=keys)


@st.cache_data(show_spinner="Writing boards of every size …")
def curves(d: int) -> tuple[list[int], dict[str, np.ndarray]]:
    ns = bd.pair_counts(d, 17)
    out = {
        "linear/random": bd.recall_curve("linear", d, ns, SEEDS, keys="random"),
        "linear/orthogonal": bd.recall_curve("linear", d, ns, SEEDS, keys="orthogonal"),
        "softmax/random": bd.recall_curve("softmax", d, ns, SEEDS, keys="random"),
    }
    return ns, out


@st.cache_resource(show_spinner=False, max_entries=256)
def blur_view(n: int, d: int, keys: str) -> tuple[float, float, go.Figure]:
    """Recall numbers and the went-in / comes-back picture, built once per setting."""
    run = stream(n, d, keys, "linear")
    rec = run.recall()
    fig = fb.compare_readbacks_figure(
        {
            "written": run.values[rec.target],  # short titles: two panels share a phone's width
            f"read back: {rec.accuracy:.0%} right": rec.readback,  # breaks after the colon
        },
        rec.checked_names(),
        value_names=run.value_names,
        targets=rec.target,
    )
    return rec.accuracy, rec.mean_error(rec.names), fig


@st.cache_resource(show_spinner=False, max_entries=64)
def curves_view(d: int) -> tuple[list[int], dict[str, np.ndarray], go.Figure]:
    """The recall-vs-pairs curves and their figure, built once per board size."""
    ns, acc = curves(d)
    fig = fbc.recall_curves_figure(
        ns,
        {
            "linear attention, orthogonal keys": (acc["linear/orthogonal"], "linear", "solid"),
            "linear attention, random keys": (acc["linear/random"], "linear", "dot"),
            "softmax attention (keeps every pair)": (acc["softmax/random"], "attention", "solid"),
        },
        d,
        title=f"a board with d = {d} rows",
    )
    return ns, acc, fig


lesson_header("collisions")
new_words("mqar", "hybrid", here="collisions")
problem(
    "Linear attention keeps one board of fixed size, so memory no longer grows. But every pair is "
    "*added* onto the same few rows. Sooner or later two pairs have to share rows — and then "
    "reading one key also brings back a bit of the other."
)

st.header("1 · Write n pairs, read them back")
st.markdown(
    "The board has **d rows** (the key size). A key is a direction among those d rows; reading key "
    "*j* returns its own value **plus** every other value, weighted by how much that other key "
    "overlaps key *j*. That leak is a **collision**. Orthogonal keys (directions at right angles) do "
    "not overlap at all — but only d of them exist. Random keys overlap a little from the start."
)
c1, c2, c3 = st.columns(3)
d = c1.slider("board rows d (key size)", 2, 32, 8, key="co_d")
n = c2.slider("pairs written n", 1, 64, 12, key="co_n")
keys = c3.radio("keys", list(KEY_CHOICES), format_func=KEY_CHOICES.get, key="co_keys", horizontal=True)
accuracy, error, blur = blur_view(n, d, keys)
m1, m2, m3 = st.columns(3)
m1.metric("pairs per board row (n / d)", f"{n / d:.2f}")
m2.metric("keys recalled", f"{accuracy:.0%}", help="the nearest value to the readback is the value written")
m3.metric(
    "average readback error",
    f"{error:.2f}",
    help="distance between what comes back and what went in (a value vector has length 1)",
)

st.subheader("What went in, what comes back")
show_figure(blur, key="co_blur")
st.caption(
    "Rows are the keys, columns the board's value dimensions (the first d values own a column "
    "each; later values are random directions, since the board has no columns left). ✗ marks a key "
    "whose readback is now nearer some other value; a black outline marks the value each key should "
    "return. Move *n* past *d* and the right panel smears."
)

st.header("2 · Recall against the number of pairs")
st.markdown(
    f"The same experiment for every n from 1 to {4 * d}, averaged over {len(SEEDS)} draws of random "
    "keys: the fraction of keys whose readback is nearest to the right value. The dashed line is n = d."
)
ns, acc, curves_fig = curves_view(d)
show_figure(curves_fig, key="co_curves")
st.caption(
    f"With orthogonal keys the board recalls everything up to n = {bd.last_full_recall(ns, acc['linear/orthogonal'])} "
    "pairs, then falls; "
    f"random keys start losing earlier. At n = {ns[-1]} the board recalls "
    f"{acc['linear/random'][-1]:.0%} (random keys); softmax attention, which keeps all {ns[-1]} pairs in "
    f"its cache, recalls {acc['softmax/random'][-1]:.0%}."
)

st.header("3 · Trained models show the same gap")
render_trained_recall("co_tr")

notice(
    "Double d and keep n. Does the blur get better or worse?",
    "Better: more rows give the keys more room, the overlaps shrink, and the curve's drop moves to the "
    "right. With orthogonal keys the drop starts right after n = d; with random keys it starts well before "
    "n = d, because random keys overlap from the second pair on (compare the two curves above).",
    key="co_q1",
)
notice(
    "Could a cleverer way of *writing* beat d pairs on a d-row board?",
    "No. Reading is a multiplication by the board, so reading n keys is one matrix product; with more "
    "than d keys there is no board that returns every value exactly. A better rule can only choose "
    "*which* pairs survive — that is what the next lessons do.",
    key="co_q2",
)
formula(
    r"S^\top k_j \;=\; v_j\,\lVert k_j\rVert^2 \;+\; \sum_{i\ne j} v_i\,(k_i^\top k_j)",
    caption="The readback of key j is its value plus crosstalk from every other pair. Zero crosstalk needs "
    "mutually orthogonal keys, so at most d pairs — the capacity limit Schlag et al. 2021 (arXiv 2102.11174) "
    "point out. For random unit keys the leak is about √((n−1)/d) of the value's size: our own estimate "
    "(n−1 overlaps, each of size about 1/√d), not a figure from that paper.",
    key="co_formula",
)
code(bd.BoardRun.recall, bd.recall_curve, key="co_code")
still_missing(
    "Linear attention only ever *adds*. Write the same key twice and the two values blend; nothing on "
    "the board is ever cleaned up. What if a write could first erase what the key held?"
)
next_lesson("collisions")
