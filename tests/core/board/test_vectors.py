"""The primer's arithmetic (core.board.vectors) equals numpy/einsum and what the board lessons really run:
core.ops.linear_attention's write and read, and the board playground's keys and boards."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from core import board as bd
from core.board import vectors
from core.ops import linear_attention

RNG = np.random.default_rng(7)


def test_dot_length_cosine_and_angle_equal_numpy():
    a, b = RNG.standard_normal(6), RNG.standard_normal(6)
    assert vectors.dot(a, b) == pytest.approx(float(np.dot(a, b)))
    assert vectors.length(a) == pytest.approx(float(np.linalg.norm(a)))
    cos = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
    assert vectors.cosine(a, b) == pytest.approx(cos)
    assert vectors.angle_between(a, b) == pytest.approx(math.degrees(math.acos(cos)))


@pytest.mark.parametrize(
    ("a_deg", "b_deg", "sign"), [(20, 20, 1), (20, 110, 0), (20, 200, -1), (0, 45, 1), (300, 30, 0)]
)
def test_the_dot_product_says_how_much_two_arrows_point_the_same_way(a_deg, b_deg, sign):
    a, b = vectors.arrow(a_deg, 1.5), vectors.arrow(b_deg, 0.5)
    assert vectors.length(a) == pytest.approx(1.5) and vectors.length(b) == pytest.approx(0.5)
    d = vectors.dot(a, b)
    assert (d > 1e-9) - (d < -1e-9) == sign
    # unit vectors: the dot product is the cosine of the angle between them
    ua, ub = vectors.arrow(a_deg, 1.0), vectors.arrow(b_deg, 1.0)
    assert vectors.dot(ua, ub) == pytest.approx(math.cos(math.radians(b_deg - a_deg)), abs=1e-12)
    assert vectors.cosine(a, b) == pytest.approx(vectors.dot(ua, ub))


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="same length"):
        vectors.dot(np.ones(2), np.ones(3))
    with pytest.raises(ValueError, match="length 0"):
        vectors.cosine(np.zeros(2), np.ones(2))
    with pytest.raises(ValueError, match="rows as long"):
        vectors.matrix_product(np.ones((2, 3)), np.ones((2, 3)))


def test_matrix_vector_is_one_dot_per_row_and_equals_numpy():
    m, x = RNG.standard_normal((5, 4)), RNG.standard_normal(4)
    np.testing.assert_allclose(vectors.matrix_vector(m, x), m @ x, rtol=1e-12)
    np.testing.assert_allclose(vectors.row_products(m, x).sum(axis=1), m @ x, rtol=1e-12)


def test_outer_read_and_matrix_product_equal_einsum():
    k, v, q = RNG.standard_normal(4), RNG.standard_normal(3), RNG.standard_normal(4)
    np.testing.assert_allclose(vectors.outer(k, v), np.einsum("i,j->ij", k, v))
    S = RNG.standard_normal((4, 3))
    np.testing.assert_allclose(vectors.read(S, q), np.einsum("kv,k->v", S, q), rtol=1e-12)
    np.testing.assert_allclose(vectors.read(S, q), q @ S, rtol=1e-12)  # Sᵀ q = qᵀ S
    A, B = RNG.standard_normal((5, 4)), RNG.standard_normal((4, 3))
    np.testing.assert_allclose(vectors.matrix_product(A, B), np.einsum("nk,kv->nv", A, B), rtol=1e-12)


def test_write_and_read_equal_linear_attention_step():
    """One token of core.ops.linear_attention (scale 1): the same board, write and output."""
    K, V = 4, 3
    S0, k, v, q = (
        RNG.standard_normal((K, V)),
        RNG.standard_normal(K),
        RNG.standard_normal(V),
        RNG.standard_normal(K),
    )
    t = lambda x: torch.tensor(x, dtype=torch.float64)[None, None]  # noqa: E731  (1, 1, …) = B, H
    result = linear_attention.step(t(S0), t(q), t(k), t(v), scale=1.0)
    new_board = vectors.write(S0, k, v)
    np.testing.assert_allclose(result.state[0, 0].numpy(), new_board, rtol=1e-12)
    np.testing.assert_allclose(result.parts["write"][0, 0].numpy(), vectors.outer(k, v), rtol=1e-12)
    np.testing.assert_allclose(result.output[0, 0].numpy(), vectors.read(new_board, q), rtol=1e-12)
    np.testing.assert_allclose(result.recalled[0, 0].numpy(), vectors.read(S0, k), rtol=1e-12)


def test_a_stack_of_writes_and_reads_equals_linear_attention_recurrent_and_chunk():
    """Kᵀ V is every outer product added up (the final board), and Q Kᵀ V reads every query at once —
    what linear attention's recurrent and chunk forms hand over at the end of the text."""
    T, K, V = 6, 4, 3
    q, k, v = RNG.standard_normal((T, K)), RNG.standard_normal((T, K)), RNG.standard_normal((T, V))
    t = lambda x: torch.tensor(x, dtype=torch.float64)[None, :, None]  # noqa: E731  (1, T, 1, D)
    out, final = linear_attention.recurrent(t(q), t(k), t(v), scale=1.0)
    board = vectors.matrix_product(k.T, v)
    np.testing.assert_allclose(final[0, 0].numpy(), board, rtol=1e-12)
    by_steps = np.zeros((K, V))
    for t_ in range(T):
        by_steps = vectors.write(by_steps, k[t_], v[t_])
        np.testing.assert_allclose(out[0, t_, 0].numpy(), vectors.read(by_steps, q[t_]), rtol=1e-10)
    # the last token reads the whole board; so does every query of the matrix product Q S at once
    np.testing.assert_allclose(vectors.matrix_product(q, board)[-1], out[0, -1, 0].numpy(), rtol=1e-10)
    _, chunk_final = linear_attention.chunk(t(q), t(k), t(v), scale=1.0, chunk_size=2)
    np.testing.assert_allclose(chunk_final[0, 0].numpy(), board, rtol=1e-10)


def test_the_primer_pairs_are_the_board_playgrounds_keys_and_boards():
    pairs = vectors.primer_pairs()
    assert pairs.key_names == ("apple", "sky", "grass", "snow")
    assert pairs.value_names == ("red", "blue", "green", "white")
    np.testing.assert_allclose(np.linalg.norm(pairs.keys, axis=1), 1.0, rtol=1e-6)  # unit keys
    np.testing.assert_array_equal(pairs.values, np.eye(4))  # one column per value
    run = bd.write_stream(bd.word_stream(4), "linear", d=vectors.PRIMER_D, d_v=4)
    np.testing.assert_allclose(pairs.keys, run.keys, rtol=1e-6)
    for n in range(1, 5):
        np.testing.assert_allclose(pairs.board(n), run.board(n), rtol=1e-5, atol=1e-6)
