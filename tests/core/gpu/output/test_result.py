"""One run as typed data (core.gpu.output.result): the JSON the CLI writes reads back field for field,
the committed runs included, and a MoE row keeps the key names the first runs wrote."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

from core.gpu import pipeline
from core.gpu.output.result import SuiteResult, moe_row_from_dict
from core.gpu.pipeline import SuiteSpec
from core.gpu.presets import PRESETS
from core.gpu.suites.moe_bench import MoeRow
from core.gpu.timing import bench_env
from tests.core.gpu.fake_nvml import FakeNvml

RUNS = Path(__file__).resolve().parents[4] / "docs" / "gpu-runs"


def _differences(old, new, path=""):
    """Where `new` lacks a key of `old` or holds another value (floats to rounding)."""
    if isinstance(old, dict):
        return [d for k, v in old.items() for d in
                ([f"{path}/{k} missing"] if k not in new else _differences(v, new[k], f"{path}/{k}"))]  # fmt: skip
    if isinstance(old, list):
        if len(old) != len(new):
            return [f"{path}: {len(old)} items, now {len(new)}"]
        return [
            d
            for i, (a, b) in enumerate(zip(old, new, strict=True))
            for d in _differences(a, b, f"{path}[{i}]")
        ]
    same = old == new or (isinstance(old, float) and isinstance(new, float) and math.isclose(old, new))
    return [] if same else [f"{path}: {old!r}, now {new!r}"]


@pytest.mark.parametrize("file", sorted(RUNS.rglob("bench.json")), ids=lambda p: str(p.relative_to(RUNS)))
def test_a_committed_run_reads_back_whole(file):
    text = file.read_text(encoding="utf-8")
    run = SuiteResult.from_json(text)
    assert run.context is not None and run.moe is not None and run.bandwidth.device_bytes_per_s > 0
    assert run.context.series[0].points[0].tokens_per_s > 0 and run.moe.rows[0].tokens_per_s > 0
    assert _differences(json.loads(text), json.loads(run.to_json())) == []


def test_a_fresh_run_writes_the_layout_and_reads_back_equal():
    env = bench_env.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))
    tiny = PRESETS["tiny"]
    try:
        spec = SuiteSpec(dataclasses.replace(tiny, depths=(0, 256), depth_seconds=2.0),
                         vram_budget_bytes=1024**2, cpu_layers=False, batches=(1, 2), batch_depth=64)  # fmt: skip
        run = pipeline.run(spec, env)
    finally:
        env.close()
    written = json.loads(run.to_json())
    assert list(written) == ["settings", "versions", "device", "complete", "stopped", "bandwidth", "seconds",
                             "context", "context_budget", "moe", "batch"]  # fmt: skip
    assert (
        written["settings"]["preset"]["name"] == "tiny"
        and written["settings"]["vram_budget_bytes"] == 1024**2
    )
    back = SuiteResult.from_json(run.to_json())
    assert json.loads(back.to_json()) == written and back.complete
    assert [key for key, _ in back.contexts()] == ["context", "context_budget"]


def test_a_moe_row_keeps_the_first_runs_key_names():
    row = MoeRow("experts (MoE)", 10, 2, 4, 1.0, 0.1, 2.0, way="grouped", way_trials={"gather": 1.0})
    written = row.to_dict()
    assert written["moe_impl"] == "grouped" and written["impl_trials"] == {"gather": 1.0}
    assert "way" not in written and moe_row_from_dict(written) == row
