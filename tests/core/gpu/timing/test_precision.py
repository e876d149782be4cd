"""The dtype a run uses: bf16 only where the tensor cores have it, fp16 on Volta/Turing, fp32 on the
CPU; the page sizes its models in the dtype the benchmark will pick."""

from __future__ import annotations

import pytest
import torch

from core.gpu.timing import precision

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize(
    ("capability", "dtype"),
    [((7, 0), torch.float16), ((7, 5), torch.float16), ((8, 0), torch.bfloat16), ((8, 9), torch.bfloat16),
     ((9, 0), torch.bfloat16), (None, torch.float32)],
)  # fmt: skip
def test_bf16_only_where_the_tensor_cores_have_it(capability, dtype):
    assert precision.pick_dtype(capability) == dtype  # Volta/Turing emulate bf16: fp16 there


@pytest.mark.parametrize(("capability", "itemsize"), [((7, 5), 2), ((9, 0), 2)])
def test_the_page_sizes_models_in_the_dtype_the_benchmark_will_pick(monkeypatch, capability, itemsize):
    asked = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda i: asked.append(i) or capability)
    assert precision.run_dtype(True) == precision.pick_dtype(capability)  # as make_env: CUDA device 0
    assert precision.run_dtype(True).itemsize == itemsize and asked == [0, 0]
    assert precision.run_dtype(False) == torch.float32 and asked == [0, 0]  # the CPU asks no card


def test_a_readers_card_the_server_cannot_see_is_sized_in_two_bytes(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # the public page's home command
    assert precision.run_dtype(True).itemsize == 2 and precision.run_dtype(False).itemsize == 4
