"""Lines the GPU page shows but did not write itself, in the reader's language.

The benchmark runner, the NVML probe and the GPU health check write their status lines in English
(a worker thread, a CLI, a JSON and every reader of the server share them), from templates marked
with `N_` where they are made. `reader_line` finds the template a line was made from and formats
its translation with the same values: the reader reads their own language, the data stays English.
"""

from __future__ import annotations

import functools
import re
import string

from core.gpu.decode import spill
from core.gpu.device import nvml
from core.gpu.output.report import quoted
from core.gpu.serving import last_run, runner
from core.i18n import N_, _, language

# every template a status line may come from (the constants' own modules mark them for extraction)
TEMPLATES = (
    *nvml.REASON_TEMPLATES,
    nvml.LOST_MESSAGE,
    runner.LIMIT_REASON,
    last_run.UNREADABLE,
    # where a roofline's bandwidth came from (core.gpu.suites.context_bench.reference_bandwidth)
    N_("this machine's measured copy speed"),
    N_("your {name}'s spec-sheet bandwidth"),
    N_("an {name} ({bandwidth} GB/s)"),
    # the benchmarks' progress lines (core.gpu.suites): a model or a part, then what it is doing
    N_("{what}: depth {depth}"),
    N_("{what}: batch {batch} at depth {depth}"),
    N_("{what}: timing"),
    N_("{what}: energy"),
    N_("loading {name}"),
    N_("resting {seconds} s before the idle baseline"),
    # a preset's summary (core.gpu.decode.models.preset_summary, shared with the CLI), its description after it
    N_("A {params}-parameter model, KV cache {per_token} per token. {description}"),
    N_("{shared} shared + {top_k} of {routed} routed"),  # a MoE's experts (core.gpu.suites.moe_bench)
    # what a finished run keeps in its JSON: why depths or batches were not timed, how energy was read
    spill.REFUSAL,
    N_("does not fit: room for {n} sequences at this depth"),  # core.gpu.suites.batch_bench
    N_("out of memory while building the model: {message}"),  # core.gpu.suites.context_bench
)
EXACT = (N_("idle baseline"),)  # progress lines with no value in them
# whole lines a finished run keeps in English (its JSON), each shown translated as it is
KNOWN_LINES = (
    N_(
        "No energy reading: power is read through NVML, so only on an NVIDIA GPU."
    ),  # core.gpu.suites.moe_bench
    N_("CUDA graphs need a CUDA device"),  # core.gpu.suites.checkpoint_bench.GRAPH_NEEDS_CUDA
    # how the copy speed was measured (core.gpu.timing.bandwidth)
    N_("CPU memcpy (host and 'device' are the same memory)"),
    N_("device-to-device copy; pinned host-to-device copy"),
)

# a template with more fixed text is tried first: "{name} is no longer listed: {reason}" would also
# match the whole of a lost-GPU line that quotes it
_MOST_SPECIFIC_FIRST = sorted(
    TEMPLATES, key=lambda t: -sum(len(literal) for literal, *_rest in string.Formatter().parse(t))
)
_SPEC = re.compile(r"\{(\w+)(?:![rsa])?(?::[^{}]*)?\}")  # a field with its conversion and format spec


@functools.cache
def _pattern(template: str) -> re.Pattern[str]:
    """A regex that matches a line made from `template`, each field a named group."""
    parts, seen = [], set()
    for literal, name, _spec, _conversion in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is None:
            continue
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.+?)")
        seen.add(name)
    return re.compile("".join(parts), re.S)


def reader_line(text: str | None) -> str:
    """`text` in the reader's language: its own translation, else that of the template it was made
    from (with the same values, each itself translated where it is a known line), else as it is."""
    if not text or language() == "en":
        return text or ""
    own = _(text)
    if own != text or text in EXACT:
        return own
    for template in _MOST_SPECIFIC_FIRST:
        match = _pattern(template).fullmatch(text)
        if match:
            values = {k: reader_line(v) for k, v in match.groupdict().items()}
            return _SPEC.sub(r"{\1}", _(template)).format(**values)
    return text


def device_line(text: str | None) -> str:
    """A stored line in the reader's language where it is one of the course's own (`reader_line`),
    else quoted as the device or library wrote it (an out-of-memory error from PyTorch)."""
    if not text:
        return ""
    shown = reader_line(text)
    return shown if shown != (text or "") or language() == "en" else quoted(shown)
