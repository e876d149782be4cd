"""The registry and the ops contract: every rule is one record, and every ops module looks alike.

- each registered rule's ops module has `step`, `recurrent` and `chunk` with the same signature
  (keyword-only after `v`), and declares the same inputs (β, gate) as its registry record;
- every `step` returns the same `StepResult` fields;
- a throwaway rule registered from outside (the delta rule under a new key) is picked up by the
  parity, reduction and page tests without editing them (run in a subprocess, see conftest.py).
"""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from core import mechanisms
from core.mechanisms import Mechanism, UnknownRule, get, rule_keys
from core.ops.common import PART_NAMES, StepResult
from core.ops.inputs import random_inputs, step_kwargs

ROOT = Path(__file__).resolve().parents[2]

SIGNATURES = {
    "step": ["S", "q_t", "k_t", "v_t", "*", "beta_t", "g_t", "scale", "keep_parts"],
    "recurrent": ["q", "k", "v", "*", "beta", "g", "scale", "initial_state"],
    "chunk": ["q", "k", "v", "*", "beta", "g", "scale", "initial_state", "chunk_size"],
}


def _signature(fn) -> list[str]:
    names = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind is inspect.Parameter.KEYWORD_ONLY and "*" not in names:
            names.append("*")
        names.append(p.name)
    return names


@pytest.mark.parametrize("rule", rule_keys())
def test_every_ops_module_has_the_same_signatures(rule: str) -> None:
    ops = get(rule).ops
    for name, expected in SIGNATURES.items():
        assert _signature(getattr(ops, name)) == expected, f"{rule}.{name}"


@pytest.mark.parametrize("rule", rule_keys())
def test_registry_and_ops_declare_the_same_inputs(rule: str) -> None:
    mech, declared = get(rule), get(rule).ops.INPUTS
    assert (declared.beta, declared.gate) == (mech.takes_beta, mech.gate)


@pytest.mark.parametrize("rule", rule_keys())
def test_every_step_returns_the_same_fields(rule: str) -> None:
    x = random_inputs(1, seed=1)
    result = get(rule).ops.step(x["S0"], x["q"][:, 0], x["k"][:, 0], x["v"][:, 0], **step_kwargs(rule, x, 0))
    assert isinstance(result, StepResult)
    assert set(result.parts) == set(PART_NAMES)
    assert result.recalled is not None and result.recalled.shape == result.output.shape


def test_records_are_complete_and_distinct() -> None:
    rules = list(mechanisms.RULES.values())
    assert len({m.color.lower() for m in rules}) == len(rules), "one colour per rule"
    assert len({m.label for m in rules}) == len(rules)
    for m in rules:
        assert m.key and m.label and m.update and m.source and m.gate in ("none", "head", "channel")


def test_work_per_token_follows_from_the_record() -> None:
    d = 8
    work = {key: get(key).macs_per_head(d) for key in ("linear", "delta", "gated_delta", "kda")}
    assert work == {"linear": 2 * d * d, "delta": 3 * d * d, "gated_delta": 4 * d * d, "kda": 4 * d * d + d}


def test_unknown_rule_names_the_known_ones() -> None:
    with pytest.raises(UnknownRule, match="choose one of linear, delta"):
        get("gdn")


def test_register_and_unregister() -> None:
    copy = Mechanism(**{**get("delta").__dict__, "key": "delta_again", "color": "#000001"})
    mechanisms.register(copy)
    try:
        assert "delta_again" in rule_keys() and get("delta_again").ops is get("delta").ops
        with pytest.raises(ValueError, match="already registered"):
            mechanisms.register(copy)
    finally:
        mechanisms.unregister("delta_again")
    assert "delta_again" not in rule_keys()


@pytest.mark.slow
def test_a_new_rule_is_picked_up_by_the_tests_without_editing_them() -> None:
    """CONTRIBUTING.md's promise: register a rule, and the parity, reduction and page tests cover it."""
    env = {**os.environ, "COURSE_EXTRA_RULE": "delta_copy"}
    files = [
        "tests/core/ops/test_chunk_parity.py",
        "tests/core/ops/test_reductions.py",
        "tests/core/test_mechanisms.py",
        "tests/app/test_chunks.py",
    ]
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-k", "delta_copy", *files]
    run = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    passed = int(out.split(" passed")[0].split()[-1])
    assert passed >= 20, out[-3000:]  # every parametrised parity, reduction and contract test ran for it


def test_extra_rule_hook_is_off_by_default() -> None:
    if os.environ.get("COURSE_EXTRA_RULE"):
        pytest.skip("running inside the throwaway-rule check")
    assert "delta_copy" not in rule_keys()
