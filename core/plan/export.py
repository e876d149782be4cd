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

from core.plan.headline import ALL_REDUCE_SHORT, longest_words, trained_words, window_words
from core.plan.plan import Plan, PlanInputs
from core.units import counted, format_bytes, format_context

MAX_LINK_CONFIG = 6000  # characters of compressed config a link may carry


def rows(p: Plan) -> list[tuple[str, str, float | int | str | None]]:
    """(quantity, shown value, raw value) — what the CLI prints, the page tables and the CSV holds.

    Every context printed carries the trained window beside it (`window_words`), and on more than one
    GPU every speed says that the all-reduces are left out (`core/plan/headline.py`)."""

    def b(x: float | None) -> str:
        return "—" if x is None else format_bytes(x)

    speed = p.decode_tokens_per_s
    context = format_context(p.inputs.context)
    window = window_words(p.inputs.context, p.trained_context)
    left_out = f"; {ALL_REDUCE_SHORT}" if p.inputs.gpus > 1 else ""
    if not p.weights_fit:
        most = "weights alone do not fit"
    else:
        most = "no memory limit" if p.max_batch is None else f"{p.max_batch:,}"
    copies = f"; {p.cache_copies} copies over {p.inputs.gpus} GPUs" if p.cache_copies else ""
    out = [
        ("model", p.model_name, p.model_name),
        ("card", f"{p.inputs.gpus} × {p.card_name}", p.card_name),
        ("parameters (total)", f"{p.total_params / 1e9:,.2f} B", p.total_params),
        ("parameters (active per token)", f"{p.active_params / 1e9:,.2f} B", p.active_params),
        ("trained context window", trained_words(p.trained_context), p.trained_context),
        ("usable memory", b(p.usable), p.usable),
        ("weights", b(p.weights), p.weights),
        ("reserve (runtime + activations)", b(p.reserve), p.reserve),
        (f"KV cache ({p.inputs.batch} × {context} tokens, {window}{copies})", b(p.kv), p.kv),
        (f"fixed recurrent state ({counted(p.inputs.batch, 'sequence')})", b(p.state), p.state),
        ("total needed", b(p.needed), p.needed),
        ("fits", "yes" if p.fits else "no", p.fits),
        (
            "GPUs of this card needed (tensor parallel)",
            "none: no even split of the heads holds it" if p.gpus_needed is None else str(p.gpus_needed),
            p.gpus_needed,
        ),
        (f"longest context at batch {p.inputs.batch}", longest_words(p), p.max_context),
        (f"most sequences at {context} ({window})", most, p.max_batch),
    ]
    if p.experts_touched is not None:
        out.append(
            ("distinct experts touched per layer per step", f"{p.experts_touched:,.1f}", p.experts_touched)
        )
    out += [
        (
            "bytes moved per decode step (weights it uses + cache + state)",
            b(p.read_per_step),
            p.read_per_step,
        ),
        (
            "decode tokens/s (all sequences, ceiling)",
            "does not fit" if speed is None else f"{speed:,.1f} ({p.decode_bound}-bound{left_out})",
            speed,
        ),
        (
            "decode tokens/s per sequence",
            "—"
            if p.per_sequence_tokens_per_s is None
            else f"{p.per_sequence_tokens_per_s:,.1f}" + (f" ({ALL_REDUCE_SHORT})" if left_out else ""),
            p.per_sequence_tokens_per_s,
        ),
        (
            f"prefill of {context} tokens ({window}; at peak, lower bound)",
            "no published peak"
            if p.prefill_seconds is None
            else f"{p.prefill_seconds:,.2f} s" + (f" ({ALL_REDUCE_SHORT})" if left_out else ""),
            p.prefill_seconds,
        ),
    ]
    for key, value in p.mla_layouts.items():
        label = "latent (vLLM, SGLang, transformers 5.x)" if key == "engine" else "per head (DeepSeek naive)"
        out.append((f"MLA cache per token, {label}", b(value), value))
    return out


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
