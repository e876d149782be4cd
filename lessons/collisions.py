"""Collisions: more pairs than board rows, and the readback blurs."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import board as bd
from core.figures import board as fb
from core.figures import board_charts as fbc
from core.i18n import N_, _, language, ngettext
from ui.board_controls import key_choice
from ui.charts import ReadyChart, ready_chart, show_figure
from ui.course import lesson_ref
from ui.depth import engineer, in_depth
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing
from ui.primer_link import primer_pointer
from ui.recall.panel import render_trained_recall

KEY_CHOICES = {
    "random": N_("random unit vectors"),
    "orthogonal": N_("orthogonal while they last"),
}  # shown via _()
SEEDS = bd.DRAWS  # the same draws as the other board pages: draw 1 is the one pictured


@st.cache_data(show_spinner=False)
def stream(n: int, d: int, keys: str, rule: str) -> bd.BoardRun:
    return bd.write_stream(bd.word_stream(n), rule, d=d, keys=keys)


@st.cache_data(show_spinner=False)
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
        return _("Within these pair counts at least one kind of key never loses a pair.")
    if r.first_short < o.first_short:
        return _(
            "Random keys start losing earlier: their curve drops at n = {random_n} "
            "({random_share:.0%}), the orthogonal one only at n = {orthogonal_n}."
        ).format(random_n=r.first_short, random_share=r.at_first_short, orthogonal_n=o.first_short)
    if r.first_short == o.first_short:
        gap = (
            _("alike")
            if abs(r.at_first_short - o.at_first_short) < 0.005
            else (_("faster") if r.at_first_short < o.at_first_short else _("more slowly"))
        )
        return _(
            "Random keys also recall everything up to n = {last_full} here — their small overlaps still "
            "leave the right value nearest — but past it they fall {gap}: at n = {first_short}, "
            "{random_share:.0%} against {orthogonal_share:.0%} for orthogonal keys."
        ).format(
            last_full=r.last_full,
            gap=gap,
            first_short=r.first_short,
            random_share=r.at_first_short,
            orthogonal_share=o.at_first_short,
        )
    return _(
        "Here random keys even hold on longer: complete up to n = {random_n}, against "
        "n = {orthogonal_n} for orthogonal keys."
    ).format(random_n=r.last_full, orthogonal_n=o.last_full)


@st.cache_resource(show_spinner=False, max_entries=256)
def blur_view(n: int, d: int, keys: str, lang: str) -> tuple[float, float, ReadyChart]:
    """Recall numbers and the went-in / comes-back picture, built once per setting and language."""
    run = stream(n, d, keys, "linear")
    rec = run.recall()
    # short titles: two panels share a phone's width; the second breaks after the colon
    read_back = _("read back: {share:.0%} right").format(share=rec.accuracy)
    fig = fb.compare_readbacks_figure(
        {_("written"): run.values[rec.target], read_back: rec.readback},
        rec.checked_names(),
        value_names=run.value_names,
        targets=rec.target,
    )
    return rec.accuracy, rec.mean_error(rec.names), ready_chart(fig)


@st.cache_resource(show_spinner=False, max_entries=64)
def curves_view(d: int, lang: str) -> tuple[list[int], dict[str, np.ndarray], ReadyChart]:
    """The recall-vs-pairs curves and their figure, built once per board size and language."""
    ns, acc = curves(d)
    fig = fbc.recall_curves_figure(
        ns,
        {
            _("linear attention, orthogonal keys"): (acc["linear/orthogonal"], "linear", "solid"),
            _("linear attention, random keys"): (acc["linear/random"], "linear", "dot"),
            _("softmax attention (keeps every pair)"): (acc["softmax/random"], "attention", "solid"),
        },
        d,
        title=_("a board with d = {d} rows").format(d=d),
    )
    return ns, acc, ready_chart(fig)


def curves_in_full(ns: list[int], acc: dict[str, np.ndarray]) -> str:
    """Engineer's caption of the curves (in place of Story's): where each curve first loses a pair, and
    how many draws every point averages."""
    return _(
        "With orthogonal keys the board recalls everything up to n = {orthogonal_full} "
        "pairs, then falls. {losing} "
        "At n = {largest} the board recalls "
        "{random_share:.0%} (random keys); softmax attention, which keeps all {largest} pairs in "
        "its cache, recalls {softmax_share:.0%}. Every point is an average over {draws} draws."
    ).format(
        orthogonal_full=bd.last_full_recall(ns, acc["linear/orthogonal"]),
        losing=losing_sentence(ns, acc["linear/orthogonal"], acc["linear/random"]),
        largest=ns[-1],
        random_share=acc["linear/random"][-1],
        softmax_share=acc["softmax/random"][-1],
        draws=len(SEEDS),
    )


def softmax_details(n: int, d: int) -> None:
    """Engineer: why softmax attention misses any pair at all, when it keeps every one."""
    misses = softmax_misses(n, d, "random")
    own_low, own_high = misses.own_weight_range
    twins = [
        _("{name} (overlap {overlap:.2f} with {twin})").format(
            name=name, overlap=misses.twin[name][1], twin=misses.twin[name][0]
        )
        for name in misses.missed
    ]
    st.caption(
        (
            ngettext(
                "Why does softmax attention miss anything, when it keeps every pair? It reads by weighing every "
                "stored key by how well it matches, and a near twin matches almost as well as the key itself. In "
                "draw 1 with {pairs} and random keys, each key's own pair gets only {low:.0%}–{high:.0%} of the "
                "weight; the {missed} key it gets wrong, {twins}, have a close twin (overlap 1 = the same "
                "direction), whose value pulls the readback nearer another colour.",
                "Why does softmax attention miss anything, when it keeps every pair? It reads by weighing every "
                "stored key by how well it matches, and a near twin matches almost as well as the key itself. In "
                "draw 1 with {pairs} and random keys, each key's own pair gets only {low:.0%}–{high:.0%} of the "
                "weight; the {missed} keys it gets wrong, {twins}, have a close twin (overlap 1 = the same "
                "direction), whose value pulls the readback nearer another colour.",
                len(misses.missed),
            )
            if misses.missed
            else _(
                "Why does softmax attention miss anything, when it keeps every pair? It reads by weighing every "
                "stored key by how well it matches, and a near twin matches almost as well as the key itself. In "
                "draw 1 with {pairs} and random keys, each key's own pair gets only {low:.0%}–{high:.0%} of the "
                "weight, yet the right value stays nearest for every key."
            )
        ).format(
            pairs=ngettext("{n} pair", "{n} pairs", n).format(n=f"{n:,}"),
            low=own_low,
            high=own_high,
            missed=f"{len(misses.missed):,}",
            twins=bd.join_names(twins),
        )
    )


lesson_header("collisions")
new_words("mqar", "hybrid", "log_scale", here="collisions")
problem(
    _(
        "Linear attention keeps one board of fixed size, so memory no longer grows. But every pair is "
        "*added* onto the same few rows. Sooner or later two pairs have to share rows — and then "
        "reading one key also brings back a bit of the other."
    )
)

st.header(_("1 · Write n pairs, read them back"))
in_depth(
    _(
        "The board has **d rows** (the key size). Reading a key returns its own value **plus** a little of "
        "every other value, as much as the other key overlaps it. That leak is a **collision**. Keys at right "
        "angles (*orthogonal*) never overlap, but only d of them fit; random keys overlap a little from the start."
    ),
    _(
        "The board has **d rows** (the key size). A key is a direction among those d rows; reading key "
        "*j* returns its own value **plus** every other value, weighted by how much that other key "
        "overlaps key *j*. That leak is a **collision**. Orthogonal keys (directions at right angles) do "
        "not overlap at all — but only d of them exist. Random keys overlap a little from the start."
    ),
)
c1, c2, c3 = st.columns(3)
d = c1.slider(_("board rows d (key size)"), 2, 32, 8, key="co_d")
n = c2.slider(_("pairs written n"), 1, 64, 12, key="co_n")
keys = key_choice("co_keys", where=c3, labels=KEY_CHOICES)
accuracy, error, blur = blur_view(n, d, keys, language())
m1, m2, m3 = st.columns(3)
m1.metric(_("pairs per board row (n / d)"), f"{n / d:.2f}")
m2.metric(
    _("keys recalled, this draw"),
    f"{accuracy:.0%}",
    help=_("the nearest value to the readback is the value written; one random draw of keys (draw 1)"),
)
m3.metric(
    _("average readback error"),
    f"{error:.2f}",
    help=_("distance between what comes back and what went in (a value vector has length 1)"),
)

draws = over_draws(n, d, keys)
low, high = min(draws.per_draw), max(draws.per_draw)
if engineer():
    st.caption(
        (
            _(
                "These numbers and the picture below are one random draw of keys (draw 1, the draw {lesson} "
                "pictures too). Over the {draws} draws the curve in section 2 averages, this setting recalls "
                "{mean:.0%} in every draw."
            )
            if high - low < 1e-9
            else _(
                "These numbers and the picture below are one random draw of keys (draw 1, the draw {lesson} "
                "pictures too). Over the {draws} draws the curve in section 2 averages, this setting recalls "
                "{mean:.0%} on average (from {low:.0%} to {high:.0%}, by the draw)."
            )
        ).format(lesson=lesson_ref("linear_attention"), draws=len(SEEDS), mean=draws.mean, low=low, high=high)
    )
primer_pointer("dot products")

st.subheader(_("What went in, what comes back"))
show_figure(blur, key="co_blur")
in_depth(
    _(
        "Each row is a key read back: red = much of that value comes back, white = none, blue = a negative leak. "
        "The outlined cell is the value the key should return; ✗ marks a key now nearer another value. Move *n* "
        "past *d* and watch the right panel smear."
    ),
    _(
        "Rows are the keys, columns the board's value dimensions (the first d values own a column "
        "each; later values are random directions, since the board has no columns left). ✗ marks a key "
        "whose readback is now nearer some other value; a black outline marks the value each key should "
        "return. Move *n* past *d* and the right panel smears."
    ),
    show=st.caption,
)

st.header(_("2 · Recall against the number of pairs"))
in_depth(
    _(
        "The same experiment for every n from 1 to {largest}, averaged over several random draws of keys: the "
        "share of keys read back right. The dashed line is n = d, as many pairs as rows."
    ).format(largest=4 * d),
    _(
        "The same experiment for every n from 1 to {largest}, averaged over {draws} draws of random "
        "keys: the fraction of keys whose readback is nearest to the right value. The dashed line is n = d."
    ).format(largest=4 * d, draws=len(SEEDS)),
)
with st.spinner(_("Writing boards of every size …")):
    ns, acc, curves_fig = curves_view(d, language())
show_figure(curves_fig, key="co_curves")
in_depth(
    _(
        "Each line is one memory. The board with orthogonal keys recalls every pair up to n = {full}, then "
        "falls; with {largest} pairs it recalls {board:.0%} (random keys), while softmax attention, which keeps "
        "every pair, recalls {softmax:.0%}."
    ).format(
        full=bd.last_full_recall(ns, acc["linear/orthogonal"]),
        largest=ns[-1],
        board=acc["linear/random"][-1],
        softmax=acc["softmax/random"][-1],
    ),
    curves_in_full(ns, acc),
    show=st.caption,
)
if engineer():
    softmax_details(n, d)


st.header(_("3 · Trained models show the same gap"))
new_words(
    "loss",
    "learning_rate",
    here="collisions",
    title=N_("What is training?"),
    intro=_(
        "The models below were *trained*. A model's numbers (its weights) start random; training shows it "
        "examples one after another and nudges every number a little after each one, so that it makes fewer "
        "mistakes. The **loss** is how wrong it still is; the **learning rate** is how big each nudge is; a "
        "**seed** fixes the random start, so another seed is another try from different random numbers."
    ),
)
render_trained_recall("co_tr")

notice(
    _("Double d and keep n. Does the blur get better or worse?"),
    _(
        "Better: more rows give the keys more room, the overlaps shrink, and the curve's drop moves to the "
        "right. On the curves above (d = {d}): {losing}"
    ).format(d=d, losing=losing_sentence(ns, acc["linear/orthogonal"], acc["linear/random"])),
    key="co_q1",
)
notice(
    _("Could a cleverer way of *writing* beat d pairs on a d-row board?"),
    _(
        "No. Reading is a multiplication by the board, so reading n keys is one matrix product; with more "
        "than d keys there is no board that returns every value exactly. A better rule can only choose "
        "*which* pairs survive — that is what the next lessons do."
    ),
    key="co_q2",
)
formula(
    r"S^\top k_j \;=\; v_j\,\lVert k_j\rVert^2 \;+\; \sum_{i\ne j} v_i\,(k_i^\top k_j)",
    caption=_(
        "The readback of key j is its value plus crosstalk from every other pair. Zero crosstalk needs "
        "mutually orthogonal keys, so at most d pairs — the capacity limit Schlag et al. 2021 (arXiv 2102.11174) "
        "point out. For random unit keys the leak is about √((n−1)/d) of the value's size: our own estimate "
        "(n−1 overlaps, each of size about 1/√d), not a figure from that paper."
    ),
    key="co_formula",
)
code(bd.BoardRun.recall, bd.recall_curve, key="co_code")
still_missing(
    _(
        "Linear attention only ever *adds*. Write the same key twice and the two values blend; nothing on "
        "the board is ever cleaned up. What if a write could first erase what the key held?"
    )
)
next_lesson("collisions")
