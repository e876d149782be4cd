"""Collisions: more pairs than board rows, and the readback blurs."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from core import board as bd
from core.figures import board as fb
from core.figures import board_charts as fbc
from core.units import counted
from ui.course import lesson_ref
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, show_figure, still_missing
from ui.primer_link import primer_pointer
from ui.recall_panel import render_trained_recall

KEY_CHOICES = {"random": "random unit vectors", "orthogonal": "orthogonal while they last"}
SEEDS = bd.DRAWS  # the same draws as the other board pages: draw 1 is the one pictured


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


@st.cache_data(show_spinner=False)
def over_draws(n: int, d: int, keys: str) -> bd.RecallOverDraws:
    return bd.recall_over_draws("linear", d, n, keys=keys, seeds=SEEDS)


@st.cache_data(show_spinner=False)
def softmax_misses(n: int, d: int, keys: str) -> bd.SoftmaxMisses:
    return bd.softmax_misses(stream(n, d, keys, "softmax"))


def losing_sentence(ns: list[int], orthogonal: np.ndarray, random: np.ndarray) -> str:
    """What the two board curves show about where recall is first lost, read from their points."""
    o, r = bd.first_loss(ns, orthogonal), bd.first_loss(ns, random)
    if o.first_short is None or r.first_short is None:
        return "Within these pair counts at least one kind of key never loses a pair."
    if r.first_short < o.first_short:
        return (
            f"Random keys start losing earlier: their curve drops at n = {r.first_short} "
            f"({r.at_first_short:.0%}), the orthogonal one only at n = {o.first_short}."
        )
    if r.first_short == o.first_short:
        gap = (
            "alike"
            if abs(r.at_first_short - o.at_first_short) < 0.005
            else ("faster" if r.at_first_short < o.at_first_short else "more slowly")
        )
        return (
            f"Random keys also recall everything up to n = {r.last_full} here — their small overlaps still "
            f"leave the right value nearest — but past it they fall {gap}: at n = {r.first_short}, "
            f"{r.at_first_short:.0%} against {o.at_first_short:.0%} for orthogonal keys."
        )
    return (
        f"Here random keys even hold on longer: complete up to n = {r.last_full}, against "
        f"n = {o.last_full} for orthogonal keys."
    )


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
m2.metric(
    "keys recalled, this draw",
    f"{accuracy:.0%}",
    help="the nearest value to the readback is the value written; one random draw of keys (draw 1)",
)
m3.metric(
    "average readback error",
    f"{error:.2f}",
    help="distance between what comes back and what went in (a value vector has length 1)",
)

draws = over_draws(n, d, keys)
low, high = min(draws.per_draw), max(draws.per_draw)
st.caption(
    f"These numbers and the picture below are one random draw of keys (draw 1, the draw {lesson_ref('linear_attention')} "
    f"pictures too). Over the {len(SEEDS)} draws the curve in section 2 averages, this setting recalls "
    + (
        f"{draws.mean:.0%} in every draw."
        if high - low < 1e-9
        else f"{draws.mean:.0%} on average (from {low:.0%} to {high:.0%}, by the draw)."
    )
)
primer_pointer("dot products")

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
misses = softmax_misses(n, d, "random")
own_low, own_high = misses.own_weight_range
twins = [f"{name} (overlap {misses.twin[name][1]:.2f} with {misses.twin[name][0]})" for name in misses.missed]
st.caption(
    f"With orthogonal keys the board recalls everything up to n = {bd.last_full_recall(ns, acc['linear/orthogonal'])} "
    f"pairs, then falls. {losing_sentence(ns, acc['linear/orthogonal'], acc['linear/random'])} "
    f"At n = {ns[-1]} the board recalls "
    f"{acc['linear/random'][-1]:.0%} (random keys); softmax attention, which keeps all {ns[-1]} pairs in "
    f"its cache, recalls {acc['softmax/random'][-1]:.0%}. Every point is an average over {len(SEEDS)} draws."
)
st.caption(
    "Why does softmax attention miss anything, when it keeps every pair? It reads by weighing every stored "
    "key by how well it matches, and a near twin matches almost as well as the key itself. In draw 1 with "
    f"{counted(n, 'pair')} and random keys, each key's own pair gets only {own_low:.0%}–{own_high:.0%} of the weight"
    + (
        f"; the {counted(len(misses.missed), 'key')} it gets wrong, {bd.join_names(twins)}, have a close twin "
        "(overlap 1 = the same direction), whose value pulls the readback nearer another colour."
        if misses.missed
        else ", yet the right value stays nearest for every key."
    )
)

st.header("3 · Trained models show the same gap")
render_trained_recall("co_tr")

notice(
    "Double d and keep n. Does the blur get better or worse?",
    "Better: more rows give the keys more room, the overlaps shrink, and the curve's drop moves to the "
    f"right. On the curves above (d = {d}): {losing_sentence(ns, acc['linear/orthogonal'], acc['linear/random'])}",
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
