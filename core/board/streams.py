"""Streams to write: distinct pairs, readable word pairs, a rewrite, a topic switch."""

from __future__ import annotations

from dataclasses import dataclass

from core.board.keys import BoardError
from core.i18n import N_

Pair = tuple[str, str]


def _check_n(n: int) -> None:
    if n < 1:
        raise BoardError(f"write at least one pair (n ≥ 1), got n={n}")


def distinct_stream(n: int, prefix_key: str = "k", prefix_value: str = "v") -> list[Pair]:
    """n pairs k0→v0 … k(n-1)→v(n-1): every key and every value different."""
    _check_n(n)
    return [(f"{prefix_key}{i}", f"{prefix_value}{i}") for i in range(n)]


WORD_KEYS = (
    "apple", "sky", "grass", "snow", "coal", "lemon", "plum", "sea",
    "rose", "cloud", "fire", "leaf", "night", "milk", "sand", "ink",
)  # fmt: skip
WORD_VALUES = (
    "red", "blue", "green", "white", "black", "yellow", "purple", "teal",
    "pink", "grey", "orange", "lime", "navy", "cream", "tan", "violet",
)  # fmt: skip


def word_stream(n: int) -> list[Pair]:
    """n readable pairs (apple→red, sky→blue, …); past 16 they continue as k16→v16 …"""
    _check_n(n)
    pairs = list(zip(WORD_KEYS, WORD_VALUES, strict=True))[:n]
    return pairs + [(f"k{i}", f"v{i}") for i in range(len(pairs), n)]


def rewrite_stream(n: int, rewritten: str = "apple", new_value: str = "green") -> list[Pair]:
    """The first n word pairs, then `rewritten` written again with a new value."""
    pairs = word_stream(n)
    if rewritten not in {k for k, _ in pairs}:
        raise BoardError(f"key {rewritten!r} is not among the first {n} pairs")
    return pairs + [(rewritten, new_value)]


FACT = [("name", "Ada")]
TOPIC_A = [
    ("apple", "red"),
    ("lemon", "yellow"),
    ("plum", "purple"),
    ("lime", "green"),
    ("cherry", "crimson"),
    ("orange", "amber"),
]
TOPIC_B = [
    ("Paris", "France"),
    ("Rome", "Italy"),
    ("Oslo", "Norway"),
    ("Lima", "Peru"),
    ("Cairo", "Egypt"),
    ("Tokyo", "Japan"),
]


@dataclass
class TopicSwitch:
    """A stream that changes topic: one fact to keep, then topic A, then topic B.

    The fact's key lives in the first `keep_channels` key channels, both topics in the rest,
    so a per-channel fade (KDA) can keep the fact while it clears topic A.
    """

    pairs: list[Pair]
    groups: dict[str, tuple[int, int]]
    keep_channels: int
    switch: int  # index of the first topic-B token
    fact: list[str]
    topic_a: list[str]
    topic_b: list[str]
    d: int = 8  # key channels

    def topic_of(self, name: str) -> str:
        """Which part of the stream a key belongs to: "the fact", "topic A" or "topic B"."""
        if name in self.fact:
            return N_("the fact")  # English names (tests, CLIs); a page shows them through _()
        if name in self.topic_a:
            return N_("topic A")
        if name in self.topic_b:
            return N_("topic B")
        raise BoardError(f"key {name!r} is not in this stream")

    def channel_rates(self, fact: float, topic: float) -> tuple[float, ...]:
        """Per-channel fade rates: `fact` on the fact's channels, `topic` on the topics' channels."""
        return (fact,) * self.keep_channels + (topic,) * (self.d - self.keep_channels)


def topic_switch(d: int = 8, keep_channels: int = 2, n_a: int = 4, n_b: int = 4) -> TopicSwitch:
    """The fact name→Ada, then n_a fruit→colour pairs, then n_b city→country pairs."""
    if d < 2 or not 1 <= keep_channels < d:
        raise BoardError(f"need d ≥ 2 and 1 ≤ keep channels < d (got d={d}, keep={keep_channels})")
    if not (1 <= n_a <= len(TOPIC_A) and 1 <= n_b <= len(TOPIC_B)):
        raise BoardError(f"each topic has 1 to {len(TOPIC_A)} pairs (got {n_a} and {n_b})")
    pairs = FACT + TOPIC_A[:n_a] + TOPIC_B[:n_b]
    groups = {k: ((0, keep_channels) if (k, v) in FACT else (keep_channels, d)) for k, v in pairs}
    return TopicSwitch(
        pairs=pairs,
        groups=groups,
        keep_channels=keep_channels,
        switch=len(FACT) + n_a,
        fact=[k for k, _ in FACT],
        topic_a=[k for k, _ in TOPIC_A[:n_a]],
        topic_b=[k for k, _ in TOPIC_B[:n_b]],
        d=d,
    )
