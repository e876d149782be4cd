"""What the Chunks page says (Engineer depth) about the committed prefill run: every number read from the
newest docs/bench-runs/*-cpu-prefill.json, so the sentence cannot drift from what was measured.

`latest()` gives None (never raises) where the folder is missing or no file in it reads as a run; the page
then says nothing about it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from core.i18n import _, list_of, ngettext, run_on, stated_date
from core.prefill.record import PrefillRun, Row

RUNS = Path(__file__).resolve().parents[2] / "docs" / "bench-runs"
_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}-cpu-prefill\.json$")
_CORES = re.compile(r"^(\d+) cores$")


def latest(runs: Path = RUNS) -> tuple[str, PrefillRun] | None:
    """(its path in the repository, the run) of the newest readable `YYYY-MM-DD-cpu-prefill.json`, or None."""
    for path in sorted((p for p in runs.glob("*.json") if _NAME.match(p.name)), reverse=True):
        found = _read(path)
        if found is not None:
            return f"docs/bench-runs/{path.name}", found
    return None


@lru_cache(maxsize=4)
def _read(path: Path) -> PrefillRun | None:
    try:
        return PrefillRun.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def crossover(run: PrefillRun) -> Row | None:
    """The shortest row from which on the chunked rule is faster at every longer length too; None where
    attention is still faster at the longest."""
    found = None
    for row in reversed(run.rows):
        if run.ratio(row) <= 1:
            break
        found = row
    return found


def shown_machine(machine: str) -> str:
    """'AMD EPYC, 2 cores, Linux' (as a run stores it) → 'AMD EPYC (2 cores, Linux)' in the reader's words."""
    cpu, *details = machine.split(", ")
    if not details:
        return cpu
    shown = [_CORES.sub(lambda m: _("{cores} cores").format(cores=m[1]), d) for d in details]
    return _("{cpu} ({details})").format(cpu=cpu, details=list_of(shown))


def _clock_words(run: PrefillRun) -> str:
    """How the run was timed: 'one thread, in CPU time' or '2 threads, by the wall clock'."""
    if run.clock == "cpu":
        return _("one thread, in CPU time")
    return ngettext("{n} thread, by the wall clock", "{n} threads, by the wall clock", run.threads).format(
        n=run.threads
    )


def _ms(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:.3g}"


def prefill_sentence(run: PrefillRun, source: str) -> str:
    """The run in words: the shortest and longest prompt, both forms; where the chunked rule wins; the
    planner's bound beside the longest. Every number from `run`."""
    short, long = run.rows[0], run.rows[-1]
    numbers = dict(
        machine=shown_machine(run.machine), date=stated_date(run.date), source=source, heads=run.heads, width=run.head_dim,
        threads=_clock_words(run), short=f"{short.tokens:,}", a_short=_ms(run.ms(short, "attention")),
        c_short=_ms(run.ms(short, "chunked")), long=f"{long.tokens:,}", a_long=_ms(run.ms(long, "attention")),
        c_long=_ms(run.ms(long, "chunked")), ratio=f"{run.ratio(long):.1f}",
        a_bound=_ms(run.bound_ms(run.attention_flops(long.tokens))),
        c_bound=_ms(run.bound_ms(run.chunked_flops(long.tokens))), gflops=f"{run.matmul_flops_per_s / 1e9:,.0f}",
        a_times=f"{run.ms(long, 'attention') / run.bound_ms(run.attention_flops(long.tokens)):.1f}",
        c_times=f"{run.ms(long, 'chunked') / run.bound_ms(run.chunked_flops(long.tokens)):.1f}",
    )  # fmt: skip
    opening = _(
        "**Prefill measured** on {machine} on {date} ({threads}; `python -m bench.prefill`, `{source}`): "
        "one layer of {heads} heads of width {width} reads a {short}-token prompt in {a_short} ms with causal "
        "attention (torch SDPA) and in {c_short} ms with the chunked Gated DeltaNet; a {long}-token prompt in "
        "{a_long} ms and {c_long} ms."
    ).format(**numbers)
    cross = crossover(run)
    if cross is None:
        where = _("Attention is still the faster one at {long} tokens here.").format(**numbers)
    elif cross is short:
        where = _(
            "The chunked rule is faster at every length measured: {ratio} times at {long} tokens."
        ).format(**numbers)
    else:
        where = _(
            "Attention is faster on short prompts; from {cross} tokens on, the chunked rule is faster — {ratio} "
            "times at {long} tokens — because attention's work grows with the square of the prompt, the chunked "
            "rule's with its length."
        ).format(**numbers, cross=f"{cross.tokens:,}")
    bound = _(
        "The planner's bound for the same shapes — its FLOP count at this CPU's fastest measured {gflops} "
        "GFLOP/s — is {a_bound} ms and {c_bound} ms at {long} tokens: attention took {a_times} times its bound, "
        "the chunked rule {c_times} times. Time to first token is this prefill, layer by layer, plus one "
        "decoding step."
    ).format(**numbers)
    return run_on(opening, where, bound)
