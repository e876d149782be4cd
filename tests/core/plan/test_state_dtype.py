"""The fixed state's dtype as the config says it (`mamba_ssm_dtype`), and Qwen3.5-MoE configs (issue 42, item 7).

The planner used to refuse `qwen3_5_moe` (Qwen3.5-35B-A3B, 122B-A10B, 397B-A17B) and to keep every board
in FP32 whatever the config said. The default state format is now "config": the config's mamba_ssm_dtype
(Qwen3.5's released configs say float32), FP32 where it says nothing; a reader's explicit choice wins.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.plan import ConfigError, PlanInputs, parse, plan
from core.plan.__main__ import main

CONFIGS = Path(__file__).resolve().parents[3] / "assets" / "configs"


def _config(name: str) -> dict:
    return json.loads((CONFIGS / f"{name}.json").read_text())


def _with_dtype(name: str, dtype: str | None) -> dict:
    data = _config(name)
    text = data.get("text_config", data)
    text.pop("mamba_ssm_dtype", None)
    if dtype is not None:
        text["mamba_ssm_dtype"] = dtype
    return data


def test_qwen3_5_moe_plans_as_its_layers_and_experts():
    model = parse(_config("qwen3_5_35b_a3b"))
    spec = model.spec
    assert model.family == "qwen3_5_moe" and spec.name == "Qwen3.5-35B-A3B"
    assert spec.kinds.count("gated_delta") == 30 and len(spec.kinds) == 40  # every 4th layer attention
    assert (spec.moe.experts, spec.moe.top_k, spec.moe.shared, spec.first_k_dense) == (256, 8, 1, 0)
    text = {**_config("qwen3_5_35b_a3b")["text_config"], "model_type": "qwen3_5_moe_text"}
    assert parse(text).spec.total_params() == spec.total_params()  # the text config alone plans the same


@pytest.mark.parametrize("dtype, key, size", [("float32", "fp32", 4), ("bfloat16", "bf16", 2), ("float16", "bf16", 2),
                                              (None, None, 4)])  # fmt: skip
def test_the_board_takes_the_configs_dtype(dtype, key, size):
    model = parse(_with_dtype("qwen3_5_0_8b", dtype))
    assert model.state_dtype == key
    p = plan(model, PlanInputs(context=1024))  # the default: as the config says
    boards = 18 * 16 * 128 * 128 * size
    windows = 18 * 3 * (2 * 16 * 128 + 16 * 128) * 2
    assert p.state == boards + windows
    said = [a for a in p.assumptions if a.startswith("Fixed state")][0]
    assert ("mamba_ssm_dtype says so" in said) == (dtype is not None)
    chosen = plan(model, PlanInputs(context=1024, state_format="bf16"))  # the reader's choice wins
    assert chosen.state == 18 * 16 * 128 * 128 * 2 + windows


def test_an_unknown_state_dtype_is_refused_in_one_line():
    with pytest.raises(ConfigError, match="mamba_ssm_dtype 'float64'"):
        parse(_with_dtype("qwen3_5_0_8b", "float64"))
    with pytest.raises(ConfigError, match="mamba_ssm_dtype"):
        parse(_with_dtype("qwen3_5_0_8b", ["float32"]))


def test_cli_plans_qwen3_5_moe_and_refuses_bad_input_with_exit_2(capsys, tmp_path):
    assert main(["--config", "qwen3_5_35b_a3b", "--card", "h200"]) == 0
    assert "Qwen3.5-35B-A3B on 1 × H200" in capsys.readouterr().out
    bad = tmp_path / "config.json"
    bad.write_text(json.dumps(_with_dtype("qwen3_5_35b_a3b", "int4")))
    assert main(["--config", str(bad)]) == 2
    assert capsys.readouterr().err.strip().count("\n") == 0
    with pytest.raises(SystemExit) as stop:
        main(["--config", "qwen3_5_35b_a3b", "--state", "fp64"])
    assert stop.value.code == 2
