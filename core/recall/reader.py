"""A trained recall model on a reader's own sequence: its answers, one colour range per layer."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.recall.models import LayerMemory, RecallModel
from core.recall.task import DEFAULT_VOCAB, generate


@dataclass
class RecallAnswer:
    key: str
    expected: str | None  # the value written for this key, None if it was never written
    predicted: str  # the model's top token, by name
    probability: float  # the model's probability for its top token
    expected_probability: float | None  # the model's probability for the right value


@dataclass
class ReaderRecall:
    tokens: list[str]  # token names, in order
    answers: list[RecallAnswer]
    memories: list[LayerMemory]  # each layer's board or cache after the whole sequence


@torch.no_grad()
def recall_from_tokens(
    model: RecallModel, tokens: list[int], query_positions: list[int], expected: list[str | None]
) -> ReaderRecall:
    """Run the model over one token sequence and read its answer at each query position."""
    vocab = DEFAULT_VOCAB
    readout = model.read(torch.tensor([tokens]), keep_memory=True)
    probs = readout.logits[0].softmax(-1)  # (T, vocab)
    answers = []
    for pos, right in zip(query_positions, expected, strict=True):
        top = int(probs[pos].argmax())
        p_right = float(probs[pos, vocab.value_token(right)]) if right is not None else None
        answers.append(
            RecallAnswer(
                vocab.token_name(tokens[pos]), right, vocab.token_name(top), float(probs[pos, top]), p_right
            )
        )
    return ReaderRecall([vocab.token_name(t) for t in tokens], answers, readout.memories[0])


@torch.no_grad()
def memory_colour_ranges(
    model: RecallModel, n_pairs: int = 8, seq_len: int = 64, seed: int = 123
) -> tuple[float, ...]:
    """One fixed colour range per layer of a model for its boards/caches: the 99th percentile of
    |entries| over a few held-out sequences, so every reader's sequence is drawn on the same scale.
    Per layer, not per model: a model's two memories can differ tenfold in size (a softmax layer's
    keys against the board after it), and one shared range would leave the smaller one blank."""
    data = generate(16, seq_len, n_pairs, seed)
    readout = model.read(data.inputs, keep_memory=True)
    by_layer: dict[int, list[np.ndarray]] = {}
    for row in readout.memories:
        for i, layer in enumerate(row):
            by_layer.setdefault(i, []).append(
                np.abs(layer.state if layer.state is not None else layer.keys).ravel()
            )
    return tuple(float(np.quantile(np.concatenate(by_layer[i]), 0.99)) for i in sorted(by_layer))
