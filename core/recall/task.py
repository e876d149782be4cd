"""Multi-query associative recall (MQAR): the synthetic task behind the recall gap.

Zoology (Arora et al., "Zoology: Measuring and Improving Recall in Efficient
Language Models", arXiv 2312.04927) showed that most of the quality gap between
attention and fixed-state models is *associative recall*: after reading
``a 7 b 3 c 9``, answer ``b → 3``. Its MQAR task, which this module re-creates in
small form (after the layout of ``zoology/data/multiquery_ar.py``):

    [k1 v1 k2 v2 ... kN vN] [· · kj · · · ki · kl · ...]
     context: N pairs        queries: every key once, at power-law gaps

* keys and values come from disjoint vocabularies, each key used once per sequence;
* every key is asked again exactly once, after the context, at a gap drawn from a
  power law ``p(g) ∝ g^(a-1)`` (``a = 0.01``: short gaps are much more likely);
* the target is only defined at a query position (the paired value); everywhere
  else it is ``IGNORE_INDEX``, so the loss and the accuracy count recall alone;
* the remaining positions hold one filler token ``·``.

Everything is seeded (numpy ``default_rng``), so one seed gives one data set.
The vocabulary is readable so a person can type a sequence: keys are the letters
``a–z A–Z``, values the numbers ``0–99``.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

import numpy as np
import torch

from core.i18n import _

IGNORE_INDEX = -100
POWER_A = 0.01  # Zoology's default power-law exponent for query gaps


@dataclass(frozen=True)
class RecallVocab:
    """Token ids: 0 = filler, then the keys, then the values (disjoint ranges)."""

    n_keys: int = 52
    n_values: int = 100

    FILLER = 0

    @property
    def size(self) -> int:
        return 1 + self.n_keys + self.n_values

    @property
    def key_ids(self) -> np.ndarray:
        return np.arange(1, 1 + self.n_keys)

    @property
    def value_ids(self) -> np.ndarray:
        return np.arange(1 + self.n_keys, 1 + self.n_keys + self.n_values)

    def key_name(self, index: int) -> str:
        """Key i → 'a'…'z', 'A'…'Z', then 'k52', 'k53', … if the vocabulary is larger."""
        letters = string.ascii_lowercase + string.ascii_uppercase
        return letters[index] if index < len(letters) else f"k{index}"

    def token_name(self, token: int) -> str:
        """A readable name for any token id."""
        if token == self.FILLER:
            return "·"
        if 1 <= token <= self.n_keys:
            return self.key_name(token - 1)
        if self.n_keys < token < self.size:
            return str(token - 1 - self.n_keys)
        raise ValueError(f"token id {token} is outside the vocabulary (0–{self.size - 1})")

    def key_token(self, name: str) -> int:
        for i in range(self.n_keys):
            if self.key_name(i) == name:
                return 1 + i
        raise ValueError(_("'{name}' is not a key: keys are single letters a–z or A–Z").format(name=name))

    def value_token(self, name: str) -> int:
        if not name.isdigit() or not 0 <= int(name) < self.n_values:
            raise ValueError(
                _("'{name}' is not a value: values are whole numbers 0–{largest}").format(
                    name=name, largest=self.n_values - 1
                )
            )
        return 1 + self.n_keys + int(name)


DEFAULT_VOCAB = RecallVocab()


@dataclass
class MQARBatch:
    """inputs (N, T) token ids; targets (N, T) value ids at query positions, IGNORE_INDEX elsewhere."""

    inputs: torch.Tensor
    targets: torch.Tensor
    n_pairs: int

    @property
    def query_mask(self) -> torch.Tensor:
        return self.targets != IGNORE_INDEX  # (N, T)


def check_params(seq_len: int, n_pairs: int, vocab: RecallVocab = DEFAULT_VOCAB) -> None:
    """Raise ValueError with a plain reason if this setting cannot be generated."""
    if n_pairs < 1:
        raise ValueError(f"n_pairs must be at least 1, got {n_pairs}")
    if n_pairs > vocab.n_keys:
        raise ValueError(
            f"{n_pairs} pairs need {n_pairs} distinct keys but the vocabulary has {vocab.n_keys}"
        )
    if n_pairs > vocab.n_values:
        raise ValueError(
            f"{n_pairs} pairs need {n_pairs} distinct values but the vocabulary has {vocab.n_values}"
        )
    if seq_len < 4 * n_pairs:
        # 2N tokens of context, then N queries on every other slot of the rest (as in Zoology).
        raise ValueError(
            f"seq_len {seq_len} is too short for {n_pairs} pairs: need at least 4 × pairs = {4 * n_pairs}"
        )


def generate(
    n_examples: int,
    seq_len: int,
    n_pairs: int,
    seed: int,
    vocab: RecallVocab = DEFAULT_VOCAB,
    power_a: float = POWER_A,
) -> MQARBatch:
    """Draw `n_examples` MQAR sequences of length `seq_len` with `n_pairs` key→value pairs each."""
    check_params(seq_len, n_pairs, vocab)
    if n_examples < 1:
        raise ValueError(f"n_examples must be at least 1, got {n_examples}")
    rng = np.random.default_rng(seed)
    keys = np.stack([rng.choice(vocab.key_ids, n_pairs, replace=False) for _ in range(n_examples)])  # (N, P)
    values = np.stack([rng.choice(vocab.value_ids, n_pairs, replace=False) for _ in range(n_examples)])

    context = 2 * n_pairs
    slots = (seq_len - context) // 2  # query slots: every other position after the context
    gap_prob = power_a * np.arange(1, slots + 1) ** (power_a - 1)
    gap_prob /= gap_prob.sum()
    gaps = np.stack([rng.choice(slots, n_pairs, replace=False, p=gap_prob) for _ in range(n_examples)])

    inputs = np.full((n_examples, seq_len), vocab.FILLER, dtype=np.int64)
    targets = np.full((n_examples, seq_len), IGNORE_INDEX, dtype=np.int64)
    inputs[:, 0:context:2] = keys
    inputs[:, 1:context:2] = values
    query_pos = context + 2 * gaps  # (N, P): where key j is asked again
    rows = np.arange(n_examples)[:, None]
    inputs[rows, query_pos] = keys
    targets[rows, query_pos] = values
    return MQARBatch(torch.from_numpy(inputs), torch.from_numpy(targets), n_pairs)


def generate_mixture(
    n_per_setting: int,
    seq_len: int,
    pair_counts: tuple[int, ...],
    seed: int,
    vocab: RecallVocab = DEFAULT_VOCAB,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One batch holding `n_per_setting` sequences of each pair count (Zoology trains on such mixtures)."""
    parts = [generate(n_per_setting, seq_len, n, seed * 1009 + i, vocab) for i, n in enumerate(pair_counts)]
    return torch.cat([p.inputs for p in parts]), torch.cat([p.targets for p in parts])


# --- reading a person's own sequence --------------------------------------------------------------

_PAIR = re.compile(r"^([^:\s]+):([^:\s]+)$")


@dataclass
class ParsedRecall:
    """A typed sequence as tokens: pairs, then queries; `answers` holds the expected value (or None)."""

    tokens: list[int]
    pairs: list[tuple[str, str]]
    queries: list[str]
    query_positions: list[int]
    answers: list[str | None]


def parse_recall_text(text: str, vocab: RecallVocab = DEFAULT_VOCAB, max_tokens: int = 256) -> ParsedRecall:
    """Parse 'a:1 b:2 c:3 ? b a' → tokens a 1 b 2 c 3 b a, queries at the last two positions.

    Pairs are `key:value` before a single '?', queries are keys after it. Writing a key
    twice is allowed (the later value is the right answer). Raises ValueError with a
    message meant for the reader if the text does not follow that shape.
    """
    text = text.strip()
    if text.count("?") != 1:
        raise ValueError(
            _("write the pairs, then one '?', then the keys to ask for — e.g. 'a:1 b:2 c:3 ? b'")
        )
    head, tail = text.split("?")
    pair_words, query_words = head.split(), tail.split()
    if not pair_words:
        raise ValueError(_("there are no key:value pairs before the '?'"))
    if not query_words:
        raise ValueError(_("there is no key to ask for after the '?'"))
    tokens: list[int] = []
    pairs: list[tuple[str, str]] = []
    latest: dict[str, str] = {}
    for word in pair_words:
        match = _PAIR.match(word)
        if match is None:
            raise ValueError(_("'{word}' is not a key:value pair such as 'a:7'").format(word=word))
        key, value = match.groups()
        tokens += [vocab.key_token(key), vocab.value_token(value)]
        pairs.append((key, value))
        latest[key] = value
    positions: list[int] = []
    answers: list[str | None] = []
    for word in query_words:
        if ":" in word:
            raise ValueError(_("after the '?' write keys only, not pairs ('{word}')").format(word=word))
        tokens.append(vocab.key_token(word))
        positions.append(len(tokens) - 1)
        answers.append(latest.get(word))
    if len(tokens) > max_tokens:
        raise ValueError(
            _("that is {n} tokens; keep it to {most} or fewer").format(n=len(tokens), most=max_tokens)
        )
    return ParsedRecall(tokens, pairs, query_words, positions, answers)


# --- scoring ---------------------------------------------------------------------------------------


def query_accuracy(logits: torch.Tensor, targets: torch.Tensor) -> tuple[int, int]:
    """(correct, total) over query positions: the top-scoring token must be the paired value."""
    mask = targets != IGNORE_INDEX  # (N, T)
    predicted = logits.argmax(-1)  # (N, T)
    return int((predicted[mask] == targets[mask]).sum()), int(mask.sum())


@torch.no_grad()
def evaluate_recall(
    model: torch.nn.Module,
    n_pairs: int,
    seq_len: int,
    n_examples: int,
    seed: int,
    batch_size: int = 64,
    vocab: RecallVocab = DEFAULT_VOCAB,
) -> tuple[float, int]:
    """Accuracy at query positions on freshly generated (held-out) sequences; returns (accuracy, n_queries)."""
    data = generate(n_examples, seq_len, n_pairs, seed, vocab)
    was_training = model.training
    model.eval()
    correct = total = 0
    for start in range(0, n_examples, batch_size):
        rows = slice(start, start + batch_size)
        c, t = query_accuracy(model(data.inputs[rows]), data.targets[rows])
        correct, total = correct + c, total + t
    model.train(was_training)
    return correct / total, total
