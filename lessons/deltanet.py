"""DeltaNet: erase what the key held, then write the new value."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core import board as bd
from core.figures import board as fb
from core.figures import board_charts as fbc
from core.ops import delta_rule
from ui.course import lesson_ref
from ui.lesson import (
    code,
    formula,
    lesson_header,
    next_lesson,
    notice,
    problem,
    show_figure,
    step_controls,
    still_missing,
)
from ui.primer_link import primer_pointer
from ui.recall_panel import trained_recall_pointer
from ui.stepped import stepped_figures

KEY_CHOICES = {"random": "random unit vectors", "orthogonal": "orthogonal (one row each)"}
SEEDS = bd.DRAWS  # the same draws as the other board pages: draw 1 is the one pictured


def num(x: float) -> str:
    return f"{round(float(x), 2) + 0.0:.2f}"  # + 0.0 turns -0.00 into 0.00


@st.cache_data(show_spinner=False)
def rewrite_run(n: int, d: int, keys: str, rule: str, beta: float) -> bd.BoardRun:
    return bd.write_stream(bd.rewrite_stream(n), rule, d=d, keys=keys, beta=beta)


@st.cache_data(show_spinner=False)
def lesson4_run(n: int, d: int, keys: str, rule: str, beta: float) -> bd.BoardRun:
    return bd.write_stream(bd.word_stream(n), rule, d=d, keys=keys, beta=beta)


@st.cache_data(show_spinner=False)
def over_draws(n: int, d: int, keys: str, rule: str, beta: float) -> bd.RecallOverDraws:
    return bd.recall_over_draws(rule, d, n, keys=keys, beta=beta)


@st.cache_data(show_spinner="Writing boards of every size …")
def curves(d: int, keys: str, beta: float) -> tuple[list[int], np.ndarray, np.ndarray]:
    ns = bd.pair_counts(d, 13)
    return (
        ns,
        bd.recall_curve("linear", d, ns, SEEDS, keys=keys),
        bd.recall_curve("delta", d, ns, SEEDS, keys=keys, beta=beta),
    )


lesson_header("deltanet")
problem(
    "Linear attention only adds. Write *apple → red* and later *apple → green*, and reading apple "
    "returns a mix of both: nothing on the board is ever corrected, only added to."
)
st.markdown(
    "DeltaNet changes one thing: before writing, it **reads what the key currently returns, "
    "erases that, and writes the new value** — like wiping one line of a blackboard before writing "
    "on it. How much it erases and writes is the **write strength β** (between 0 and 1; β = 1 "
    "replaces completely)."
)
primer_pointer("outer products like k vᵀ")

st.header("1 · Erase, then write — step by step")
c1, c2, c3 = st.columns(3)
d = c1.slider("board rows d", 2, 16, 8, key="dn_d")
beta = c2.slider("write strength β", 0.1, 1.0, 1.0, 0.05, key="dn_beta")
# orthogonal keys by default: the rewrite is then the only thing on the board that collides
keys = c3.radio(
    "keys", list(KEY_CHOICES), index=1, format_func=KEY_CHOICES.get, key="dn_keys", horizontal=True
)
n = 6
run = rewrite_run(n, d, keys, "delta", float(beta))
st.markdown(
    f"The stream: {', '.join(f'{k} → {v}' for k, v in run.pairs[:-1])}, and then **apple again, "
    f"now → {run.pairs[-1][1]}**."
)


def parts_figure(run: bd.BoardRun, t: int):
    """The four panels of token t (one colour scale for the whole run)."""
    i = t - 1
    k_name, v_name = run.pairs[i]
    return fb.update_parts_figure(
        {
            "old board": run.old[i],
            "− erase": run.erase[i],
            "+ write": run.write[i],
            "= new board": run.new[i],
        },
        fb.color_limit(run.old, run.erase, run.write, run.new),
        value_names=run.value_names,
        title=f"token {t}: {k_name} → {v_name}",
    )


@st.fragment
def parts_stepper(run: bd.BoardRun, settings: tuple) -> None:
    """Step controls and the stepped picture: a Step click reruns only this part. `settings`
    (what `run` was made from) keys the pictures, built once per step and shared."""
    t = step_controls("dn_t", run.T, unit="token", before_start="the last token")
    if t == 0:  # before the first Step: the last token, the rewrite this lesson is about
        st.caption("The last token writes apple again: the rewrite this lesson is about.")
        t = run.T
    if t:
        figures = stepped_figures("dn_parts", settings, t, {"parts": lambda t: parts_figure(run, t)})
        show_figure(figures["parts"], key="dn_parts")
        erased = run.erased(t)
        st.caption(
            "Old board − erase (β × what the key held) + write (β × the new value) = new board "
            "(one colour scale for all four panels and for every step). "
            f"This token erased {erased:.2f} in total: "
            + (
                "nothing, because the key's rows held nothing yet."
                if erased < 1e-6
                else "what its key was already returning — from earlier pairs that share its rows."
            )
        )


parts_stepper(run, (n, d, keys, "delta", float(beta)))

st.subheader("The rewritten key")
lin = rewrite_run(n, d, keys, "linear", 1.0)
rec_d, rec_l = run.recall(), lin.recall()
show_figure(
    fb.compare_readbacks_figure(
        {
            # short two-line titles (the caption says what the % is): two panels share a phone's width
            f"linear:<br>{rec_l.accuracy:.0%}": rec_l.readback,
            f"DeltaNet:<br>{rec_d.accuracy:.0%}": rec_d.readback,
        },
        rec_d.checked_names(),
        value_names=run.value_names,
        targets=rec_d.target,
    ),
    key="dn_rewrite",
)

red, green = run.pairs[0][1], run.pairs[-1][1]  # apple's first and its rewritten value
st.caption(
    "Panel titles: the share of keys each rule reads back right. "
    f"Reading **apple** after the whole stream (how much of each value comes back): linear attention returns red "
    f"{num(lin.value_share('apple', red))} and {green} {num(lin.value_share('apple', green))} — a blend; "
    f"DeltaNet returns red {num(run.value_share('apple', red))} and {green} {num(run.value_share('apple', green))}. "
    "(✓/✗ on the rows are DeltaNet's; black outlines mark the right value; a column marked *spare* belongs "
    "to no colour yet, as the stream has fewer colours than the board has columns.) With *random* keys and "
    "β = 1 the rewrite also erases whatever the "
    "other keys left in apple's rows, so a neighbour can be lost: erase-then-write is exact only for the key "
    "being rewritten."
)

st.header(f"2 · The stream of {lesson_ref('collisions')}, both rules")
st.markdown(
    f"Now n different pairs, no key repeated — the collisions of {lesson_ref('collisions')}. Erasing first helps when a "
    "key comes back; with only new keys, the erase removes whatever an overlapping key left there, "
    "so it can also wipe older pairs."
)
c1, c2 = st.columns(2)
n4 = c1.slider("pairs written n", 1, 48, 12, key="dn_n")
run_l, run_d = lesson4_run(n4, d, keys, "linear", 1.0), lesson4_run(n4, d, keys, "delta", float(beta))
r_l, r_d = run_l.recall(), run_d.recall()
c2.metric(
    "keys recalled: linear → DeltaNet",
    f"{r_l.accuracy:.0%} → {r_d.accuracy:.0%}",
    help="one random draw of keys (draw 1, the one pictured)",
)
draws_l, draws_d = over_draws(n4, d, keys, "linear", 1.0), over_draws(n4, d, keys, "delta", float(beta))
st.caption(
    f"One random draw of {keys} keys (draw 1, the same draw {lesson_ref('linear_attention', 'collisions')} "
    f"picture). Averaged over {len(SEEDS)} draws, as the curves below: linear {draws_l.mean:.0%}, "
    f"DeltaNet {draws_d.mean:.0%}."
)
show_figure(
    fb.compare_readbacks_figure(
        {
            f"linear:<br>{r_l.accuracy:.0%}": r_l.readback,
            f"DeltaNet:<br>{r_d.accuracy:.0%}": r_d.readback,
        },
        r_d.names,
        value_names=run_d.value_names,
        targets=r_d.target,
    ),
    key="dn_side",
)
st.caption(
    f"As in {lesson_ref('collisions')}, the board here is d columns wide: the first d values own a column "
    "each, later ones are random directions across them (no column of their own, so no outline)."
)
ns, acc_l, acc_d = curves(d, keys, float(beta))
show_figure(
    fbc.recall_curves_figure(
        ns,
        {
            "linear attention": (acc_l, "linear", "solid"),
            f"DeltaNet, β = {beta:.2f}": (acc_d, "delta", "solid"),
        },
        d,
        title=f"recall vs pairs, d = {d}, {keys} keys, {len(SEEDS)} draws",
    ),
    key="dn_curves",
)
st.caption(
    "Neither rule gets past the d-row limit: n > d pairs cannot all be read back exactly from d rows. "
    "In a single pass with β = 1 DeltaNet can even do worse than plain adding — each write wipes part of "
    "older pairs that share its rows. Lower β and watch the curves. Trained models learn β per token."
)
st.markdown(
    "So what did erasing fix? **The blurring of a key that is written again** (section 1): linear attention "
    "can only pile the new value on the old, DeltaNet replaces it. It does not lift the d-row limit, and on a "
    "board already past d distinct pairs, a hard erase (β = 1) in one pass can cost more than it saves. "
    "When the lessons ahead say erase-then-write fixed the blurring, they mean the rewrite; trained models "
    "(below) learn a β per token."
)
trained_recall_pointer(
    ("attention", "linear", "delta"),
    "Trained with a learned β, does erase-then-write beat plain adding?",
    versus=("delta", "linear"),
)

notice(
    "With β = 1, what does reading apple return right after apple → green is written?",
    "Exactly green: the erase removes everything apple's key returned and the write puts green in its "
    "place. With β < 1 only a share is replaced, so some red remains.",
    key="dn_q1",
)
notice(
    "With orthogonal keys, which board entries does a write touch?",
    "Only the key's own row: erase and write both have the shape k·(something)ᵀ, so they live in the "
    "rows the key uses. With random keys every row moves a little.",
    key="dn_q2",
)
formula(
    r"S_t = S_{t-1} \underbrace{-\,\beta_t\, k_t\,(S_{t-1}^\top k_t)^\top}_{\text{erase}}"
    r"\underbrace{+\,\beta_t\, k_t v_t^\top}_{\text{write}}"
    r"= (I-\beta_t k_t k_t^\top)\,S_{t-1} + \beta_t k_t v_t^\top",
    caption="One step of gradient descent on ½‖Sᵀk_t − v_t‖² with learning rate β_t (Schlag et al. 2021; "
    "DeltaNet, Yang et al. 2024, arXiv 2406.06484; fla `fla/ops/delta_rule/naive.py`).",
    key="dn_formula",
)
code(delta_rule.step, key="dn_code")
still_missing(
    "Each write now depends on the board the previous write left. Token 5 must wait for token 4, which "
    "waits for token 3 … a GPU that could do thousands of things at once stands in line. Can the "
    "erase-then-write be done in parallel?"
)
next_lesson("deltanet")
