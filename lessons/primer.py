"""Vectors and matrices: the five pieces of arithmetic the board lessons use, each one live."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.board import vectors
from core.board.keys import nearest
from core.figures import board as fb
from core.figures import primer as fp
from core.i18n import _
from core.specs import SPECS
from core.units import format_small
from ui.charts import show_figure
from ui.course import lesson_ref, lesson_span
from ui.depth import engineer, in_depth
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing

PAIRS = vectors.primer_pairs()
K3_KEY = SPECS["kimi_k3"].linear.head_k_dim  # numbers in one key of a Kimi K3 KDA head (config.json)
PAIR_LABELS = [f"{k} → {v}" for k, v in zip(PAIRS.key_names, PAIRS.value_names, strict=True)]


def spelled_out(a: np.ndarray, b: np.ndarray) -> str:
    """A dot product written out from the numbers themselves: "0.50×0.20 + (−0.10)×0.40 = 0.06"."""
    terms = " + ".join(f"{_n(x)}×{_n(y)}" for x, y in zip(a, b, strict=True))
    return f"{terms} = {vectors.dot(a, b):.2f}"


def _n(x: float) -> str:
    return f"{x:.2f}" if x >= 0 else f"({x:.2f})".replace("-", "−")


lesson_header("primer")
new_words("transpose", "outer_product", "unit_vector", here="primer")
problem(
    _(
        "The KV cache grows with every token. The next lessons replace it with a **board**: one small grid of "
        "numbers (a *matrix*) that every token writes into. Five small pieces of arithmetic, each live below, "
        "are all you need to follow them."
    )
)

# ------------------------------------------------------------------ 1. a vector
st.header(_("1 · A vector is a list of numbers that means something"))
in_depth(
    _(
        "A **vector** is a short list of numbers where each place has a meaning: a fruit described by how sweet "
        "and how sour it is is a vector of two numbers, drawn as an arrow (across, then up). A model's keys and "
        "queries are longer vectors."
    ),
    _(
        "A **vector** is just a short list of numbers, where each place in the list has a meaning. Describe "
        "a fruit by two numbers — how sweet it is and how sour — and you have a vector with two numbers. "
        "Two numbers can be drawn as an arrow from the corner of a grid: the first says how far across, "
        "the second how far up. A model's keys and queries are the same thing with more numbers "
        "({k3_key} in a Kimi K3 head, {small} on the small board below); each number is one *channel*."
    ).format(k3_key=K3_KEY, small=vectors.PRIMER_D),
)
c1, c2 = st.columns(2)
sweet = c1.slider(_("how sweet (0 to 1)"), 0.0, 1.0, 0.8, 0.05, key="pr_sweet")
sour = c2.slider(_("how sour (0 to 1)"), 0.0, 1.0, 0.3, 0.05, key="pr_sour")
fruit = np.array([sweet, sour])
show_figure(
    fp.arrows_figure(
        [(_("your fruit"), fruit)],
        title=_("one fruit as a vector of two numbers"),
        x_title=_("how sweet (score, no unit)"),
        y_title=_("how sour (score, no unit)"),
        lo=0.0,
        hi=1.0,
    ),
    key="pr_vector",
)
in_depth(
    _("Your fruit is the vector ({sweet:.2f}, {sour:.2f}); its arrow is {length:.2f} long.").format(
        sweet=sweet, sour=sour, length=vectors.length(fruit)
    ),
    _(
        "Your fruit is the vector ({sweet:.2f}, {sour:.2f}). Its arrow is {length:.2f} long "
        "(Pythagoras: the square root of the two numbers squared and added)."
    ).format(sweet=sweet, sour=sour, length=vectors.length(fruit)),
    show=st.caption,
)
formula(
    r"v = (v_1, v_2, \dots, v_d), \qquad \lVert v \rVert = \sqrt{v_1^2 + v_2^2 + \dots + v_d^2}",
    caption=_("d is how many numbers the vector has; ‖v‖ is its length."),
    key="pr_f1",
)

# ------------------------------------------------------------------ 2. the dot product
st.header(_("2 · The dot product: how much two arrows point the same way"))
in_depth(
    _(
        "Multiply two vectors place by place and add the results: that is their **dot product**, large when the "
        "arrows point the same way, 0 at right angles, negative when they point apart."
    ),
    _(
        "Take two vectors of the same size, multiply their numbers place by place, and add the results: "
        "that single number is their **dot product**. It is large and positive when the arrows point the "
        "same way, exactly 0 when they stand at right angles, and negative when they point apart. Longer "
        "arrows give bigger numbers. Move the two arrows and watch it."
    ),
)
c1, c2, c3, c4 = st.columns(4)
a_dir = c1.slider(_("direction of a (°)"), 0, 355, 20, 5, key="pr_a_dir")
a_len = c2.slider(_("length of a"), 0.25, 2.0, 1.5, 0.25, key="pr_a_len")
b_dir = c3.slider(_("direction of b (°)"), 0, 355, 70, 5, key="pr_b_dir")
b_len = c4.slider(_("length of b"), 0.25, 2.0, 1.0, 0.25, key="pr_b_len")
a, b = vectors.arrow(a_dir, a_len), vectors.arrow(b_dir, b_len)
show_figure(
    fp.arrows_figure(
        [("a", a), ("b", b)],
        title=_("two arrows and their dot product"),
        x_title=_("first number (no unit)"),
        y_title=_("second number (no unit)"),
        lo=-2.0,
        hi=2.0,
        coordinates=False,
    ),
    key="pr_dot",
)
m1, m2, m3 = st.columns(3)
m1.metric(_("dot product a · b"), f"{vectors.dot(a, b):.2f}", help="a₁b₁ + a₂b₂")
m2.metric(_("angle between them"), f"{vectors.angle_between(a, b):.0f}°")
m3.metric(
    _("cosine of the angle"),
    f"{vectors.cosine(a, b):.2f}",
    help=_(
        "the dot product of the two arrows shrunk or stretched to length 1: a · b divided by both lengths"
    ),
)
st.caption(
    _("a = ({a1:.2f}, {a2:.2f}) and b = ({b1:.2f}, {b2:.2f}), so a · b = {sum}.").format(
        a1=a[0], a2=a[1], b1=b[0], b2=b[1], sum=spelled_out(a, b)
    )
)
in_depth(
    _(
        "Arrows of length 1 are *unit vectors*: their dot product measures direction only, from 1 (same way) "
        "through 0 (right angles: *orthogonal*) to −1 (opposite). The board lessons use unit keys."
    ),
    _(
        "Set both lengths to 1 and the dot product only measures direction: it becomes the **cosine** of "
        "the angle, a number from 1 (same way) through 0 (right angles) to −1 (opposite). An arrow of length "
        "1 is a *unit vector*; two arrows at right angles are *orthogonal*. The board lessons use unit keys, "
        "so their dot products are exactly these cosines."
    ),
)
notice(
    _("Put b at right angles to a (90° apart). What will the dot product be, however long the arrows are?"),
    _(
        "0: at right angles the place-by-place products cancel out. That is why orthogonal keys never "
        "disturb each other on a board ({lesson})."
    ).format(lesson=lesson_ref("collisions")),
    key="pr_q1",
)
formula(
    r"a \cdot b = a^\top b = a_1 b_1 + a_2 b_2 + \dots + a_d b_d = \lVert a\rVert\,\lVert b\rVert \cos\theta",
    caption=_(
        "θ is the angle between the arrows. aᵀ (a transpose) is a written as a row: a row times a column "
        "is a dot product."
    ),
    key="pr_f2",
)

# ------------------------------------------------------------------ 3. matrix × vector
st.header(_("3 · A matrix times a vector: many dot products at once"))
in_depth(
    _(
        "A **matrix** is a grid of numbers, one vector per row. A matrix times a vector q is one dot product per "
        "row. Below, the rows are four words' keys and q is the key you pick: the row pointing the same way as q "
        "scores highest — attention's *score* step in {lesson}."
    ).format(lesson=lesson_ref("kv_cache")),
    _(
        "A **matrix** is a grid of numbers: a stack of vectors, one per row. Multiplying a matrix by a "
        "vector q means one dot product per row, and the answers form a new column. Below, the rows are the "
        "keys of four words (unit vectors of 4 numbers, the same the board lessons give these words) and q "
        "is the key of the word you pick: the row that points the same way as q scores highest. This is "
        "exactly the *score* step of attention in {lesson}, done for every key at once."
    ).format(lesson=lesson_ref("kv_cache")),
)
c1, c2 = st.columns(2)
asked = c1.selectbox(_("q is the key of"), PAIRS.key_names, key="pr_query")
row = c2.radio(_("spell out the row of"), PAIRS.key_names, key="pr_row", horizontal=True)
q = PAIRS.key(asked)
scores = vectors.matrix_vector(PAIRS.keys, q)
highlight = PAIRS.key_names.index(row)
st.markdown(f"q = ({', '.join(f'{x:.2f}' for x in q)})")
show_figure(
    fp.matrix_vector_figure(
        PAIRS.keys,
        scores,
        PAIRS.key_names,
        highlight=highlight,
        title=_("four keys times the key of {word}").format(word=asked),
    ),
    key="pr_matvec",
)
best = PAIRS.key_names[int(np.argmax(scores))]
in_depth(
    _(
        "Red = high score, blue = negative. The highest is {best}'s ({score:.2f}): the row pointing the same way as q."
    ).format(best=best, score=scores.max()),
    _(
        "Outlined: {row}'s row · q = {sum}. The highest score is {best}'s "
        "({score:.2f}); a unit key's dot product with itself is its length squared, 1."
    ).format(row=row, sum=spelled_out(PAIRS.keys[highlight], q), best=best, score=scores.max()),
    show=st.caption,
)
formula(
    r"(M q)_i = \sum_j M_{ij}\, q_j = (\text{row } i \text{ of } M) \cdot q",
    caption=_("An n × d matrix times a vector of d numbers gives n numbers, one per row."),
    key="pr_f3",
)

# ------------------------------------------------------------------ 4. outer product: write and read
st.header(_("4 · The outer product: writing one pair on the board"))
in_depth(
    _(
        "Now the other way round: a column times a row. The key k stands as a column, the value v as a row, and "
        "cell (i, j) gets k's i-th number times v's j-th: the **outer product** k vᵀ. Adding two such grids "
        "writes two pairs on one board; reading multiplies the board by a key."
    ),
    _(
        "Now the other way round: a column times a row. The key k stands as a column (one number per board "
        "row), the value v lies as a row (one number per board column), and every cell (i, j) gets k's i-th "
        "number times v's j-th. That grid is the **outer product** k vᵀ — the little ᵀ (*transpose*) turns "
        "the column v into a row. Each value here owns one column, so k vᵀ copies the key into that value's "
        "column. Adding two such grids writes two pairs on one board; reading multiplies the board by a key."
    ),
)
c1, c2 = st.columns(2)
first = c1.selectbox(_("first pair"), PAIR_LABELS, index=0, key="pr_pair1")
second = c2.selectbox(_("second pair"), [p for p in PAIR_LABELS if p != first], index=0, key="pr_pair2")
i1, i2 = PAIR_LABELS.index(first), PAIR_LABELS.index(second)
w1 = vectors.outer(PAIRS.keys[i1], PAIRS.values[i1])
w2 = vectors.outer(PAIRS.keys[i2], PAIRS.values[i2])
board = vectors.write(
    vectors.write(np.zeros_like(w1), PAIRS.keys[i1], PAIRS.values[i1]), PAIRS.keys[i2], PAIRS.values[i2]
)
show_figure(
    fb.update_parts_figure(
        {"k₁ v₁ᵀ": w1, "+ k₂ v₂ᵀ": w2, "= S": board},
        1.0,
        value_names=PAIRS.value_names,
        title=_("{first} plus {second}: two outer products add up to the board S").format(
            first=first, second=second
        ),
    ),
    key="pr_outer",
)
st.caption(_("Red = positive, blue = negative; each pair fills its own value's column."))
read_with = st.radio(_("read the board with the key of"), PAIRS.key_names, key="pr_read", horizontal=True)
k_read = PAIRS.key(read_with)
readback = vectors.read(board, k_read)
show_figure(
    fp.readback_figure(
        readback,
        PAIRS.value_names,
        title=_("reading the board with {word}'s key: Sᵀ k").format(word=read_with),
    ),
    key="pr_readback",
)
own = {PAIRS.value_names[i]: PAIRS.key_names[i] for i in (i1, i2)}
said = _(", ").join(
    _("{amount:.2f} in {colour}'s column ({read} · {key} = {dot:.2f})").format(
        amount=readback[PAIRS.value_names.index(colour)],
        colour=colour,
        read=read_with,
        key=key,
        dot=vectors.dot(k_read, PAIRS.key(key)),
    )
    for colour, key in own.items()
)
in_depth(
    _(
        "Reading {read} gives {said}: weight 1 where the key was written, plus a leak from every key pointing "
        "partly the same way."
    ).format(read=read_with, said=said),
    _(
        "Reading {read} gives {said}. Each column holds one written key, so reading is one dot product "
        "per column: a key comes back with weight 1 where it was written, and every other key that points "
        "partly the same way leaks in by its dot product."
    ).format(read=read_with, said=said),
    show=st.caption,
)
notice(
    _("Read the board with a key that was not written (neither pair). Will the bars be zero?"),
    _(
        "No: they are that key's dot products with the two written keys, because these random unit keys "
        "are not at right angles. How much such leaks add up to is {lesson}."
    ).format(lesson=lesson_ref("collisions")),
    key="pr_q2",
)
formula(
    r"(k v^\top)_{ij} = k_i\, v_j, \qquad S = k_1 v_1^\top + k_2 v_2^\top, \qquad "
    r"S^\top q = v_1\,(k_1 \cdot q) + v_2\,(k_2 \cdot q)",
    caption=_("Exactly linear attention's write and read (core.ops.linear_attention: S += k vᵀ, o = Sᵀ q)."),
    key="pr_f4",
)

# ------------------------------------------------------------------ 5. matrix product
st.header(_("5 · A matrix product: many reads side by side"))
in_depth(
    _(
        "Stack several queries as rows of a matrix Q and multiply by the board S: each row of the result is one "
        "read, as in section 4. Below, every written key is read back at once."
    ),
    _(
        "Stack several queries as the rows of a matrix Q and multiply by the board S: row i of Q S is query "
        "i read from the board, as in section 4 — a matrix product is matrix-times-vector done for every row "
        "at once. The board itself is one too: stack the keys as rows of K and the values as rows of V, and "
        "Kᵀ V adds up every pair's outer product in one go. Below, the first n pairs go on the board and "
        "every written key is read back at once."
    ),
)
n = st.slider(_("pairs on the board"), 1, len(PAIRS.key_names), len(PAIRS.key_names), key="pr_n")
queries = PAIRS.keys[:n]
board_n = PAIRS.board(n)
product = vectors.matrix_product(queries, board_n)
show_figure(
    fp.matrix_product_figure(
        queries,
        board_n,
        product,
        PAIRS.key_names[:n],
        PAIRS.value_names,
        title=_("{n} reads at once: the queries Q (one per row) times the board S").format(n=n),
    ),
    key="pr_matmul",
)
one_by_one = np.zeros_like(board_n)
for k, v in zip(PAIRS.keys[:n], PAIRS.values[:n], strict=True):
    one_by_one = vectors.write(one_by_one, k, v)
picked = nearest(product, PAIRS.values)
right = int((picked == np.arange(n)).sum())
gap = float(np.abs(board_n - one_by_one).max())
same = (
    _("Kᵀ V and {n} writes one by one are exactly equal.").format(n=n)
    if gap == 0
    else _("Kᵀ V and {n} writes one by one differ by at most {gap} (float rounding).").format(
        n=n, gap=format_small(gap)
    )
)
read_back = _(
    "Each row's largest entry names the value read back: {right} of {n} keys come back nearest their own value."
).format(right=right, n=n)
# Engineer: two sentences (Japanese puts no space between them)
in_depth(read_back, _("{first} {second}").format(first=same, second=read_back), show=st.caption)
if engineer():
    st.markdown(
        _(
            "Training reads whole stretches of text at once like this: {linear} regroups "
            "attention as two of these products, and {chunks} cuts the text into chunks so each "
            "chunk is a few matrix products. {span} use nothing beyond the five pieces on this page."
        ).format(
            linear=lesson_ref("linear_attention"),
            chunks=lesson_ref("chunks"),
            span=lesson_span("linear_attention", "forgetting").capitalize(),
        )
    )
formula(
    r"(Q S)_{ij} = \sum_r Q_{ir}\, S_{rj}, \qquad \text{row } i \text{ of } QS = S^\top q_i, "
    r"\qquad K^\top V = \sum_t k_t v_t^\top",
    caption=_(
        "An n × d matrix times a d × d_v matrix gives n × d_v: every row of the first meets every "
        "column of the second."
    ),
    key="pr_f5",
)
code(vectors.dot, vectors.matrix_vector, vectors.outer, vectors.read, vectors.matrix_product, key="pr_code")
still_missing(
    _(
        "That is the whole toolkit. Next, linear attention puts it to work: one board of fixed size, every "
        "token writes its key–value pair as an outer product, and every read is the board times a query."
    )
)
next_lesson("primer")
