"""The fixed-size-memory rules of the course, one record each: the single place a rule is named.

Every other list of rules — the board playground, the recall models, chart colours and labels,
the real-model specs, the roofline's work counts, the benchmarks and the tests' parametrisation —
is derived from `RULES`. To add a rule, write its ops module (`core/ops/<name>.py`, the contract in
`core/ops/common.py`) and add one `Mechanism` here; CONTRIBUTING.md has the checklist.

The rules share one update shape (fla conventions, state `S: (K, V)` per head):

    S ← Diag(α) S            fade, when the rule has a gate (α = exp g, per head or per key channel)
    S ← S − β k (Sᵀk)ᵀ       erase, when the rule takes β
    S ← S + β k vᵀ           write (β = 1 without β)

so "takes β" and "gate" are enough to say which inputs a rule needs and what it costs.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Literal

from core.i18n import N_

Gate = Literal["none", "head", "channel"]


class UnknownRule(ValueError):
    """A rule key that is not in the registry."""


@dataclass(frozen=True)
class Mechanism:
    """One fixed-size-memory rule and everything the course says about it."""

    key: str  # the one name used everywhere: configs, results files, charts, tests
    module: str  # import path of its ops module (step / recurrent / chunk)
    label: str  # the name a reader sees (shown through _(), e.g. style.label_of; N_ where it is a word, not a name)
    short: str  # a short name for tight legends
    color: str  # its colour in every chart
    verb: str  # what it does to memory when a token arrives (marked N_, like label)
    takes_beta: bool  # True: erase before writing (the delta rule); needs β per token and head
    gate: Gate  # the fade: none, one rate per head, or one rate per key channel
    lesson: str  # slug of the lesson that introduces it (ui/course.py)
    year: int
    update: str  # the state rule, as one line of maths
    update_words: str  # the same in words (marked N_, like label)
    source: str  # paper (arXiv id) and reference implementation

    @property
    def ops(self) -> ModuleType:
        """The ops module: `step`, `recurrent`, `chunk`, all with the same signature."""
        return importlib.import_module(self.module)

    @property
    def gated(self) -> bool:
        return self.gate != "none"

    def gate_shape(self, B: int, T: int, H: int, K: int) -> tuple[int, ...] | None:
        """Shape of the log gate `g` over a sequence: (B, T, H) per head, (B, T, H, K) per channel."""
        return {"none": None, "head": (B, T, H), "channel": (B, T, H, K)}[self.gate]

    def board_passes(self) -> int:
        """Passes over the d×d board per token and head: write + read, + erase (β), + fade (gate)."""
        return 2 + int(self.takes_beta) + int(self.gated)

    def macs_per_head(self, d: int) -> int:
        """Multiply-adds per token and head for a d×d board; a per-channel gate also costs its d rates."""
        return self.board_passes() * d * d + (d if self.gate == "channel" else 0)


RULES: dict[str, Mechanism] = {
    m.key: m
    for m in (
        Mechanism(
            key="linear",
            module="core.ops.linear_attention",
            label=N_("Linear attention"),
            short="linear",
            color="#e8590c",
            verb=N_("add"),
            takes_beta=False,
            gate="none",
            lesson="linear_attention",
            year=2020,
            update="S ← S + k vᵀ",
            update_words=N_("adds k vᵀ to the board"),
            source="Katharopoulos et al. 2020, arXiv 2006.16236; fla ops/linear_attn",
        ),
        Mechanism(
            key="delta",
            module="core.ops.delta_rule",
            label="DeltaNet",
            short="DeltaNet",
            color="#27500c",
            verb=N_("rewrite"),
            takes_beta=True,
            gate="none",
            lesson="deltanet",
            year=2024,
            update="S ← S − β k (kᵀS − vᵀ)",
            update_words=N_("erases the old value under k, writes the new"),
            source="Yang et al. 2024, arXiv 2406.06484; Schlag et al. 2021, arXiv 2102.11174; fla ops/delta_rule",
        ),
        Mechanism(
            key="gated_delta",
            module="core.ops.gated_delta_rule",
            label="Gated DeltaNet",
            short="Gated DeltaNet",
            color="#1589a0",
            verb=N_("forget"),
            takes_beta=True,
            gate="head",
            lesson="forgetting",
            year=2024,
            update="S ← α (I − β k kᵀ) S + β k vᵀ",
            update_words=N_("fades the board by one rate per head, then rewrites"),
            source="Yang, Kautz, Hatamizadeh, arXiv 2412.06464; fla ops/gated_delta_rule",
        ),
        Mechanism(
            key="kda",
            module="core.ops.kda",
            label="Kimi Delta Attention",
            short="KDA",
            color="#c2255c",
            verb=N_("forget per channel"),
            takes_beta=True,
            gate="channel",
            lesson="forgetting",
            year=2025,
            update="S ← (I − β k kᵀ) Diag(α) S + β k vᵀ",
            update_words=N_("fades each key channel at its own rate, then rewrites"),
            source="Kimi Linear, arXiv 2510.26692; fla ops/kda",
        ),
    )
}


def rule_keys() -> tuple[str, ...]:
    """Every rule's key, in story order."""
    return tuple(RULES)


def delta_rules() -> tuple[str, ...]:
    """The rules that erase before they write (take β)."""
    return tuple(k for k, m in RULES.items() if m.takes_beta)


def gated_rules() -> tuple[str, ...]:
    """The rules with a fade gate."""
    return tuple(k for k, m in RULES.items() if m.gated)


def get(key: str) -> Mechanism:
    """The record for `key`; an unknown key raises `UnknownRule` naming the known ones."""
    try:
        return RULES[key]
    except KeyError:
        raise UnknownRule(f"unknown rule {key!r}; choose one of {', '.join(RULES)}") from None


def register(mechanism: Mechanism) -> Mechanism:
    """Add a rule at run time (tests use it to prove a new rule is picked up everywhere)."""
    if mechanism.key in RULES:
        raise ValueError(f"rule {mechanism.key!r} is already registered")
    RULES[mechanism.key] = mechanism
    return mechanism


def unregister(key: str) -> None:
    """Remove a rule added by `register`."""
    RULES.pop(key, None)
