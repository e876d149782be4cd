"""The static KV cache's attention: one query on a CPU (fp32, grouped heads) equals the fused kernel's."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from core.models.static_kv import StaticKV, attend, one_query_fp32


def _exact(q, keys, values):
    """scaled_dot_product_attention in fp64: the reference both paths are measured against."""
    return F.scaled_dot_product_attention(q.double(), keys.double(), values.double(), enable_gqa=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("rows", [1, 7, 300])
def test_one_query_is_as_close_to_exact_as_the_fused_kernel(dtype, rows):
    torch.manual_seed(rows)
    q = torch.randn(2, 8, 1, 64).to(dtype)  # B = 2, H = 8 over Hkv = 2: four queries per KV head
    keys, values = torch.randn(2, 2, rows, 64).to(dtype), torch.randn(2, 2, rows, 64).to(dtype)
    kept = q.clone()
    ours = one_query_fp32(q, keys, values)
    assert ours.dtype == dtype and ours.shape == q.shape
    assert torch.equal(q, kept)  # the query is not scaled in place
    fused = F.scaled_dot_product_attention(q, keys, values, enable_gqa=True)
    exact = _exact(q, keys, values)
    ours_error = (ours.double() - exact).abs().max().item()
    fused_error = (fused.double() - exact).abs().max().item()
    assert ours_error <= max(fused_error, 1e-6), (ours_error, fused_error)


def test_a_decode_step_on_a_cpu_writes_its_row_and_reads_every_written_row():
    torch.manual_seed(0)
    kv = StaticKV.empty(1, 2, 16, 32, torch.float32, torch.device("cpu"))
    rows = [(torch.randn(1, 2, 1, 32), torch.randn(1, 2, 1, 32)) for _ in range(5)]
    for start, (k, v) in enumerate(rows):
        q = torch.randn(1, 4, 1, 32)
        out = attend(q, k, v, kv, start)
        keys = torch.cat([k for k, _ in rows[: start + 1]], dim=2)
        values = torch.cat([v for _, v in rows[: start + 1]], dim=2)
        torch.testing.assert_close(out, _exact(q, keys, values).float(), rtol=1e-5, atol=1e-6)
    assert torch.equal(kv.keys[:, :, 5:], torch.zeros(1, 2, 11, 32))  # rows not yet written stay empty
