"""DeltaNet: erase what the key held, then write the new value."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import board as bd
from core.figures import board as fb
from core.figures import board_charts as fbc
from core.i18n import _
from core.ops import delta_rule
from ui.board_controls import key_choice
from ui.charts import show_figure
from ui.course import lesson_ref
from ui.depth import engineer, in_depth
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing
from ui.primer_link import primer_pointer
from ui.recall.pointer import trained_recall_pointer
from ui.stepped import step_controls, stepped_figures

SEEDS = bd.DRAWS  # the same draws as the other board pages: draw 1 is the one pictured


def num(x: float) -> str:
    return f"{round(float(x), 2) + 0.0:.2f}"  # + 0.0 turns -0.00 into 0.00


@st.cache_data(show_spinner=False)
def rewrite_run(n: int, d: int, keys: str, rule: str, beta: float) -> bd.BoardRun:
    return bd.write_stream(bd.rewrite_stream(n), rule, d=d, keys=keys, beta=beta)


@st.cache_data(show_spinner=False)
def collisions_run(n: int, d: int, keys: str, rule: str, beta: float) -> bd.BoardRun:
    """The collisions lesson's stream (n different pairs) written under `rule`."""
    return bd.write_stream(bd.word_stream(n), rule, d=d, keys=keys, beta=beta)


@st.cache_data(show_spinner=False)
def over_draws(n: int, d: int, keys: str, rule: str, beta: float) -> bd.RecallOverDraws:
    return bd.recall_over_draws(rule, d, n, keys=keys, beta=beta)


@st.cache_data(show_spinner=False)  # the page shows its own spinner, in the reader's language
def curves(d: int, keys: str, beta: float) -> tuple[list[int], np.ndarray, np.ndarray]:
    ns = bd.pair_counts(d, 13)
    return (
        ns,
        bd.recall_curve("linear", d, ns, SEEDS, keys=keys),
        bd.recall_curve("delta", d, ns, SEEDS, keys=keys, beta=beta),
    )


def same_keys_as_collisions(run: bd.BoardRun, n: int, d: int) -> bool:
    """True when `run` wrote the very keys the linear-attention and collisions pages picture for these n and
    d with their default, random keys (draw 1 of the same stream): checked, not assumed."""
    pictured = collisions_run(n, d, "random", "linear", 1.0)  # as those pages build it (cached)
    return bool(np.array_equal(np.asarray(run.token_keys), np.asarray(pictured.token_keys)))


def draw_sentence(run: bd.BoardRun, n: int, d: int, linear: float, delta: float) -> str:
    """Engineer: which keys section 2 pictures, said as it is — the same keys as the earlier lessons, or
    only the same seed — and the averages over the draws."""
    lessons = lesson_ref("linear_attention", "collisions")
    if same_keys_as_collisions(run, n, d):
        text = _(
            "One random draw of random keys (draw 1): the same keys {lessons} picture for these n and d. Averaged "
            "over {draws} draws, as the curves below: linear {linear:.0%}, DeltaNet {delta:.0%}."
        )
    else:
        text = _(
            "Orthogonal keys made from draw 1, the same seed {lessons} use; those pages show random keys unless "
            "set to orthogonal too, so their pictures differ from this one. Averaged over {draws} draws, as the "
            "curves below: linear {linear:.0%}, DeltaNet {delta:.0%}."
        )
    return text.format(lessons=lessons, draws=len(SEEDS), linear=linear, delta=delta)


lesson_header("deltanet")
problem(
    _(
        "Linear attention only adds. Write *apple → red* and later *apple → green*, and reading apple "
        "returns a mix of both: nothing on the board is ever corrected, only added to."
    )
)
st.markdown(
    _(
        "DeltaNet changes one thing: before writing, it **reads what the key currently returns, "
        "erases that, and writes the new value** — like wiping one line of a blackboard before writing "
        "on it. How much it erases and writes is the **write strength β** (between 0 and 1; β = 1 "
        "replaces completely)."
    )
)
primer_pointer("outer products like k vᵀ")

st.header(_("1 · Erase, then write — step by step"))
c1, c2, c3 = st.columns(3)
d = c1.slider(_("board rows d"), 2, 16, 8, key="dn_d")
beta = c2.slider(_("write strength β"), 0.1, 1.0, 1.0, 0.05, key="dn_beta")
# orthogonal keys by default: the rewrite is then the only thing on the board that collides
keys = key_choice("dn_keys", where=c3, default="orthogonal")
n = 6
run = rewrite_run(n, d, keys, "delta", float(beta))
st.markdown(
    _("The stream: {pairs}, and then **apple again, now → {value}**.").format(
        pairs=_(", ").join(f"{k} → {v}" for k, v in run.pairs[:-1]), value=run.pairs[-1][1]
    )
)


def parts_figure(run: bd.BoardRun, t: int):
    """The four panels of token t (one colour scale for the whole run)."""
    i = t - 1
    k_name, v_name = run.pairs[i]
    return fb.update_parts_figure(
        {
            _("old board"): run.old[i],
            _("− erase"): run.erase[i],
            _("+ write"): run.write[i],
            _("= new board"): run.new[i],
        },
        fb.color_limit(run.old, run.erase, run.write, run.new),
        value_names=run.value_names,
        title=_("token {t}: {key} → {value}").format(t=t, key=k_name, value=v_name),
    )


@st.fragment
def parts_stepper(run: bd.BoardRun, settings: tuple) -> None:
    """Step controls and the stepped picture: a Step click reruns only this part. `settings`
    (what `run` was made from) keys the pictures, built once per step and shared."""
    t = step_controls("dn_t", run.T, unit=_("token"), before_start=_("the last token"))
    if t == 0:  # before the first Step: the last token, the rewrite this lesson is about
        st.caption(_("The last token writes apple again: the rewrite this lesson is about."))
        t = run.T
    if t:
        figures = stepped_figures("dn_parts", settings, t, {"parts": lambda t: parts_figure(run, t)})
        show_figure(figures["parts"], key="dn_parts")
        erased = run.erased(t)
        in_depth(
            (
                _(
                    "Old board − erase + write = new board (red = positive, blue = negative, white = 0). This "
                    "token erased {erased:.2f}: its key's rows held nothing yet."
                )
                if erased < 1e-6
                else _(
                    "Old board − erase + write = new board (red = positive, blue = negative, white = 0). This "
                    "token erased {erased:.2f}: what its key already returned."
                )
            ).format(erased=erased),
            parts_in_full(erased),
            show=st.caption,
        )


def parts_in_full(erased: float) -> str:
    """Engineer's caption of the four panels (in place of Story's): their sum in full, and where the erased
    amount came from."""
    return (
        _(
            "Old board − erase (β × what the key held) + write (β × the new value) = new board "
            "(one colour scale for all four panels and for every step). "
            "This token erased {erased:.2f} in total: nothing, because the key's rows held nothing yet."
        )
        if erased < 1e-6
        else _(
            "Old board − erase (β × what the key held) + write (β × the new value) = new board "
            "(one colour scale for all four panels and for every step). "
            "This token erased {erased:.2f} in total: what its key was already returning — from "
            "earlier pairs that share its rows."
        )
    ).format(erased=erased)


parts_stepper(run, (n, d, keys, "delta", float(beta)))

st.subheader(_("The rewritten key"))
lin = rewrite_run(n, d, keys, "linear", 1.0)
rec_d, rec_l = run.recall(), lin.recall()
show_figure(
    fb.compare_readbacks_figure(
        {
            # short two-line titles (the caption says what the % is): two panels share a phone's width
            _("linear:<br>{share:.0%}").format(share=rec_l.accuracy): rec_l.readback,
            _("DeltaNet:<br>{share:.0%}").format(share=rec_d.accuracy): rec_d.readback,
        },
        rec_d.checked_names(),
        value_names=run.value_names,
        targets=rec_d.target,
    ),
    key="dn_rewrite",
)

red, green = run.pairs[0][1], run.pairs[-1][1]  # apple's first and its rewritten value
shares = {
    "lin_red": num(lin.value_share("apple", red)),
    "lin_green": num(lin.value_share("apple", green)),
    "delta_red": num(run.value_share("apple", red)),
    "delta_green": num(run.value_share("apple", green)),
}
in_depth(
    _(
        "Reading **apple** after the whole stream: linear attention returns {red} {lin_red} and {green} "
        "{lin_green}, a blend; DeltaNet returns {red} {delta_red} and {green} {delta_green}. Panel titles: the "
        "share of keys each rule reads back right; outlines mark the right value."
    ).format(red=red, green=green, **shares),
    _(
        "Panel titles: the share of keys each rule reads back right. "
        "Reading **apple** after the whole stream (how much of each value comes back): linear attention returns red "
        "{lin_red} and {green} {lin_green} — a blend; "
        "DeltaNet returns red {delta_red} and {green} {delta_green}. "
        "(✓/✗ on the rows are DeltaNet's; black outlines mark the right value; a column marked *spare* belongs "
        "to no colour yet, as the stream has fewer colours than the board has columns.) With *random* keys and "
        "β = 1 the rewrite also erases whatever the "
        "other keys left in apple's rows, so a neighbour can be lost: erase-then-write is exact only for the key "
        "being rewritten."
    ).format(green=green, **shares),
    show=st.caption,
)

st.header(_("2 · The stream of {lesson}, both rules").format(lesson=lesson_ref("collisions")))
st.markdown(
    _(
        "Now n different pairs, no key repeated — the collisions of {lesson}. Erasing first helps when a "
        "key comes back; with only new keys, the erase removes whatever an overlapping key left there, "
        "so it can also wipe older pairs."
    ).format(lesson=lesson_ref("collisions"))
)
c1, c2 = st.columns(2)
n4 = c1.slider(_("pairs written n"), 1, 48, 12, key="dn_n")
run_l, run_d = collisions_run(n4, d, keys, "linear", 1.0), collisions_run(n4, d, keys, "delta", float(beta))
r_l, r_d = run_l.recall(), run_d.recall()
c2.metric(
    _("keys recalled: linear → DeltaNet"),
    f"{r_l.accuracy:.0%} → {r_d.accuracy:.0%}",
    help=_("one random draw of keys (draw 1, the one pictured)"),
)
draws_l, draws_d = over_draws(n4, d, keys, "linear", 1.0), over_draws(n4, d, keys, "delta", float(beta))
if engineer():
    st.caption(draw_sentence(run_l, n4, d, draws_l.mean, draws_d.mean))
show_figure(
    fb.compare_readbacks_figure(
        {
            _("linear:<br>{share:.0%}").format(share=r_l.accuracy): r_l.readback,
            _("DeltaNet:<br>{share:.0%}").format(share=r_d.accuracy): r_d.readback,
        },
        r_d.names,
        value_names=run_d.value_names,
        targets=r_d.target,
    ),
    key="dn_side",
)
st.caption(
    _("Same colours as above: each row is a key read back, and the outline marks the value it should return.")
)
if engineer():
    st.caption(
        _(
            "As in {lesson}, the board here is d columns wide: the first d values own a column "
            "each, later ones are random directions across them (no column of their own, so no outline)."
        ).format(lesson=lesson_ref("collisions"))
    )
with st.spinner(_("Writing boards of every size …")):
    ns, acc_l, acc_d = curves(d, keys, float(beta))
show_figure(
    fbc.recall_curves_figure(
        ns,
        {
            _("linear attention"): (acc_l, "linear", "solid"),
            f"DeltaNet, β = {beta:.2f}": (acc_d, "delta", "solid"),
        },
        d,
        title=(
            _("recall vs pairs, d = {d}, random keys, {draws} draws")
            if keys == "random"
            else _("recall vs pairs, d = {d}, orthogonal keys, {draws} draws")
        ).format(d=d, draws=len(SEEDS)),
    ),
    key="dn_curves",
)
st.caption(
    _(
        "Neither rule gets past the d-row limit: n > d pairs cannot all be read back exactly from d rows. "
        "In a single pass with β = 1 DeltaNet can even do worse than plain adding — each write wipes part of "
        "older pairs that share its rows. Lower β and watch the curves. Trained models learn β per token."
    )
)
in_depth(
    _(
        "So what did erasing fix? **The blurring of a key that is written again** (section 1): linear attention "
        "piles the new value on the old, DeltaNet replaces it. It does not lift the d-row limit."
    ),
    _(
        "So what did erasing fix? **The blurring of a key that is written again** (section 1): linear attention "
        "can only pile the new value on the old, DeltaNet replaces it. It does not lift the d-row limit, and on a "
        "board already past d distinct pairs, a hard erase (β = 1) in one pass can cost more than it saves. "
        "When the lessons ahead say erase-then-write fixed the blurring, they mean the rewrite; trained models "
        "(below) learn a β per token."
    ),
)
trained_recall_pointer(
    ("attention", "linear", "delta"),
    _("Trained with a learned β, does erase-then-write beat plain adding?"),
    versus=("delta", "linear"),
)

notice(
    _("With β = 1, what does reading apple return right after apple → green is written?"),
    _(
        "Exactly green: the erase removes everything apple's key returned and the write puts green in its "
        "place. With β < 1 only a share is replaced, so some red remains."
    ),
    key="dn_q1",
)
notice(
    _("With orthogonal keys, which board entries does a write touch?"),
    _(
        "Only the key's own row: erase and write both have the shape k·(something)ᵀ, so they live in the "
        "rows the key uses. With random keys every row moves a little."
    ),
    key="dn_q2",
)
formula(
    r"S_t = S_{t-1} \underbrace{-\,\beta_t\, k_t\,(S_{t-1}^\top k_t)^\top}_{\text{erase}}"
    r"\underbrace{+\,\beta_t\, k_t v_t^\top}_{\text{write}}"
    r"= (I-\beta_t k_t k_t^\top)\,S_{t-1} + \beta_t k_t v_t^\top",
    caption=_(
        "One step of gradient descent on ½‖Sᵀk_t − v_t‖² with learning rate β_t (Schlag et al. 2021; "
        "DeltaNet, Yang et al. 2024, arXiv 2406.06484; fla `fla/ops/delta_rule/naive.py`)."
    ),
    key="dn_formula",
)
code(delta_rule.step, key="dn_code")
still_missing(
    _(
        "Each write now depends on the board the previous write left. Token 5 must wait for token 4, which "
        "waits for token 3 … a GPU that could do thousands of things at once stands in line. Can the "
        "erase-then-write be done in parallel?"
    )
)
next_lesson("deltanet")
