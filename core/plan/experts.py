"""How many distinct routed experts a decoding step touches when a batch of tokens is routed at once.

Each token picks `top_k` of `experts` routed experts. If every token's choice were a uniform random
k-subset, independent of the others, an expert is missed by one token with probability 1 − k/E, so
the expected number of distinct experts touched by a batch of B tokens is

    E · (1 − (1 − k/E)^B)

(k at B = 1, approaching E as B grows). Real routers are skewed towards popular experts and
correlated across tokens, which touches *fewer* distinct experts; this is therefore an upper
estimate of the expert bytes a step reads. Each touched expert's weights are read once per step,
however many tokens of the batch it serves.
"""

from __future__ import annotations


def distinct_experts(experts: int, top_k: int, batch: int) -> float:
    """Expected distinct experts touched by `batch` tokens, each routed to `top_k` of `experts`."""
    if experts < 1 or not 0 <= top_k <= experts or batch < 0:
        raise ValueError("need experts ≥ 1, 0 ≤ top_k ≤ experts, batch ≥ 0")
    return experts * (1.0 - (1.0 - top_k / experts) ** batch)
