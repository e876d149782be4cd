"""The plan as rows, JSON and CSV, and the inputs as query parameters (a shareable link).

A shipped config travels by name (`config=llama3_1_8b`); a pasted one travels compressed
(`configz=`, zlib + URL-safe base64) when it is small enough for a link, else the link says
which inputs it restores and the reader pastes the config again.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import zlib
from dataclasses import fields, replace

from core.i18n import _, ngettext, pgettext
from core.plan.headline import (
    ALL_REDUCE_COUNTED,
    ALL_REDUCE_SHORT,
    longest_words,
    trained_words,
    window_words,
)
from core.plan.inputs import PlanInputs
from core.plan.latency import KERNEL_FLOOR_S
from core.plan.plan import Plan
from core.units import format_billions, format_bytes, format_context

MAX_LINK_CONFIG = 6000  # characters of compressed config a link may carry


def rows(p: Plan) -> list[tuple[str, str, float | int | str | None]]:
    """(quantity, shown value, raw value) — what the CLI prints, the page tables and the CSV holds.

    Every context printed carries the trained window beside it (`window_words`); on more than one GPU a
    decode speed says that it counts the all-reduces and prefill's that it leaves them out
    (`core/plan/headline.py`); each decode speed names the ceiling that sets it, beside the two ceilings
    (bandwidth, latency floor) it is the slower of. The words follow the reader's language (`core.i18n`);
    the CLI runs in English."""

    def b(x: float | None) -> str:
        return "—" if x is None else format_bytes(x)

    speed = p.decode_tokens_per_s
    context = format_context(p.inputs.context)
    window = window_words(p.inputs.context, p.trained_context)
    short, counted = _(ALL_REDUCE_SHORT), _(ALL_REDUCE_COUNTED)
    left_out = p.inputs.gpus > 1
    if not p.weights_fit:
        most = _("weights alone do not fit")
    else:
        most = _("no memory limit") if p.max_batch is None else f"{p.max_batch:,}"
    copies = (
        _("; {copies} copies over {gpus} GPUs").format(copies=p.cache_copies, gpus=p.inputs.gpus)
        if p.cache_copies
        else ""
    )
    if speed is None:
        decode = _("does not fit")
    else:
        decode = f"{speed:,.1f} ({bound_words(p.decode_bound)}" + (
            pgettext("clause separator", "; ") + counted + ")" if left_out else ")"
        )
    out = [
        (_("model"), p.model_name, p.model_name),
        (_("card"), f"{p.inputs.gpus} × {p.card_name}", p.card_name),
        (_("parameters (total)"), format_billions(p.total_params), p.total_params),
        (_("parameters (active per token)"), format_billions(p.active_params), p.active_params),
        (_("trained context window"), trained_words(p.trained_context), p.trained_context),
        (_("usable memory"), b(p.usable), p.usable),
        (_("weights"), b(p.weights), p.weights),
        (_("reserve (runtime + activations)"), b(p.reserve), p.reserve),
        (
            _("KV cache ({batch} × {context} tokens, {window}{copies})").format(
                batch=p.inputs.batch, context=context, window=window, copies=copies
            ),
            b(p.kv),
            p.kv,
        ),
        (
            ngettext(
                "fixed recurrent state ({n:,} sequence)",
                "fixed recurrent state ({n:,} sequences)",
                p.inputs.batch,
            ).format(n=p.inputs.batch),
            b(p.state),
            p.state,
        ),
        (_("total needed"), b(p.needed), p.needed),
        (_("fits"), _("yes") if p.fits else _("no"), p.fits),
        (
            _("GPUs of this card needed (tensor parallel)"),
            _("none: no even split of the heads holds it") if p.gpus_needed is None else str(p.gpus_needed),
            p.gpus_needed,
        ),
        (_("longest context at batch {batch}").format(batch=p.inputs.batch), longest_words(p), p.max_context),
        (
            _("most sequences at {context} ({window})").format(context=context, window=window),
            most,
            p.max_batch,
        ),
    ]
    if p.experts_touched is not None:
        out.append(
            (_("distinct experts touched per layer per step"), f"{p.experts_touched:,.1f}", p.experts_touched)
        )
    reads = p.step_reads
    if reads.table:
        out.append(
            (_("input table: stored, not read per step (one row per token)"), b(reads.table), reads.table)
        )
    if reads.positions:
        out.append(
            (
                _("position table: stored, not read per step (one row per token)"),
                b(reads.positions),
                reads.positions,
            )
        )
    if reads.idle_experts:
        out.append(
            (
                _("routed experts no token picked: stored, not read this step"),
                b(reads.idle_experts),
                reads.idle_experts,
            )
        )
    out += [
        (_("weights read per decode step"), b(reads.weights_read), reads.weights_read),
        (
            _("bytes moved per decode step (weights read + cache + fixed state read and written back)"),
            b(p.read_per_step),
            p.read_per_step,
        ),
        (_("decode tokens/s (all sequences, ceiling)"), decode, speed),
        (
            _("decode tokens/s per sequence"),
            "—"
            if p.per_sequence_tokens_per_s is None
            else f"{p.per_sequence_tokens_per_s:,.1f}" + (f" ({counted})" if left_out else ""),
            p.per_sequence_tokens_per_s,
        ),
        (
            _("bandwidth ceiling (all sequences): bytes moved ÷ bandwidth"),
            "—" if p.bandwidth_tokens_per_s is None else f"{p.bandwidth_tokens_per_s:,.1f}",
            p.bandwidth_tokens_per_s,
        ),
        (_("latency floor per decode step"), floor_words(p), None if p.floor is None else p.floor.seconds),
        (
            _("prefill of {context} tokens ({window}; at peak, lower bound)").format(
                context=context, window=window
            ),
            _("no published peak")
            if p.prefill_seconds is None
            else f"{p.prefill_seconds:,.2f} s" + (f" ({short})" if left_out else ""),
            p.prefill_seconds,
        ),
    ]
    for key, value in p.mla_layouts.items():
        label = (
            _("MLA cache per token, latent (vLLM, SGLang, transformers 5.x)")
            if key == "engine"
            else _("MLA cache per token, per head (DeepSeek naive)")
        )
        out.append((label, b(value), value))
    return out


def bound_words(bound: str) -> str:
    """What limits a decode step ("memory", "compute" or "latency", `Plan.decode_bound`), in the reader's words."""
    if bound == "latency":
        return _("latency-bound")
    return _("compute-bound") if bound == "compute" else _("memory-bound")


def floor_words(p: Plan) -> str:
    """The latency floor as its sum: '1.84 ms = 292 kernels × 3 µs + 64 all-reduces × 15.0 µs'."""
    floor = p.floor
    if floor is None:
        return "—"
    words = _("{ms:,.3f} ms = {kernels:,} kernels × {us:g} µs").format(
        ms=floor.seconds * 1e3, kernels=floor.kernels, us=KERNEL_FLOOR_S * 1e6
    )
    if floor.all_reduces:
        words += _(" + {n:,} all-reduces × {us:.1f} µs").format(
            n=floor.all_reduces, us=floor.all_reduce_s * 1e6
        )
    return words


def to_json(p: Plan) -> str:
    return json.dumps({"plan": p.as_dict(), "rows": [[q, s] for q, s, _ in rows(p)]}, indent=2, default=str)


def to_csv(p: Plan) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["quantity", "value", "raw"])
    for quantity, shown, raw in rows(p):
        writer.writerow([quantity, shown, "" if raw is None else raw])
    for text in p.cautions:
        writer.writerow(["caution", text, ""])
    for text in p.assumptions:
        writer.writerow(["assumption", text, ""])
    return buffer.getvalue()


# -- shareable link ----------------------------------------------------------------------------


def pack_config(text: str) -> str | None:
    """A pasted config, compressed for a link; None if still too long."""
    packed = base64.urlsafe_b64encode(zlib.compress(text.encode("utf-8"), 9)).decode("ascii")
    return packed if len(packed) <= MAX_LINK_CONFIG else None


def unpack_config(packed: str) -> str | None:
    """The config text back from a link; None for anything that is not a packed config."""
    if not isinstance(packed, str) or len(packed) > MAX_LINK_CONFIG:
        return None
    try:
        data = zlib.decompressobj()
        text = data.decompress(base64.urlsafe_b64decode(packed.encode("ascii")), 1_000_000)
        return text.decode("utf-8") if not data.unconsumed_tail else None
    except (ValueError, zlib.error, UnicodeError):
        return None


def to_query(inputs: PlanInputs) -> dict[str, str]:
    return {f.name: str(getattr(inputs, f.name)) for f in fields(PlanInputs)}


def from_query(params: dict[str, str], base: PlanInputs | None = None) -> PlanInputs:
    """Inputs from query parameters; any missing or invalid value keeps the default."""
    inputs = base or PlanInputs()
    for f in fields(PlanInputs):
        raw = params.get(f.name)
        if raw is None:
            continue
        try:
            value = type(getattr(inputs, f.name))(str(raw)[:40])
            candidate = replace(inputs, **{f.name: value}).checked()
        except (ValueError, TypeError, OverflowError):
            continue
        inputs = candidate
    return inputs
