"""Fixtures the GPU benchmark tests share: a CPU bench environment whose NVML is missing, so no test
depends on the machine's card."""

from __future__ import annotations

import pytest

from core.gpu.timing import bench_env
from tests.core.gpu.fake_nvml import FakeNvml


@pytest.fixture(scope="module")
def env():
    return bench_env.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))
