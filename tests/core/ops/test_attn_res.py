"""Attention Residuals: the single mix, full AttnRes and Block AttnRes agree with their definitions."""

from __future__ import annotations

import pytest
import torch

from core.ops.attn_res import BlockResidualStream, attn_res, block_attn_res, full_attn_res, rms_norm


def _layers(num: int, d: int, seed: int = 0) -> list:
    gen = torch.Generator().manual_seed(seed)
    mats = [torch.randn(d, d, generator=gen, dtype=torch.float64) / d**0.5 for _ in range(num)]
    return [lambda h, m=m: torch.tanh(h @ m) for m in mats]


def test_zero_query_gives_the_mean_of_the_sources():
    sources = torch.randn(5, 3, 7, 16, dtype=torch.float64)  # (N, B, T, D)
    out = attn_res(torch.zeros(16, dtype=torch.float64), sources)
    torch.testing.assert_close(out.output, sources.mean(dim=0))
    torch.testing.assert_close(out.weights, torch.full((3, 7, 5), 0.2, dtype=torch.float64))


def test_mix_matches_the_written_formula():
    torch.manual_seed(1)
    sources = torch.randn(4, 6, 8, dtype=torch.float64)  # (N, T, D)
    query = torch.randn(8, dtype=torch.float64)
    out = attn_res(query, sources)
    for t in range(6):
        logits = torch.stack([query @ rms_norm(sources[i, t]) for i in range(4)])
        alpha = torch.softmax(logits, dim=0)
        torch.testing.assert_close(out.weights[t], alpha)
        torch.testing.assert_close(out.output[t], sum(alpha[i] * sources[i, t] for i in range(4)))


def test_keys_are_normalised_but_values_are_not():
    # Scaling one source changes what is mixed in, not how much weight it gets.
    torch.manual_seed(2)
    sources = torch.randn(3, 8, dtype=torch.float64)
    query = torch.randn(8, dtype=torch.float64)
    scaled = sources.clone()
    scaled[1] *= 10.0
    a, b = attn_res(query, sources, eps=1e-12), attn_res(query, scaled, eps=1e-12)
    torch.testing.assert_close(a.weights, b.weights)
    assert not torch.allclose(a.output, b.output)


@pytest.mark.parametrize("block_size", [1, 2, 3, 5])
def test_weights_sum_to_one(block_size):
    torch.manual_seed(3)
    layers = _layers(6, 12)
    queries = torch.randn(7, 12, dtype=torch.float64)
    _, weights = block_attn_res(torch.randn(4, 12, dtype=torch.float64), layers, queries, block_size)
    for w in weights:
        torch.testing.assert_close(w.sum(-1), torch.ones(4, dtype=torch.float64))


def test_block_attn_res_with_one_layer_per_block_is_full_attn_res():
    torch.manual_seed(4)
    layers = _layers(7, 10, seed=4)
    queries = torch.randn(8, 10, dtype=torch.float64)
    embedding = torch.randn(2, 5, 10, dtype=torch.float64)
    full_out, full_w = full_attn_res(embedding, layers, queries)
    block_out, block_w = block_attn_res(embedding, layers, queries, block_size=1)
    torch.testing.assert_close(block_out, full_out)
    assert [w.shape[-1] for w in full_w] == list(range(1, 9))
    for a, b in zip(full_w, block_w, strict=True):
        torch.testing.assert_close(a, b)


def test_block_sources_are_completed_blocks_plus_the_partial_sum():
    torch.manual_seed(5)
    layers = _layers(7, 6, seed=5)
    queries = torch.zeros(8, 6, dtype=torch.float64)  # uniform mixes, easy to predict by hand
    _, weights = block_attn_res(torch.randn(6, dtype=torch.float64), layers, queries, block_size=3)
    # layer 0: [emb]; 1,2: [emb, partial]; 3: [emb, b1]; 4,5: [emb, b1, partial]; 6: [emb, b1, b2]; out: +partial
    assert [w.shape[-1] for w in weights] == [1, 2, 2, 2, 3, 3, 3, 4]


def test_block_with_one_huge_block_uses_the_plain_residual_sum_under_zero_queries():
    # With zero queries the mix is the mean of [embedding, partial]: a scaled version of the usual sum.
    stream = BlockResidualStream(torch.ones(4, dtype=torch.float64))
    stream.add(torch.full((4,), 3.0, dtype=torch.float64))
    out = stream.mix(torch.zeros(4, dtype=torch.float64))
    torch.testing.assert_close(out.output, torch.full((4,), 2.0, dtype=torch.float64))
    assert stream.num_sources == 2
