"""The plan in words: the beginner's sentence, the trained window beside every printed context, and the
tensor-parallel speed that says it leaves out the all-reduces (core/plan/headline.py, the CLI, the rows)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from core.figures.plan import context_figure, memory_figure
from core.plan import PlanInputs, parse, plan
from core.plan.__main__ import main
from core.plan.curve import sweep
from core.plan.export import rows
from core.plan.headline import headline, quoted_plan

CONFIGS = Path(__file__).resolve().parents[3] / "assets" / "configs"
TRAINED = 131_072  # Llama-3.1-8B's max_position_embeddings
# a line that prints a context: "… 128K tokens", "457,051 tokens", "most sequences at 128K" (not "tokens/s")
PRINTS_A_CONTEXT = re.compile(r"\d[\d,]*[KM]? tokens\b(?!/)|\bat \d+[KM]\b")


def _model(name: str, drop: str | None = None):
    data = json.loads((CONFIGS / f"{name}.json").read_text())
    data.pop(drop, None)
    return parse(data)


def _cli(capsys, *args: str) -> tuple[list[str], str]:
    """(the lines before the assumptions, the whole output) of the CLI run with `args`."""
    assert main(list(args)) == 0
    out = capsys.readouterr().out
    return out.split("\nassumptions:")[0].splitlines(), out


def test_cli_puts_the_trained_window_beside_every_context_it_prints(capsys):
    figures, out = _cli(capsys, "--config", "llama3_1_8b")  # default: 1 × H100, 128K tokens
    longest_fit = plan(_model("llama3_1_8b"), PlanInputs()).max_context
    assert longest_fit > TRAINED  # the case: memory holds far more than the model was trained for
    longest = next(line for line in figures if line.startswith("longest context"))
    assert f"memory allows {longest_fit:,} tokens, but the model was trained for {TRAINED:,}" in longest
    printing = [line for line in figures if PRINTS_A_CONTEXT.search(line)]
    assert len(printing) >= 6, (
        printing
    )  # the sentence, the window, KV cache, longest, most sequences, prefill
    assert all(f"{TRAINED:,}" in line for line in printing), [
        ln for ln in printing if f"{TRAINED:,}" not in ln
    ]
    assert figures[0].startswith("Llama-3.1-8B on 1 × H100 SXM 80GB: memory allows")
    assert "cautions:" not in out  # 128K is the trained window itself, not past it


def test_cli_cautions_on_every_line_when_the_asked_context_passes_the_trained_window(capsys):
    figures, out = _cli(capsys, "--config", "llama3_1_8b", "--context", "262144")
    figures = figures[: figures.index("cautions:")]
    past = f"past the {TRAINED:,} the model was trained for"
    asked = [line for line in figures if "256K" in line or "262,144" in line]
    assert len(asked) >= 4 and all(past in line for line in asked), asked
    cautions = out.split("\ncautions:\n")[1].split("\nassumptions:")[0]
    assert f"trained for at most {TRAINED:,} tokens" in cautions


def test_a_config_without_a_trained_window_says_it_is_unknown(tmp_path, capsys):
    data = json.loads((CONFIGS / "llama3_1_8b.json").read_text())
    del data["max_position_embeddings"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    figures, _ = _cli(capsys, "--config", str(path), "--card", "rtx4090")
    window = next(line for line in figures if line.startswith("trained context window"))
    assert "unknown" in window and "max_position_embeddings" in window
    assert all("trained window unknown" in line for line in figures if PRINTS_A_CONTEXT.search(line)
               and not line.startswith("trained context window"))  # fmt: skip
    assert "trained for" not in "\n".join(figures)


def test_the_sentence_is_worked_out_from_the_plan():
    llama = _model("llama3_1_8b")
    small = PlanInputs(card="rtx4090")
    p = plan(llama, small)
    assert (
        not p.fits and 0 < p.max_context < TRAINED
    )  # 128K does not fit a 24 GB card: quote the longest that does
    at_longest = plan(llama, replace(small, context=p.max_context))
    assert headline(llama, small) == (
        f"Llama-3.1-8B on 1 × RTX 4090 24GB: fits with up to {p.max_context:,} tokens of context (trained for "
        f"{TRAINED:,}); at {p.max_context:,} tokens (the longest that fits), at best about "
        f"{at_longest.per_sequence_tokens_per_s:,.0f} tokens/s for one conversation, set by how fast memory "
        "is read."
    )
    assert (
        at_longest.decode_bound == "memory"
    )  # the ceiling the sentence names (core/plan/latency.py: not latency)
    quoted = quoted_plan(llama, p)
    assert quoted.fits and quoted.inputs == replace(small, context=p.max_context)
    big = plan(llama, PlanInputs())
    assert quoted_plan(llama, big) is big  # the asked context fits: the sentence speaks of it
    assert headline(llama, PlanInputs()) == (
        f"Llama-3.1-8B on 1 × H100 SXM 80GB: memory allows {big.max_context:,} tokens of context, but the model "
        f"was trained for {TRAINED:,}; at {TRAINED:,} tokens, at best about {big.decode_tokens_per_s:,.0f} tokens/s "
        "for one conversation, set by how fast memory is read."
    )
    two = plan(llama, PlanInputs(batch=2))
    assert two.fits
    batch = headline(llama, PlanInputs(batch=2))
    assert f"memory allows {two.max_context:,} tokens of context for each of 2 conversations, but" in batch
    assert f"at best about {two.per_sequence_tokens_per_s:,.0f} tokens/s for each of 2 conversations" in batch


def test_the_sentence_names_the_cases_memory_alone_does_not_settle():
    mistral = _model("mistral_7b")  # a sliding window on every layer: its cache stops growing
    assert plan(mistral, PlanInputs()).max_context is None
    words = headline(mistral, PlanInputs())
    assert "memory sets no limit" in words and "trained for 32,768" in words
    assert "at 131,072 tokens (past the 32,768 the model was trained for)" in words
    k3 = headline(_model("kimi_k3"), PlanInputs(card="rtx4090"))
    assert "the weights alone" in k3 and "do not fit" in k3 and "tokens/s" not in k3
    unknown = headline(_model("llama3_1_8b", drop="max_position_embeddings"), PlanInputs(card="rtx4090"))
    assert "(trained window unknown)" in unknown


@pytest.mark.parametrize("gpus", [1, 2, 4])
def test_tensor_parallel_speeds_name_the_all_reduces_only_past_one_gpu(gpus):
    """Decode counts them (the latency floor, core/plan/latency.py); prefill's speed still leaves them out."""
    llama, inputs = _model("llama3_1_8b"), PlanInputs(gpus=gpus)
    p = plan(llama, inputs)
    speeds = [
        shown for quantity, shown, _ in rows(p) if "tokens/s" in quantity or quantity.startswith("prefill")
    ]
    assert len(speeds) == 3 and all(("all-reduces" in s) == (gpus > 1) for s in speeds), speeds
    if gpus > 1:
        assert all("counted" in s for s in speeds[:2]) and "left out" in speeds[2], speeds
    assert ("all-reduces" in headline(llama, inputs)) == (gpus > 1)
    assert any("all-reduce" in a for a in p.assumptions) == (gpus > 1)
    names = [trace.name for trace in context_figure(sweep(llama, inputs)).data]
    assert ("all-reduces" in names[0]) == (gpus > 1)


def test_cli_speed_lines_carry_the_all_reduce_note_on_two_gpus_only(capsys):
    two, _ = _cli(capsys, "--config", "llama3_1_8b", "--gpus", "2")
    assert all("all-reduces" in line for line in two if line.startswith("decode tokens/s"))
    assert "all-reduces" in two[0]  # the sentence
    _, one = _cli(capsys, "--config", "llama3_1_8b", "--gpus", "1")
    assert "all-reduce" not in one


def test_the_pictures_mark_the_trained_window():
    llama = _model("llama3_1_8b")
    marks = [t for t in context_figure(sweep(llama, PlanInputs())).data if t.name.startswith("trained for")]
    assert len(marks) == 1 and list(marks[0].x) == [TRAINED, TRAINED]
    short = context_figure(sweep(llama, PlanInputs(), contexts=(1024, 4096, 65536)))
    assert not [t for t in short.data if t.name.startswith("trained for")]  # outside the sweep: no mark
    past = memory_figure(plan(llama, PlanInputs(context=262144))).layout.title.text
    assert f"256K tokens (past the {TRAINED:,} the model was trained for)" in past
