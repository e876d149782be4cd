"""The MQAR generator and the reader's-sequence parser (core/recall/task.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.recall.task import (
    DEFAULT_VOCAB,
    IGNORE_INDEX,
    RecallVocab,
    check_params,
    evaluate_recall,
    generate,
    generate_mixture,
    parse_recall_text,
    query_accuracy,
)

V = DEFAULT_VOCAB


@pytest.mark.parametrize("n_pairs,seq_len", [(1, 4), (4, 64), (16, 64), (32, 128)])
def test_every_query_answer_is_the_value_paired_with_its_key_earlier(n_pairs, seq_len):
    batch = generate(50, seq_len, n_pairs, seed=3)
    inputs, targets = batch.inputs.numpy(), batch.targets.numpy()
    for row in range(inputs.shape[0]):
        context = inputs[row, : 2 * n_pairs]
        pairs = dict(zip(context[0::2].tolist(), context[1::2].tolist(), strict=True))
        query_positions = np.flatnonzero(targets[row] != IGNORE_INDEX)
        assert len(query_positions) == n_pairs  # every key asked exactly once
        assert (query_positions >= 2 * n_pairs).all()  # queries come after the context
        asked = inputs[row, query_positions]
        assert sorted(asked.tolist()) == sorted(pairs)
        for pos in query_positions:
            key = inputs[row, pos]
            assert targets[row, pos] == pairs[key]
            earlier = np.flatnonzero(inputs[row, :pos] == key)
            assert len(earlier) == 1 and inputs[row, earlier[0] + 1] == targets[row, pos]


def test_keys_and_values_never_overlap():
    keys, values = set(V.key_ids.tolist()), set(V.value_ids.tolist())
    assert not keys & values and V.FILLER not in keys | values
    batch = generate(100, 128, 16, seed=1)
    context = batch.inputs[:, :32]
    assert set(context[:, 0::2].unique().tolist()) <= keys
    assert set(context[:, 1::2].unique().tolist()) <= values
    answers = batch.targets[batch.query_mask]
    assert set(answers.unique().tolist()) <= values
    # keys and values are distinct inside each sequence
    for row in context:
        assert len(set(row[0::2].tolist())) == 16 and len(set(row[1::2].tolist())) == 16
    # everything after the context is a query key or the filler
    rest = batch.inputs[:, 32:]
    assert set(rest.unique().tolist()) <= keys | {V.FILLER}


def test_targets_only_at_query_positions():
    batch = generate(20, 64, 8, seed=0)
    is_query = batch.targets != IGNORE_INDEX
    assert int(is_query.sum()) == 20 * 8
    assert (batch.inputs[is_query] != V.FILLER).all()


def test_same_seed_same_data_and_different_seed_different_data():
    a, b, c = generate(8, 64, 8, seed=7), generate(8, 64, 8, seed=7), generate(8, 64, 8, seed=8)
    assert torch.equal(a.inputs, b.inputs) and torch.equal(a.targets, b.targets)
    assert not torch.equal(a.inputs, c.inputs)
    m1, m2 = generate_mixture(4, 128, (4, 32), seed=5), generate_mixture(4, 128, (4, 32), seed=5)
    assert torch.equal(m1[0], m2[0]) and torch.equal(m1[1], m2[1])
    assert m1[0].shape == (8, 128)


def test_query_gaps_follow_a_power_law_short_gaps_most_likely():
    batch = generate(2000, 128, 4, seed=11)
    positions = torch.nonzero(batch.query_mask)[:, 1] - 8  # offset after the 8-token context
    gaps = (positions // 2).numpy()
    counts = np.bincount(gaps, minlength=60)
    assert counts[0] > counts[5] > counts[40]


@pytest.mark.parametrize(
    "seq_len,n_pairs,message",
    [
        (64, 17, "too short"),  # 4 × 17 > 64
        (1000, 53, "distinct keys"),  # only 52 keys
        (64, 0, "at least 1"),
    ],
)
def test_bad_params_raise_a_clear_error(seq_len, n_pairs, message):
    with pytest.raises(ValueError, match=message):
        generate(4, seq_len, n_pairs, seed=0)
    with pytest.raises(ValueError, match=message):
        check_params(seq_len, n_pairs)


def test_too_few_values_is_reported():
    with pytest.raises(ValueError, match="distinct values"):
        generate(2, 64, 8, seed=0, vocab=RecallVocab(n_keys=20, n_values=5))


def test_parse_reader_sequence():
    parsed = parse_recall_text("a:1 b:2 c:3 ? b a")
    assert parsed.tokens == [
        V.key_token("a"),
        V.value_token("1"),
        V.key_token("b"),
        V.value_token("2"),
        V.key_token("c"),
        V.value_token("3"),
        V.key_token("b"),
        V.key_token("a"),
    ]
    assert parsed.query_positions == [6, 7] and parsed.answers == ["2", "1"]
    assert [V.token_name(t) for t in parsed.tokens] == ["a", "1", "b", "2", "c", "3", "b", "a"]


def test_parse_rewritten_key_expects_latest_value_and_unknown_key_has_no_answer():
    parsed = parse_recall_text("a:1 a:9 ? a z")
    assert parsed.answers == ["9", None]


@pytest.mark.parametrize(
    "text,message",
    [
        ("a:1 b:2 b", "one '\\?'"),
        ("a:1 ? b ? c", "one '\\?'"),
        ("? a", "no key:value pairs"),
        ("a:1 ?", "no key to ask"),
        ("a1 ? a", "not a key:value pair"),
        ("7:1 ? 7", "not a key"),
        ("a:100 ? a", "not a value"),
        ("a:x ? a", "not a value"),
        ("a:1 ? a:2", "keys only"),
        ("ab:1 ? ab", "not a key"),
        ("😀:1 ? a", "not a key"),
    ],
)
def test_parse_rejects_malformed_text_with_a_message(text, message):
    with pytest.raises(ValueError, match=message):
        parse_recall_text(text)


def test_parse_rejects_overlong_input():
    text = " ".join(f"a:{i % 100}" for i in range(200)) + " ? a"
    with pytest.raises(ValueError, match="tokens"):
        parse_recall_text(text)


def test_query_accuracy_counts_only_query_positions():
    targets = torch.full((1, 4), IGNORE_INDEX)
    targets[0, 2] = 60
    logits = torch.zeros(1, 4, V.size)
    logits[0, :, 5] = 1.0  # wrong everywhere ...
    assert query_accuracy(logits, targets) == (0, 1)
    logits[0, 2, 60] = 2.0  # ... until the query position is right
    assert query_accuracy(logits, targets) == (1, 1)


class _Oracle(torch.nn.Module):
    """Looks the answer up in the sequence itself: perfect recall, as a check of the scorer."""

    def forward(self, tokens):
        logits = torch.zeros(*tokens.shape, V.size)
        for b, row in enumerate(tokens.tolist()):
            last_value = {}
            for t, tok in enumerate(row):
                if t > 0 and 1 <= row[t - 1] <= V.n_keys and tok > V.n_keys and row[t - 1] not in last_value:
                    last_value[row[t - 1]] = tok
                    continue
                if tok in last_value:
                    logits[b, t, last_value[tok]] = 1.0
        return logits


def test_evaluate_recall_on_an_oracle_is_perfect_and_a_blank_model_is_not():
    acc, n = evaluate_recall(_Oracle(), 8, 64, 10, seed=0)
    assert acc == 1.0 and n == 80
    blank = torch.nn.Module()
    blank.forward = lambda tokens: torch.zeros(*tokens.shape, V.size)
    acc, _ = evaluate_recall(blank, 8, 64, 10, seed=0)
    assert acc == 0.0
