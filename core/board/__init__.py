"""The readable memory playground: named keys written as key→value pairs onto one board.

The board lessons (Linear attention to Forgetting) use it to show what a fixed-size memory can and cannot hold. A key is a
name ("apple", "sky", "k7") mapped to a fixed unit vector in `d` dimensions; a
value is a name mapped to a fixed vector in `d_v` dimensions (default d_v = d): the
first d_v values get one column of the board each (one-hot, so the board is easy to
read), later ones random unit vectors, because a fixed-size board has no more
columns to give.

The board is the state `S` of shape (d, d_v) in the fla layout (docs/sources.md §0): writing
the pair (k, v) runs one step of a rule from the registry (core/mechanisms.py) —

    linear       S ← S + k vᵀ                                  (add; Katharopoulos et al. 2020)
    delta        S ← S + β k (v − Sᵀk)ᵀ                         (erase, then write; Schlag et al. 2021,
                                                                  Yang et al. 2024 arXiv 2406.06484)
    gated_delta  S ← α S, then the delta step                   (one fade rate; arXiv 2412.06464)
    kda          S ← Diag(α) S, then the delta step             (a fade rate per key channel;
                                                                  Kimi Linear arXiv 2510.26692)

and reading key k returns `Sᵀ k` — the ops' output `o = Sᵀ(scale·q)` with q = k and
scale = 1, so reading a unit key back from a board that holds only it returns the
stored value exactly. The baseline, softmax attention, keeps every pair (a cache)
and reads `Σ_j softmax(s·kᵀk_j) v_j` with sharpness s = √d — what a standard
attention head with unit-variance entries would do.

Recall is scored as in associative-recall tests (MQAR, Zoology arXiv 2312.04927):
a key counts as recalled when the value nearest to its readback is the value
written last under that key, with no tie.

Everything returned is numpy float32, so pages can cache and index it.

Modules: `keys` (names → vectors, nearest value), `rules` (registry lookup, fade, β),
`run` (the step recorder and recall), `streams` (what to write), `capacity` (recall
curves, recall over draws), `compare` (where boards part, softmax's misses), `counts` (Linear attention's
arithmetic).
"""

from core.board.capacity import (
    DRAWS,
    FirstLoss,
    RecallOverDraws,
    first_loss,
    last_full_recall,
    pair_counts,
    recall_curve,
    recall_over_draws,
)
from core.board.compare import SoftmaxMisses, board_gaps, join_names, most_different_step, softmax_misses
from core.board.counts import (
    BYTES_PER_NUMBER,
    Regrouping,
    break_even_tokens,
    memory_bytes,
    memory_curve,
    regroup,
    regroup_ops,
)
from core.board.keys import KEY_KINDS, VALUE_SEED_OFFSET, BoardError, KeySpace, nearest, value_vectors
from core.board.rules import BASELINE, Fade, mechanism, rule_names
from core.board.run import BoardRun, Pair, Recall, channel_fill, write_stream
from core.board.streams import (
    FACT,
    TOPIC_A,
    TOPIC_B,
    WORD_KEYS,
    WORD_VALUES,
    TopicSwitch,
    distinct_stream,
    rewrite_stream,
    topic_switch,
    word_stream,
)

__all__ = [
    "BASELINE",
    "DRAWS",
    "FirstLoss",
    "RecallOverDraws",
    "SoftmaxMisses",
    "board_gaps",
    "first_loss",
    "join_names",
    "most_different_step",
    "recall_over_draws",
    "softmax_misses",
    "BYTES_PER_NUMBER",
    "FACT",
    "KEY_KINDS",
    "TOPIC_A",
    "TOPIC_B",
    "VALUE_SEED_OFFSET",
    "WORD_KEYS",
    "WORD_VALUES",
    "BoardError",
    "BoardRun",
    "Fade",
    "KeySpace",
    "Pair",
    "Recall",
    "Regrouping",
    "TopicSwitch",
    "break_even_tokens",
    "channel_fill",
    "distinct_stream",
    "last_full_recall",
    "mechanism",
    "memory_bytes",
    "memory_curve",
    "nearest",
    "pair_counts",
    "recall_curve",
    "regroup",
    "regroup_ops",
    "rewrite_stream",
    "rule_names",
    "topic_switch",
    "value_vectors",
    "word_stream",
    "write_stream",
]
