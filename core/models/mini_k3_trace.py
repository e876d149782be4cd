"""What mini-K3 did on a run, reduced to small arrays the Kimi K3 and Experts pages draw.

`live_run` decodes with mini-K3 (`core.models.mini_k3`) and `summarise_run` reduces its per-step
traces (memory by layer kind, Attention Residuals' mix weights, the router's picks) to a `RunSummary`,
cheap to cache and copy; `strongest_pull` reads one step's strongest AttnRes source; `route_text` gives
the router's choices over a whole text. The figure modules draw these and compute nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from core.i18n import _
from core.models.mini_k3 import ForwardInfo, MiniK3
from core.trace import Trace


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
