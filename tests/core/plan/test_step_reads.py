"""What one decode step reads, part by part (core/plan/decode.py `StepReads`), and the planner's sentence
about it (core/plan/headline.py `reads_words`): the parts add up to the bytes read per step, the stored
parts are the plan's own weights, cache and state, and the sizes the sentence shows add up too (issue 40,
item 8: "weights 15.0 GiB + cache 16.0 GiB beside 30.0 GiB read per step" needs its why)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from core.i18n import use_language
from core.plan import PlanInputs, parse, plan
from core.plan.export import rows
from core.plan.headline import reads_words
from core.units import format_bytes

CONFIGS = Path(__file__).resolve().parents[3] / "assets" / "configs"
UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
SIZE = re.compile(r"([\d,]+(?:\.\d)?) (B|KiB|MiB|GiB|TiB)\b")

# dense untied, tied with learned positions, MoE + MLA + fixed state, hybrid MoE; batches, GPUs, formats
CASES = [
    ("llama3_1_8b", PlanInputs()),
    ("llama3_1_8b", PlanInputs(batch=16, context=8192, weight_format="awq4", card="rtx4090")),
    ("gpt2", PlanInputs(context=1024)),
    ("kimi_k3", PlanInputs(batch=16, gpus=8, card="h200")),
    ("qwen3_next_80b_a3b", PlanInputs(batch=8, context=4096, card="h200", state_format="bf16")),
    ("deepseek_v3", PlanInputs(batch=64, gpus=8, weight_format="fp8", context=32768)),
    ("kimi_linear_48b_a3b", PlanInputs(context=2**20, weight_format="q4_0")),
]


def _case(name: str, inputs: PlanInputs):
    model = parse(json.loads((CONFIGS / f"{name}.json").read_text()))
    return model, plan(model, inputs)


def _bytes(shown: str) -> tuple[float, float]:
    """A size as shown ("1,002.0 MiB") → (bytes, how far its rounding can be off)."""
    number, unit = SIZE.fullmatch(shown).groups()
    scale = UNITS[unit]
    return float(number.replace(",", "")) * scale, (0.5 if unit == "B" else 0.05) * scale


@pytest.mark.parametrize("name, inputs", CASES, ids=[f"{n}-{i.batch}x{i.gpus}" for n, i in CASES])
def test_the_parts_add_up_to_the_bytes_read_per_step(name, inputs):
    model, p = _case(name, inputs)
    reads = p.step_reads
    assert reads.weights == p.weights and reads.cache == p.kv and reads.state == p.state
    assert reads.weights_read + reads.cache + 2 * reads.state == pytest.approx(p.read_per_step, rel=1e-12)
    assert reads.weights - reads.table - reads.positions - reads.idle_experts == pytest.approx(
        reads.weights_read
    )
    assert 0 < reads.weights_read <= reads.weights
    spec = model.spec
    assert (reads.table > 0) == (not spec.tied_embeddings)  # a tied table is the output head: read in full
    assert (reads.positions > 0) == spec.learned_positions
    assert (reads.idle_experts > 0) == (spec.moe is not None)


def test_the_llama_example_of_the_issue():
    """Llama-3.1-8B at 128K on one H100: 15.0 GiB of weights and 16.0 GiB of cache, 30.0 GiB read: the
    difference is the 128,256 × 4,096 input table in BF16, which a step does not read."""
    _model, p = _case("llama3_1_8b", PlanInputs())
    reads = p.step_reads
    assert reads.table == 128256 * 4096 * 2 and reads.idle_experts == 0 and reads.state == 0
    assert [format_bytes(x) for x in (p.weights, p.kv, p.read_per_step)] == [
        "15.0 GiB",
        "16.0 GiB",
        "30.0 GiB",
    ]


@pytest.mark.parametrize("name, inputs", CASES, ids=[f"{n}-{i.batch}x{i.gpus}" for n, i in CASES])
def test_the_sentence_shows_sizes_that_add_up(name, inputs):
    model, p = _case(name, inputs)
    reads = p.step_reads
    words = reads_words(model, p)
    first, *rest = words.split(". ")
    shown = [_bytes(s.group(0)) for s in SIZE.finditer(first)]
    # "reads {total} from memory: {weights read}, {cache} and {state moved}" — the parts the step has
    (total, total_err), *parts = shown
    assert len(parts) == 1 + bool(reads.cache) + bool(reads.state)
    assert abs(sum(v for v, _e in parts) - total) <= total_err + sum(e for _v, e in parts)
    if reads.unread:
        # "less than the {weights} the weights take in memory, because a step skips {table} and {experts}"
        (stored, stored_err), *skipped = [_bytes(s.group(0)) for s in SIZE.finditer(rest[0])]
        weights_read, read_err = parts[0]
        slack = stored_err + read_err + sum(e for _v, e in skipped)
        assert abs(stored - sum(v for v, _e in skipped) - weights_read) <= slack
        assert format_bytes(reads.weights) in rest[0]


def test_the_table_lists_what_a_step_leaves_unread():
    _model, p = _case("kimi_k3", PlanInputs(batch=16, gpus=8, card="h200"))
    values = {q: raw for q, _shown, raw in rows(p)}
    assert values["input table: stored, not read per step (one row per token)"] == p.step_reads.table
    assert values["routed experts no token picked: stored, not read this step"] == p.step_reads.idle_experts
    assert values["weights read per decode step"] == p.step_reads.weights_read
    moved = "bytes moved per decode step (weights read + cache + fixed state read and written back)"
    assert values[moved] == p.read_per_step


def test_the_sentence_reads_in_japanese_without_spaces_between_sentences():
    model, p = _case("qwen3_next_80b_a3b", PlanInputs(batch=8, context=4096, card="h200"))
    with use_language("ja"):
        words = reads_words(model, p)
    assert "エキスパート" in words and "。 " not in words and format_bytes(p.read_per_step) in words


def test_a_cautions_plain_words_name_no_engine_and_its_source_follows():
    """The planner's Story shows a caution's plain words alone; the whole caution (CLI, CSV, Engineer)
    is those words and then the source that names the engine or the pull request."""
    from core.plan.cautions import caution_parts, cautions

    llama, _p = _case("llama3_1_8b", PlanInputs())
    gpt2, _p = _case("gpt2", PlanInputs())
    cases = [
        (llama, PlanInputs(gpus=3)),
        (llama, PlanInputs(card="m4_max_128gb", memory_share=0.95)),
        (gpt2, PlanInputs(context=2**20, gpus=5)),
    ]
    engine = re.compile(r"vLLM|llama\.cpp|SGLang|PR #\d+")
    for model, inputs in cases:
        parts = caution_parts(model, inputs)
        assert parts and cautions(model, inputs) == tuple(
            plain if source is None else f"{plain} {source}" for plain, source in parts
        )
        assert not any(engine.search(plain) for plain, _source in parts)
        assert all(source is None or engine.search(source) for _plain, source in parts)
