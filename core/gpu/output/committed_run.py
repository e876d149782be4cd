"""This project's own GPU run, committed under docs/gpu-runs/: typed facts and the sentences the pages
say about it, every number read from the run's bench.json, so no sentence can drift from what was measured.

The run is the newest dated folder (`YYYY-MM-DD-<card>`) that holds a bench.json; its date comes from
the folder's name, its card from the JSON. `load()` gives None (never raises) where the folder is
missing or unreadable, and the `*_words` helpers then say so in one plain line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.gpu.output.result import SuiteResult
from core.gpu.suites.context_bench import ContextResult, Series
from core.gpu.suites.moe_bench import MoeResult, MoeRow
from core.i18n import N_, _, stated_date
from core.units import format_context

RUNS = Path(__file__).resolve().parents[3] / "docs" / "gpu-runs"
_DATED = re.compile(r"^(\d{4}-\d{2}-\d{2})-")
NO_RUN = N_("This copy of the course holds no GPU run of its own (docs/gpu-runs/ is missing or unreadable).")


@dataclass(frozen=True)
class CommittedRun:
    """One committed bench.json, read back into the page's own result types."""

    folder: Path
    date: str  # YYYY-MM-DD, from the folder's name
    card: str  # the device name the run recorded, e.g. "NVIDIA H200"
    context: ContextResult
    moe: MoeResult

    @property
    def label(self) -> str:
        """How every chart names the run: 'measured on an NVIDIA H200 on 2026-11-30'."""
        return _("measured on the {card} on {date}").format(card=self.card, date=stated_date(self.date))

    @property
    def opening(self) -> str:
        """How every sentence starts: 'On the NVIDIA H200 measured on 2026-11-30'."""
        return _("On the {card} measured on {date}").format(card=self.card, date=stated_date(self.date))

    @property
    def source(self) -> str:
        """The JSON's place in the repository, as a reader can find it (never an absolute path)."""
        return f"docs/gpu-runs/{self.folder.name}/bench.json"


def latest_folder(runs: Path = RUNS) -> Path | None:
    """The newest dated run folder that has a bench.json, or None."""
    dated = sorted(
        (p for p in runs.glob("*") if p.is_dir() and _DATED.match(p.name) and (p / "bench.json").is_file()),
        key=lambda p: p.name,
    )
    return dated[-1] if dated else None


def read(folder: Path) -> CommittedRun:
    """The run in `folder` (raises OSError, ValueError, KeyError or TypeError on a bad one)."""
    match = _DATED.match(folder.name)
    if match is None:
        raise ValueError(f"{folder.name} does not start with a date")
    run = SuiteResult.from_json((folder / "bench.json").read_text(encoding="utf-8"))
    if run.context is None or run.moe is None:
        raise KeyError("context" if run.context is None else "moe")
    return CommittedRun(folder, match.group(1), str(run.device.name), run.context, run.moe)


@lru_cache(maxsize=8)
def load(folder: Path | None = None) -> CommittedRun | None:
    """The run in `folder` (default: the newest one committed), or None where there is none readable."""
    folder = folder or latest_folder()
    if folder is None:
        return None
    try:
        return read(folder)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


# ------------------------------------------------------------------------------------------------
# Facts
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DepthFacts:
    """Full attention against the fixed state at the shallowest and the deepest depth both ran."""

    depth0: int
    deepest: int
    attention0: float  # tokens/s
    state0: float
    attention_deep: float
    state_deep: float
    attention_roofline0: float
    state_roofline0: float

    @property
    def ratio0(self) -> float:
        """Fixed state ÷ full attention at the shallowest depth (> 1: the fixed state is faster)."""
        return self.state0 / self.attention0

    @property
    def ratio_deep(self) -> float:
        return self.state_deep / self.attention_deep


@dataclass(frozen=True)
class MoeFacts:
    """Dense against MoE at one depth: speed, power, energy, bytes."""

    dense: MoeRow
    moe: MoeRow
    idle_watts: float | None

    @property
    def speedup(self) -> float:
        return self.moe.tokens_per_s / self.dense.tokens_per_s

    @property
    def byte_ratio(self) -> float:
        """How many times fewer bytes the MoE reads per token."""
        return self.dense.bytes_per_token / self.moe.bytes_per_token

    @property
    def power_ratio(self) -> float:
        """MoE ÷ dense average board power."""
        return self.moe.avg_watts / self.dense.avg_watts

    @property
    def net_power_ratio(self) -> float:
        """MoE ÷ dense power above the idle baseline."""
        idle = self.idle_watts or 0.0
        return (self.moe.avg_watts - idle) / (self.dense.avg_watts - idle)

    @property
    def reading_ms(self) -> tuple[float, float]:
        """(dense, MoE) milliseconds a token takes to read its bytes at the copy speed the roofline used."""
        return 1e3 / self.dense.predicted_tokens_per_s, 1e3 / self.moe.predicted_tokens_per_s

    @property
    def token_ms(self) -> tuple[float, float]:
        """(dense, MoE) milliseconds a token really took."""
        return 1e3 / self.dense.tokens_per_s, 1e3 / self.moe.tokens_per_s

    @property
    def other_ms(self) -> tuple[float, float]:
        """(dense, MoE) milliseconds of each token that were not reading its bytes (never below 0: a
        step timed a little above its roofline spent no time on anything else)."""
        return tuple(max(0.0, t - r) for t, r in zip(self.token_ms, self.reading_ms, strict=True))

    @property
    def energy_ratio(self) -> float:
        """MoE ÷ dense joules per token, idle subtracted where the run measured it."""
        if self.moe.net_joules_per_token and self.dense.net_joules_per_token:
            return self.moe.net_joules_per_token / self.dense.net_joules_per_token
        return self.moe.joules_per_token / self.dense.joules_per_token


def _series(context: ContextResult, kind: str) -> Series:
    return next(s for s in context.series if s.model == kind)


def depth_facts(run: CommittedRun) -> DepthFacts:
    attention, state = _series(run.context, "full attention"), _series(run.context, "fixed state")
    at = {p.depth: p for p in attention.points}
    st = {p.depth: p for p in state.points}
    both = sorted(set(at) & set(st))
    first, last = both[0], both[-1]
    return DepthFacts(
        first, last, at[first].tokens_per_s, st[first].tokens_per_s, at[last].tokens_per_s,
        st[last].tokens_per_s, at[first].predicted_tokens_per_s, st[first].predicted_tokens_per_s,
    )  # fmt: skip


def moe_facts(run: CommittedRun) -> MoeFacts:
    rows = {r.model: r for r in run.moe.rows}
    return MoeFacts(rows["dense"], rows["experts (MoE)"], run.moe.idle_watts)


# ------------------------------------------------------------------------------------------------
# Sentences (every number from the facts above)
# ------------------------------------------------------------------------------------------------


def _times(ratio: float) -> str:
    """'0.73×' (Japanese: '0.73倍')."""
    return _("{ratio:.2f}×").format(ratio=ratio)


def depth_sentence(run: CommittedRun) -> str:
    """Full attention vs the fixed state at depth 0 and at the deepest depth, on the committed run."""
    f = depth_facts(run)
    at0 = (
        _(
            "at depth {depth:,} the fixed-state model ran {ratio} faster than full attention "
            "({state:,.0f} against {attention:,.0f} tokens/s; their rooflines were "
            "{state_roofline:,.0f} and {attention_roofline:,.0f} tokens/s)"
        )
        if f.ratio0 >= 1
        else _(
            "at depth {depth:,} the fixed-state model ran at {ratio} the speed of full attention "
            "({state:,.0f} against {attention:,.0f} tokens/s; their rooflines were "
            "{state_roofline:,.0f} and {attention_roofline:,.0f} tokens/s)"
        )
    ).format(
        depth=f.depth0,
        ratio=_times(f.ratio0),
        state=f.state0,
        attention=f.attention0,
        state_roofline=f.state_roofline0,
        attention_roofline=f.attention_roofline0,
    )
    deep = (
        _(
            "at {deepest} tokens full attention had fallen to {attention:,.0f} tokens/s "
            "while the fixed state ran at {state:,.0f}, {ratio} faster than full attention"
        )
        if f.ratio_deep >= 1
        else _(
            "at {deepest} tokens full attention had fallen to {attention:,.0f} tokens/s "
            "while the fixed state ran at {state:,.0f}, at {ratio} the speed of full attention"
        )
    ).format(
        deepest=format_context(f.deepest),
        attention=f.attention_deep,
        state=f.state_deep,
        ratio=_times(f.ratio_deep),
    )
    return _("{opening}, {shallow}; {deep}.").format(opening=run.opening, shallow=at0, deep=deep)


def depth_question(run: CommittedRun) -> str:
    """The page's predict-then-reveal question, its premise measured rather than assumed."""
    f = depth_facts(run)
    return (
        _(
            "{opening}, at depth {depth:,} the fixed-state model ran {ratio} faster than full "
            "attention. At the deepest depth ({deepest} tokens), which one is slower, and by "
            "roughly how much?"
        )
        if f.ratio0 >= 1
        else _(
            "{opening}, at depth {depth:,} the fixed-state model ran at {ratio} the speed of full "
            "attention. At the deepest depth ({deepest} tokens), which one is slower, and by "
            "roughly how much?"
        )
    ).format(opening=run.opening, depth=f.depth0, ratio=_times(f.ratio0), deepest=format_context(f.deepest))


def moe_power_sentence(run: CommittedRun) -> str:
    """The MoE's power, speed and energy against the dense model's, and which of the two made the saving."""
    f = moe_facts(run)
    energy = f.energy_ratio
    idle = (
        _(" (idle power subtracted)") if f.moe.net_joules_per_token and f.dense.net_joules_per_token else ""
    )
    head = _(
        "{opening}, the MoE drew {moe_w:,.0f} W against the dense model's {dense_w:,.0f} W and ran {speedup} as "
        "fast, reading {bytes:.1f}× fewer bytes per token; it used {energy} the dense model's energy per "
        "token{idle}."
    ).format(
        opening=run.opening,
        moe_w=f.moe.avg_watts,
        dense_w=f.dense.avg_watts,
        speedup=_times(f.speedup),
        bytes=f.byte_ratio,
        energy=_times(energy),
        idle=idle,
    )
    if energy >= 1:
        return head + _(" Here the MoE saved no energy per token.")
    # energy ratio = power ratio × (1 ÷ speed-up): the factor further below 1 did more of the saving
    # (with energy < 1, the power factor being the smaller one implies it is below 1: less power)
    by_power, by_speed = f.net_power_ratio if idle else f.power_ratio, 1 / f.speedup
    reason = (
        _("Most of that saving came from drawing less power, not from finishing each token sooner.")
        if by_power < by_speed
        else _("Most of that saving came from finishing each token sooner, not from the power it drew.")
    )
    return f"{head} {reason}"


def depth_story_sentence(run: CommittedRun) -> str:
    """Story's reading of the first picture: full attention slows as its cache grows, the fixed state's
    speed at the first and the deepest depth, and which one is faster at the end (every number from the run)."""
    f = depth_facts(run)
    numbers = dict(
        attention0=f.attention0,
        attention=f.attention_deep,
        deepest=format_context(f.deepest),
        fall=_times(f.attention0 / f.attention_deep),
        state0=f.state0,
        state=f.state_deep,
        ratio=_times(f.ratio_deep),
    )
    end = (
        _("so at {deepest} tokens the fixed state was {ratio} faster.")
        if f.ratio_deep >= 1
        else _("so at {deepest} tokens the fixed state ran at {ratio} the speed of full attention.")
    ).format(**numbers)
    return _(
        "Full attention wrote {attention0:,.0f} tokens per second with nothing in memory and "
        "{attention:,.0f} at {deepest} tokens — {fall} slower, because every token reads the whole growing "
        "cache. The fixed-state model wrote {state0:,.0f} at the start and {state:,.0f} at the end, {end}"
    ).format(end=end, **numbers)


def moe_why_sentence(run: CommittedRun) -> str:
    """Story's reading of the second picture: the MoE's speed against its bytes, and why it falls short —
    the time a token spends reading its bytes at the card's copy speed against the time it really took."""
    f = moe_facts(run)
    (dense_read, moe_read), (dense_ms, moe_ms) = f.reading_ms, f.token_ms
    dense_other, moe_other = f.other_ms
    numbers = dict(
        bytes=f.byte_ratio,
        speedup=_times(f.speedup),
        moe_tps=f.moe.tokens_per_s,
        dense_tps=f.dense.tokens_per_s,
        moe_read=moe_read,
        dense_read=dense_read,
        moe_other=moe_other,
        dense_other=dense_other,
        moe_ms=moe_ms,
        dense_ms=dense_ms,
        saved=dense_read - moe_read,
        added=moe_other - dense_other,
    )
    if f.speedup >= 0.9 * f.byte_ratio:  # about as fast as its bytes promise: nothing to explain
        return _(
            "The MoE read {bytes:.1f}× fewer bytes per token and ran {speedup} as "
            "fast ({moe_tps:,.0f} against {dense_tps:,.0f} tokens per second): close to what its bytes promise."
        ).format(**numbers)
    end = (
        _(
            "Reading saved {saved:.2f} ms a token and the rest added {added:.2f} ms: {moe_ms:.2f} ms against {dense_ms:.2f}."
        )
        if moe_other > dense_other
        else _("The reading shrank, the rest did not: {moe_ms:.2f} ms a token against {dense_ms:.2f}.")
    ).format(**numbers)
    return _(
        "The MoE read {bytes:.1f}× fewer bytes per token, yet ran only {speedup} as fast ({moe_tps:,.0f} against "
        "{dense_tps:,.0f} tokens per second). Why: reading its bytes at this card's copy speed takes {moe_read:.2f} ms "
        "(thousandths of a second) against the dense model's {dense_read:.2f} ms, but the rest of each step — for "
        "the MoE, choosing its experts and copying them together — took {moe_other:.2f} ms against "
        "{dense_other:.2f} ms. {end}"
    ).format(end=end, **numbers)


def moe_power_story(run: CommittedRun) -> str:
    """Story's power line: each model's average power, and the MoE's energy per token against the dense model's."""
    f = moe_facts(run)
    idle = (
        _(" (idle power subtracted)") if f.moe.net_joules_per_token and f.dense.net_joules_per_token else ""
    )
    return _(
        "The MoE drew {moe_w:,.0f} W against the dense model's {dense_w:,.0f} W, so each token cost it {energy} "
        "the dense model's energy{idle}."
    ).format(moe_w=f.moe.avg_watts, dense_w=f.dense.avg_watts, energy=_times(f.energy_ratio), idle=idle)


def moe_power_words() -> str:
    """The MoE sentence for the newest committed run, or one line saying there is none."""
    run = load()
    return moe_power_sentence(run) if run is not None else _(NO_RUN)


def depth_words() -> str:
    run = load()
    return depth_sentence(run) if run is not None else _(NO_RUN)
