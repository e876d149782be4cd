"""Linear attention: one board of fixed size, written over and over."""

from __future__ import annotations

import functools

import streamlit as st

from core import board as bd
from core.figures import board as fb
from core.figures import board_charts as fbc
from core.i18n import _, ngettext
from core.ops import linear_attention
from core.units import format_bytes, format_count, format_small
from ui.board_controls import key_choice
from ui.charts import charts_side_by_side, show_figure
from ui.course import lesson_ref
from ui.depth import engineer, in_depth
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing
from ui.primer_link import primer_pointer
from ui.stepped import step_controls

REAL_HEAD = (
    128  # key and value size of one head in Kimi Linear / Kimi K3 KDA layers (docs/sources.md §1.6, §3.1)
)


@st.cache_data(show_spinner=False)
def regrouping(T: int, seed: int) -> bd.Regrouping:
    return bd.regroup(T=T, d_k=3, d_v=3, seed=seed)


@st.cache_data(show_spinner=False)
def over_draws(n: int, d: int, keys: str, rule: str) -> bd.RecallOverDraws:
    return bd.recall_over_draws(rule, d, n, keys=keys)


@st.cache_data(show_spinner=False)
def stream(n: int, d: int, keys: str, rule: str) -> bd.BoardRun:
    return bd.write_stream(bd.word_stream(n), rule, d=d, keys=keys)


lesson_header("linear_attention")
new_words("collision", engineer_keys=("flops",), here="linear_attention")
problem(
    _(
        "The KV cache made each new token cheap to compute, but it keeps **every** past key and value: "
        "memory grows with every token, and each step has to read all of it back. A long chat becomes "
        "a long shelf that is slow to scan."
    )
)

in_depth(
    _(
        "Linear attention keeps one **board** instead: a small grid of numbers of fixed size. Every token adds "
        "its key→value pair onto it, and reading means multiplying the board by a query. The board never grows, "
        "however long the text."
    ),
    _(
        "Linear attention keeps one **board** instead: a small grid of numbers of fixed size. Every "
        "token adds its key→value pair onto the same board, and reading means multiplying the board "
        "by a query. The board never grows, however long the text. What makes this possible is a "
        "tiny fact about multiplying matrices (a **matrix multiplication** makes each entry of the result from "
        "one row of the first matrix and one column of the second: multiply them entry by entry and add up)."
    ),
)
primer_pointer("matrix products")

# ------------------------------------------------------------------ 1. regrouping
st.header(_("1 · Same numbers, different order"))
in_depth(
    _(
        "Attention without its softmax is two matrix products, and matrix products can be regrouped: "
        "`(QKᵀ)V = Q(KᵀV)`. The right-hand route first folds all keys and values into `KᵀV`: that small matrix "
        "*is* the board. Below, both routes run on the same small random numbers."
    ),
    _(
        "Attention without its softmax (step 2 of the four in {lesson}) is two matrix products: "
        "the queries **Q** meet the keys **K** "
        "(`QKᵀ`, one score per pair of tokens), then the scores mix the values **V**. Matrix products "
        "can be regrouped — `(QKᵀ)V = Q(KᵀV)` — and the right-hand grouping first squeezes all keys "
        "and values into `KᵀV`: that small matrix *is* the board. Below, both routes run on the same "
        "small random numbers (T tokens, key and value size 3)."
    ).format(lesson=lesson_ref("kv_cache")),
)
c1, c2 = st.columns([2, 1])
T_small = c1.slider(_("tokens T"), 2, 8, 4, key="la_T", help=_("How many tokens the small example has."))
# Story draws one fixed set of random numbers; Engineer may pick another (a seed)
seed = c2.number_input(_("random numbers (seed)"), 0, 999, 0, key="la_seed") if engineer() else 0
rg = regrouping(T_small, int(seed))
scores_fig, left_fig, board_fig, right_fig = fb.regrouping_figures(rg.scores, rg.left, rg.board, rg.right)
st.markdown(_("**Left route, (QKᵀ)V:** every query meets every key, then the scores mix the values."))
charts_side_by_side(("", scores_fig, "la_scores"), ("", left_fig, "la_left"))
st.markdown(
    _("**Right route, Q(KᵀV):** keys and values first fold into the board, then each query reads it.")
)
charts_side_by_side(("", board_fig, "la_small_board"), ("", right_fig, "la_right"))
st.caption(
    _(
        "One colour scale for all four grids (red = positive, blue = negative): the two results match cell by cell."
    )
)
m1, m2, m3 = st.columns(3)
m1.metric(_("largest difference between the two results"), format_small(rg.max_difference))
m2.metric(
    _("multiply-adds, (QKᵀ)V"), f"{rg.left_ops:,}", help=_("T·T·d_k for the scores + T·T·d_v to mix values")
)
m3.metric(
    _("multiply-adds, Q(KᵀV)"), f"{rg.right_ops:,}", help=_("T·d_k·d_v for the board + T·d_k·d_v to read it")
)
big_left, big_right = bd.regroup_ops(100_000, REAL_HEAD, REAL_HEAD)
in_depth(
    _(
        "Both routes give the same numbers, up to float rounding. But at 100,000 tokens the right route needs "
        "{ratio:,.0f}× fewer multiply-adds: the left grows with T², the right with T."
    ).format(ratio=big_left / big_right),
    _(
        "The difference is float rounding only. The counts grow differently: at 100,000 tokens and "
        "head size {head}, the left route needs {left} multiply-adds, the right "
        "{right} ({ratio:,.0f}× fewer) — the left grows with T², the right with T."
    ).format(
        head=REAL_HEAD,
        left=format_count(big_left),
        right=format_count(big_right),
        ratio=big_left / big_right,
    ),
    show=st.caption,
)
if engineer():
    st.caption(
        _(
            "In FLOPs (a multiply-add is two floating-point operations): {left} against {right} for one head "
            "at 100,000 tokens."
        ).format(left=format_count(2 * big_left), right=format_count(2 * big_right))
    )
    st.markdown(
        _(
            "For text generation there is one more detail: a token may only look at tokens before it. "
            "Row by row the regrouping still works — token *t* reads `q_tᵀ (k_1v_1ᵀ + … + k_tv_tᵀ)` — so "
            "the board is simply the running sum of every token's outer product `k vᵀ`."
        )
    )

# ------------------------------------------------------------------ 2. the board, token by token
st.header(_("2 · The board, written token by token"))
in_depth(
    _(
        "Now a readable version. Each **key** is a word (apple, sky, …) turned into a vector of *d* numbers; "
        "each **value** is a colour with a board column of its own. Writing a pair adds `k vᵀ` to the board: "
        "the key says *which rows*, the value *which column*. Reading a key multiplies the board by it."
    ),
    _(
        "Now a readable version. Each **key** is a word (apple, sky, …) turned into a fixed vector of "
        "*d* numbers; each **value** is a colour. The first *d* colours get one board column each; once the "
        "columns run out, later colours are random mixes of all columns. Writing the pair adds "
        "`k vᵀ` to the board: the key's numbers say *which rows*, the value says *which column*. "
        "Reading a key multiplies the board by it. (Reads here use scale 1, so a key that is alone on "
        "the board gives back exactly its value; real models also multiply by 1/√d, one over the square root of "
        "the key size, so that scores do not grow with d.)"
    ),
)
c1, c2, c3 = st.columns(3)
d = c1.slider(_("key size d (board rows)"), 2, 16, 8, key="la_d")
n = c2.slider(_("pairs written"), 1, 16, 12, key="la_n")
keys = key_choice("la_keys", where=c3)
run = stream(n, d, keys, "linear")


@st.fragment
def board_stepper(run: bd.BoardRun, d: int) -> None:
    """Step controls and the stepped picture: a Step click reruns only this part."""
    t = step_controls("la_t", run.T, unit=_("token"))
    limit = fb.color_limit(run.new)
    if t == 0:
        st.markdown(_("The board starts empty. Press **Step** to write the first pair."))
        show_figure(
            fb.board_figure(run.board(0), limit, value_names=run.value_names, title=_("the empty board")),
            key="la_board",
        )
    else:
        k_name, v_name = run.pairs[t - 1]
        best = run.nearest_name(run.outputs[t - 1]) or _("two values equally")
        show_figure(
            fb.board_figure(
                run.board(t),
                limit,
                value_names=run.value_names,
                key_vector=run.token_keys[t - 1],
                title=_("after token {t}: wrote {key} → {value}").format(t=t, key=k_name, value=v_name),
            ),
            key="la_board",
        )
        column = (
            _("in {value}'s column").format(value=v_name)
            if v_name in run.value_names[: run.V]
            else _(
                "spread over every column ({value} came after the board's {columns} columns ran out, so "
                "its value is a random mix of them)"
            ).format(value=v_name, columns=run.V)
        )
        st.caption(
            _(
                "The narrow column is *{key}*'s key: the write `k vᵀ` lands in the rows it lights up, "
                "{column}. Reading *{key}* right after writing comes nearest to **{best}**."
            ).format(key=k_name, column=column, best=best)
        )
    m1, m2 = st.columns(2)
    cache_b, board_b = bd.memory_bytes(t, d, run.V)
    m1.metric(
        _("board size"),
        _("{d} × {V} numbers = {size}").format(d=d, V=run.V, size=format_bytes(board_b)),
        help=_("4 bytes per number (fp32); the same after every token"),
    )
    m2.metric(
        _("a KV cache of the same tokens would hold"),
        format_bytes(cache_b),
        help=_("t keys of size d plus t values, fp32"),
    )


board_stepper(run, d)

# ------------------------------------------------------------------ 3. memory flat in T
st.header(_("3 · Memory stays flat"))
st.markdown(
    _(
        "Scale it up to one real head (key and value size {head}, every number stored as fp32: 4 bytes). "
        "The cache adds a key and a value for every token; the board is one fixed matrix."
    ).format(head=REAL_HEAD)
)
Ts, cache_bytes, board_bytes = bd.memory_curve(131_072, REAL_HEAD, REAL_HEAD)
show_figure(
    fbc.memory_figure(Ts, cache_bytes, board_bytes, title=_("one head: bytes held vs tokens")),
    key="la_memory",
)
cross = bd.break_even_tokens(REAL_HEAD, REAL_HEAD)
st.caption(
    _(
        "The cache passes the board after {cross} tokens and at 128K tokens holds {cache} against {board} for the board."
    ).format(
        cross=cross,
        cache=format_bytes(bd.memory_bytes(131_072, REAL_HEAD, REAL_HEAD)[0]),
        board=format_bytes(board_bytes[-1]),
    )
)

# ------------------------------------------------------------------ 4. the price
st.header(_("4 · The price: a coarser memory"))
in_depth(
    _(
        "Read every key back and compare with softmax attention, which still keeps every pair in its cache. The "
        "board only has the sum, so keys that share rows bleed into each other."
    ),
    _(
        "Read every key back from the board and compare with softmax attention on the same stream. "
        "Softmax attention still has every pair in its cache and weighs them by how well each key "
        "matches; the board only has the sum, so keys that share rows bleed into each other."
    ),
)
soft = stream(n, d, keys, "softmax")
rec_lin, rec_soft = run.recall(), soft.recall()
lin_draws, soft_draws = over_draws(n, d, keys, "linear"), over_draws(n, d, keys, "softmax")
show_figure(
    fb.compare_readbacks_figure(
        {
            # short two-line titles (the caption says what the % is): two panels share a phone's width
            _("softmax:<br>{share:.0%}").format(share=rec_soft.accuracy): rec_soft.readback,
            _("board:<br>{share:.0%}").format(share=rec_lin.accuracy): rec_lin.readback,
        },
        rec_lin.names,
        value_names=run.value_names,
        targets=rec_lin.target,
    ),
    key="la_price",
)
misses = bd.softmax_misses(soft)
price_words = [
    _(
        "{pairs} on a board with {d} rows, in one random draw of keys (draw 1, the one "
        "{collisions} pictures too): the board recalls {board:.0%} of the keys "
        "(nearest value right), softmax attention {softmax:.0%}. Averaged over {draws} draws "
        "(as {collisions}'s curves are): board {board_mean:.0%}, softmax {softmax_mean:.0%}."
    ).format(
        pairs=ngettext("{n:,} pair", "{n:,} pairs", n).format(n=n),
        d=d,
        collisions=lesson_ref("collisions"),
        board=rec_lin.accuracy,
        softmax=rec_soft.accuracy,
        draws=len(bd.DRAWS),
        board_mean=lin_draws.mean,
        softmax_mean=soft_draws.mean,
    )
]
if misses.missed:
    twins = [
        _("{key} (twin: {twin}, overlap {overlap:.2f})").format(
            key=m, twin=misses.twin[m][0], overlap=misses.twin[m][1]
        )
        for m in misses.missed
    ]
    price_words.append(
        _(
            "Softmax keeps every pair, yet misses a key when another key points almost the same way: it weighs "
            "every stored pair by how well it matches, so the twin takes a large share — here {twins}."
        ).format(twins=bd.join_names(twins))
    )
price_words.append(
    _(
        "Pale colours off the right "
        "column are other pairs leaking in; the black outline marks the value each key should return (colours "
        "past the board's d columns have none: their values are mixes of all columns)."
    )
)
in_depth(
    _(
        "{pairs} on a board with {d} rows: the board recalls {board:.0%} of the keys, softmax attention "
        "{softmax:.0%}. Red = much of a value comes back; the outline marks the value each key should return."
    ).format(
        pairs=ngettext("{n:,} pair", "{n:,} pairs", n).format(n=n),
        d=d,
        board=rec_lin.accuracy,
        softmax=rec_soft.accuracy,
    ),
    functools.reduce(lambda a, b: _("{first} {second}").format(first=a, second=b), price_words),
    show=st.caption,
)  # sentences side by side (Japanese puts no space between them)

notice(
    _("With orthogonal keys and at most d pairs, how many keys will the board get wrong?"),
    _(
        "None: orthogonal keys use separate rows, so nothing leaks. Set keys to *orthogonal* and pairs ≤ d "
        "to check — then push the pairs past d and watch the first mistakes appear ({lesson})."
    ).format(lesson=lesson_ref("collisions")),
    key="la_q1",
)
notice(
    _("If you write 10 times as many tokens, how much bigger does the board get?"),
    _("Not at all. Only the numbers inside change; the cache would be 10 times bigger."),
    key="la_q2",
)
formula(
    r"S_t = S_{t-1} + k_t v_t^\top,\qquad o_t = S_t^\top q_t = \sum_{j\le t} v_j\,(k_j^\top q_t),"
    r"\qquad (QK^\top)V = Q(K^\top V)",
    caption=_(
        "S is the board (key size × value size). With a causal mask the regrouping holds row by row, "
        "so S is a running sum (Katharopoulos et al. 2020; fla `fla/ops/linear_attn/naive.py`)."
    ),
    key="la_formula",
)
code(linear_attention.step, bd.write_stream, key="la_code")
still_missing(
    _(
        "The board has a fixed number of rows. Keep adding pairs and they start to land on top of each "
        "other: a full board blurs. How many pairs fit, and what does a collision look like?"
    )
)
next_lesson("linear_attention")
