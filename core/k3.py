"""The numbers of Kimi K3 and Experts: the real K3 from its config, mini-K3 live.

Real numbers come from `core.specs.SPECS["kimi_k3"]` (config of the release) and
`core.roofline`; live numbers from mini-K3 (`core.models.mini_k3`): its per-step traces
reduced to small arrays (`summarise_run`) and its router's choices on a whole text
(`route_text`). The figure modules draw these (`core/figures/layer_map.py`, `k3_memory.py`,
`attn_res_heatmap.py`, `expert_grid.py`, `expert_routing.py`, `moe_weights.py`); they compute nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import torch

from core.i18n import _
from core.models.mini_k3 import ForwardInfo, MiniK3
from core.roofline import active_weight_bytes, weight_bytes
from core.specs import ModelSpec
from core.trace import Trace
from core.units import format_params

# ---------------------------------------------------------------------------------------------
# The real K3 (Kimi K3 and Experts)
# ---------------------------------------------------------------------------------------------


def full_attention_twin(spec: ModelSpec) -> ModelSpec:
    """The same model with every layer full attention (its own MLA): what K3 would cache without KDA."""
    return dataclasses.replace(
        spec, key=f"{spec.key}_all_attention", name=f"{spec.name}, all layers MLA", kinds=(), linear=None
    )


@dataclass(frozen=True)
class MemoryAtContext:
    context: int
    hybrid_cache: float  # bytes of growing MLA cache
    hybrid_state: float  # bytes of fixed KDA boards (+ conv buffers)
    twin_cache: float  # bytes an all-attention model of the same width keeps

    @property
    def hybrid_total(self) -> float:
        return self.hybrid_cache + self.hybrid_state


def memory_at_contexts(spec: ModelSpec, contexts: list[int]) -> list[MemoryAtContext]:
    """Per-sequence memory of the hybrid and its all-attention twin (bf16 cache, fp32 boards)."""
    twin = full_attention_twin(spec)
    rows = []
    for context in contexts:
        cache = context * spec.kv_cache_bytes_per_token()
        rows.append(MemoryAtContext(context, cache, spec.state_bytes(), twin.cache_bytes(context)))
    return rows


def crossover_tokens(spec: ModelSpec) -> float:
    """Context length at which the growing cache weighs as much as the fixed boards."""
    return spec.state_bytes() / spec.kv_cache_bytes_per_token()


# MXFP4 (OCP Microscaling): 4-bit values, one shared 8-bit scale per group of 32 → 4.25 bits each.
# K3's released routed experts are stored this way (compressed-tensors "mxfp4-pack-quantized",
# group 32); attention, shared experts, the dense layer and the head stay in bf16.
MXFP4_BYTES_PER_PARAM = (4 + 8 / 32) / 8


def routed_expert_params(spec: ModelSpec, active: bool = True) -> int:
    """Parameters in routed experts: the top-k a token wakes (active) or all of them, over every MoE layer."""
    if spec.moe is None:
        return 0
    moe_layers = spec.num_layers - spec.first_k_dense
    per_layer = spec.moe.top_k if active else spec.moe.experts
    return moe_layers * per_layer * spec.moe.expert_params(spec.hidden)


def release_weight_bytes_per_token(spec: ModelSpec) -> float:
    """Weight bytes one token reads in the released formats: routed experts MXFP4, everything else bf16."""
    routed = routed_expert_params(spec, active=True)
    rest = spec.active_params(count_embedding_table=False) - routed
    return rest * 2.0 + routed * MXFP4_BYTES_PER_PARAM


def example_picks(num_routed: int, top_k: int, seed: int = 0) -> list[int]:
    """`top_k` distinct routed experts for K3's expert grid to light, as one token would (sorted).

    K3's own router is not run here (its weights are the released 1.4 TB), so which experts light
    up is an example drawn with a fixed seed; how many is the config's top_k. mini-K3's page shows
    real picks of a real router."""
    if not 1 <= top_k <= num_routed:
        raise ValueError(f"top_k must be in 1..{num_routed}, got {top_k}")
    rng = np.random.default_rng(seed)
    return sorted(int(e) for e in rng.choice(num_routed, size=top_k, replace=False))


def bytes_per_token_rows(spec: ModelSpec, bytes_per_param: float = 2.0) -> list[tuple[str, float]]:
    """Weight bytes one token reads: a dense model of K3's total size vs K3's experts (bf16)."""
    return [
        (f"dense, {format_params(spec.total_params())} all read", weight_bytes(spec, bytes_per_param)),
        (f"{spec.name}: shared + {spec.moe.top_k} routed", active_weight_bytes(spec, bytes_per_param)),
    ]


# ---------------------------------------------------------------------------------------------
# mini-K3 stepping (Kimi K3)
# ---------------------------------------------------------------------------------------------

MEMORY_KINDS = ("kda", "mla")  # fixed boards, growing caches


@dataclass
class RunSummary:
    """A mini-K3 run reduced to the small arrays the pictures need (cheap to cache and copy)."""

    kinds: list[str]  # per layer: 'kda' or 'mla'
    tokens_in: list[int]  # byte fed at each step
    tokens_out: list[int]  # greedy next byte after each step
    prompt_length: int
    memory_bytes: np.ndarray  # (steps, layers)
    attn_res: (
        np.ndarray
    )  # (steps, 2·layers + 1, sources) AttnRes weights, NaN where a source does not exist yet
    mix_labels: list[str]  # rows of attn_res
    source_labels: list[str]  # columns of attn_res
    experts: list[list[list[int] | None]]  # [step][layer] → routed experts picked (None for the dense layer)
    wall_ms: np.ndarray  # (steps,)

    def layers_of(self, kind: str) -> list[int]:
        """0-based indices of the layers of one kind ('kda' or 'mla')."""
        return [i for i, k in enumerate(self.kinds) if k == kind]

    def memory_at(self, step: int) -> tuple[int, int, int | None]:
        """After `step` bytes (1-based): bytes in all KDA boards, in all MLA caches, and the growth
        of the whole memory over the step before (None at the first step)."""
        row = self.memory_bytes[step - 1]
        kda = np.array([k == "kda" for k in self.kinds])
        growth = int(row.sum() - self.memory_bytes[step - 2].sum()) if step > 1 else None
        return int(row[kda].sum()), int(row[~kda].sum()), growth

    def memory_totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Step numbers (1-based), bytes in all KDA boards and bytes in all MLA caches after each step."""
        steps = np.arange(1, len(self.memory_bytes) + 1)
        kda = np.array([k == "kda" for k in self.kinds])
        return steps, self.memory_bytes[:, kda].sum(axis=1), self.memory_bytes[:, ~kda].sum(axis=1)


@dataclass(frozen=True)
class AttnResPull:
    """The most lopsided AttnRes mix of one byte: the row whose top weight is furthest above an even split."""

    mix: str  # row label, e.g. "layer 7 before FFN"
    source: str  # the column it leans on, e.g. "embedding"
    weight: float  # that cell's weight, 0…1
    sources: int  # sources that row can weigh (cells that exist at that depth)

    @property
    def even(self) -> float:
        """The weight each source would get from an untrained (zero) pseudo-query: 1 / sources."""
        return 1.0 / self.sources

    @property
    def far_from_even(self) -> bool:
        """True when the top weight is at least 1.5× an even split: a mix training clearly steered."""
        return self.weight >= 1.5 * self.even


def strongest_pull(run: RunSummary, step: int) -> AttnResPull | None:
    """Of the AttnRes mixes shown for byte `step` (1-based), the one that leans hardest on one source,
    measured as its largest weight minus an even split. Rows with a single source (weight 1 by
    construction) are skipped; None when no row has two sources."""
    weights = run.attn_res[step - 1]  # (mixes, sources), NaN where a source does not exist yet
    best, best_lean = None, -np.inf
    for row, cells in enumerate(weights):
        present = np.flatnonzero(~np.isnan(cells))
        if len(present) < 2:
            continue
        col = int(present[np.argmax(cells[present])])
        lean = float(cells[col]) - 1.0 / len(present)
        if lean > best_lean:
            best_lean = lean
            best = AttnResPull(run.mix_labels[row], run.source_labels[col], float(cells[col]), len(present))
    return best


def source_labels(num_layers: int, block_size: int) -> list[str]:
    """Names of the AttnRes sources, in the reader's language: the embedding, then one sum per block
    of layers (1-based)."""
    labels = [_("embedding")]
    for start in range(0, num_layers, block_size):
        end = min(start + block_size, num_layers)
        labels.append(_("block {n}: layers {first}–{last}").format(n=len(labels), first=start + 1, last=end))
    return labels


def summarise_run(traces: list[Trace], kinds: list[str], block_size: int, prompt: list[int]) -> RunSummary:
    """Turn the traces of `MiniK3.run(prompt, n)` into a RunSummary (bytes fed: the prompt, then its guesses)."""
    L = len(kinds)
    sources = source_labels(L, block_size)
    mix_labels = []
    for i, kind in enumerate(kinds):
        name = "KDA" if kind == "kda" else "MLA"
        mix_labels += [
            _("layer {layer} before {mixer}").format(layer=i + 1, mixer=name),
            _("layer {layer} before FFN").format(layer=i + 1),
        ]
    mix_labels.append(_("output"))
    attn_res = np.full((len(traces), 2 * L + 1, len(sources)), np.nan, dtype=np.float32)
    for s, trace in enumerate(traces):
        for i, layer in enumerate(trace.layers):
            for row, weights in ((2 * i, layer.attn_res_weights), (2 * i + 1, layer.parts["attn_res_ffn"])):
                attn_res[s, row, : len(weights)] = weights
        final = trace.layers[-1].parts["attn_res_output"]
        attn_res[s, -1, : len(final)] = final
    return RunSummary(
        kinds=list(kinds),
        tokens_in=list(prompt) + [t.token for t in traces[len(prompt) - 1 : -1]],
        tokens_out=[t.token for t in traces],
        prompt_length=len(prompt),
        memory_bytes=np.array([[lt.memory_bytes for lt in t.layers] for t in traces], dtype=np.int64),
        attn_res=attn_res,
        mix_labels=mix_labels,
        source_labels=sources,
        experts=[[lt.experts for lt in t.layers] for t in traces],
        wall_ms=np.array([t.wall_ms for t in traces], dtype=np.float32),
    )


def live_run(model: MiniK3, prompt: list[int], new_tokens: int) -> RunSummary:
    """mini-K3 reads `prompt` byte by byte, then writes `new_tokens` more greedily, summarised."""
    traces = model.run(prompt, new_tokens=new_tokens, keep_parts=False)
    return summarise_run(traces, model.kinds, model.cfg.attn_res_block_size, prompt)


# ---------------------------------------------------------------------------------------------
# The router on a whole text (Experts)
# ---------------------------------------------------------------------------------------------


@dataclass
class TextRouting:
    """One MoE layer's decisions over a text: who was woken for each byte, and how hard."""

    layer: int  # 0-based decoder layer
    expert_ids: np.ndarray  # (T, k)
    weights: np.ndarray  # (T, E) mixing weight per byte and routed expert, 0 where not picked
    load: np.ndarray  # (E,) bytes served per routed expert

    @property
    def busiest(self) -> list[int]:
        """Every routed expert that served the most bytes (all of them when several tie)."""
        return [int(e) for e in np.flatnonzero(self.load == self.load.max())]

    @property
    def busiest_load(self) -> int:
        """Bytes the busiest expert(s) served."""
        return int(self.load.max())

    @property
    def idle(self) -> int:
        """How many routed experts served no byte at all."""
        return int((self.load == 0).sum())


@torch.no_grad()
def route_text(model: MiniK3, ids: list[int]) -> list[TextRouting]:
    """Run the whole text at once and return every MoE layer's routing for it."""
    info = ForwardInfo()
    model(torch.tensor([ids]), info=info)
    out = []
    for i, layer_info in enumerate(info.layers):
        routing = layer_info.routing
        if routing is None:
            continue
        E = routing.scores.shape[-1]
        dense = torch.zeros(len(ids), E).scatter(1, routing.expert_ids, routing.weights)  # (T, E)
        out.append(
            TextRouting(
                layer=i,
                expert_ids=routing.expert_ids.numpy().copy(),
                weights=dense.numpy().astype(np.float32),
                load=np.bincount(routing.expert_ids.reshape(-1).numpy(), minlength=E),
            )
        )
    return out
