"""Fixtures shared by the validator's tests."""

from __future__ import annotations

import pytest

from bench.gpu_validate import runner, sizes
from core.gpu.output.cli_io import StopOnSignal
from core.gpu.timing.bench_env import make_env


@pytest.fixture()
def validator(tmp_path):
    """A dry-size validator on the CPU, writing under `tmp_path`, closed after the test."""
    env = make_env("cpu")
    with StopOnSignal() as stop:
        yield runner.Validator(env, sizes.DRY, tmp_path, 60.0, stop)
    env.close()
