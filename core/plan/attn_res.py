"""What Attention Residuals add to a model per token: sources, mixes, FLOPs, parameters, bytes in flight.

Counted from the config (`attn_res_block_size`; Kimi's report, docs/sources.md §1.8): every layer mixes
the embedding and the completed blocks' outputs before its attention and before its MLP.
"""

from __future__ import annotations

from core.specs import ModelSpec, attn_res_block_starts


def attn_res_costs(spec: ModelSpec) -> dict[str, float]:
    """What Attention Residuals add to a model with `attn_res_block_size` (K3: 12 decoder layers a block)."""
    if spec.attn_res_block_size is None:
        raise ValueError(f"{spec.name} has no Attention Residuals")
    blocks = len(attn_res_block_starts(spec.num_layers, spec.attn_res_block_size))
    sources = 1 + blocks  # embedding + completed blocks + the running partial block, at most
    mixes = 2 * spec.num_layers + 1  # before attention and before the MLP in every layer, once at the end
    flops = mixes * sources * spec.hidden * 2 * 2  # score (dot) and weighted sum, 2 FLOPs a multiply-add
    params = mixes * 2 * spec.hidden  # a pseudo-query and an RMSNorm weight per mix
    return {
        "max_sources": float(sources),
        "mixes_per_token": float(mixes),
        "flops_per_token": float(flops),
        "share_of_weight_flops": flops / (2.0 * spec.active_params(count_embedding_table=False)),
        "params": float(params),
        "in_flight_bytes_per_token": float(sources * spec.hidden * 2),
    }
