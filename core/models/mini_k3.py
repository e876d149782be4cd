"""A miniature Kimi K3: KDA boards, latent-cache attention, Block AttnRes and experts.

Built from the same rules as the real model (Kimi K3 config and release code: HF
transformers `modular_kimi_k3.py`, mlx-lm `kimi_k3.py`; docs/sources.md §1.6–1.9, §3.2),
only small enough to run on a laptop CPU:

- the layer schedule comes from the same config rule as K3's: full attention at
  every `full_attn_every`-th layer and at the final layer, Kimi Delta Attention
  elsewhere (K3: 93 layers → 69 KDA + 24 MLA; here 9 layers → K K K A K K K A A);
- KDA layers keep a fixed board per head: L2-normalised q/k, β = sigmoid, K3's
  lower-bounded per-channel gate g = lb·sigmoid(A·(f(x) + dt_bias)) with lb = −5,
  a per-head RMSNorm and a sigmoid output gate (full rank, as in K3);
- attention layers are NoPE multi-head *latent* attention: per token they cache a
  compressed latent c_t (d_c numbers) and one small key part shared by all heads
  (d_R numbers), and up-project c_t to per-head keys and values when attending;
- the residual stream is Block AttnRes: before each sub-layer (mixer, feed-forward)
  and before the output, a learned pseudo-query mixes the completed block sums and
  the running partial sum; a block is `attn_res_block_size` decoder layers;
- the first layer's feed-forward is dense; the others are MoE with shared experts.

Simplifications (stated in assets/mini_k3/MODEL_CARD.md): byte vocabulary; no short
convolution before q/k/v (K3 has kernel 4); no query low-rank compression; no
latent down-projection for routed experts; the MLA up-projection is applied
explicitly instead of being absorbed into the query/output.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn as nn

from core.models.layers import RMSNorm
from core.models.mini_k3_config import KDA, MLA, MiniK3Config, schedule
from core.models.mini_k3_mixers import KDAInputs, KDALayer, LatentCache, MLALayer
from core.models.moe import DenseMLP, MoE, Routing
from core.models.protocol import ModelBase, greedy_run, load_weights, read_checkpoint, write_checkpoint
from core.ops.attn_res import AttnResResult, BlockResidualStream
from core.trace import LayerTrace, Trace, as_array

__all__ = ["KDAInputs", "KDALayer", "LatentCache", "MLALayer", "MiniK3", "MiniK3Config", "schedule"]

CHECKPOINT = Path(__file__).resolve().parents[2] / "assets" / "mini_k3" / "model.pt"


# ---------------------------------------------------------------------------------------------
# Decoder layer and model
# ---------------------------------------------------------------------------------------------


@dataclass
class LayerInfo:
    """What one decoder layer did to its tokens (batched), for traces and pictures."""

    mixer_mix: AttnResResult  # AttnRes before the token mixer
    ffn_mix: AttnResResult  # AttnRes before the feed-forward
    routing: Routing | None  # None for the dense layer


class DecoderLayer(nn.Module):
    def __init__(self, cfg: MiniK3Config, index: int, kind: str) -> None:
        super().__init__()
        self.index, self.kind = index, kind
        self.starts_block = index > 0 and index % cfg.attn_res_block_size == 0
        self.mixer_query = nn.Parameter(torch.zeros(cfg.d_model))  # AttnRes pseudo-queries, zero init
        self.ffn_query = nn.Parameter(torch.zeros(cfg.d_model))
        self.mixer_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.ffn_norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.mixer = KDALayer(cfg) if kind == KDA else MLALayer(cfg)
        dense = index < cfg.first_k_dense
        self.ffn = DenseMLP(cfg.d_model, cfg.dense_hidden) if dense else MoE(cfg.moe_config())

    def run(self, stream: BlockResidualStream, mixer_fn) -> LayerInfo:
        """Both sub-layers on a residual stream; `mixer_fn(h)` runs the token mixer on h (B, T, D)."""
        if self.starts_block:
            stream.close_block()
        mixer_mix = stream.mix(self.mixer_query)
        stream.add(mixer_fn(self.mixer_norm(mixer_mix.output)))
        ffn_mix = stream.mix(self.ffn_query)
        y, routing = self.ffn(self.ffn_norm(ffn_mix.output))
        stream.add(y)
        return LayerInfo(mixer_mix, ffn_mix, routing)


@dataclass
class DecodeCache:
    """Per-layer memory while decoding: a board (KDA) or a latent cache (MLA)."""

    memory: list  # torch.Tensor (B, H, K, V) for KDA, LatentCache for MLA
    position: int = 0


@dataclass
class ForwardInfo:
    """Per-layer records of a full-sequence forward pass (for pictures of a whole text)."""

    layers: list[LayerInfo] = field(default_factory=list)
    output_mix: AttnResResult | None = None


class MiniK3(ModelBase, nn.Module):
    def __init__(self, cfg: MiniK3Config) -> None:
        super().__init__()
        self.cfg = cfg
        self.kinds = cfg.layer_kinds()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.layers = nn.ModuleList(DecoderLayer(cfg, i, kind) for i, kind in enumerate(self.kinds))
        self.output_query = nn.Parameter(torch.zeros(cfg.d_model))
        self.norm = RMSNorm(cfg.d_model, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self._init_weights()

    def _init_weights(self) -> None:
        """GPT-2-style: N(0, 0.02) for matrices, output projections shrunk by depth."""
        residual_std = 0.02 / math.sqrt(2 * self.cfg.num_layers)
        for name, module in self.named_modules():
            if isinstance(module, nn.Linear):
                std = residual_std if name.endswith(("o_proj", "down")) else 0.02
                nn.init.normal_(module.weight, std=std)
            elif isinstance(module, nn.Embedding):
                nn.init.normal_(module.weight, std=0.02)

    # -- whole sequence ------------------------------------------------------------------------

    def forward(self, idx: torch.Tensor, info: ForwardInfo | None = None) -> torch.Tensor:
        """idx: (B, T) byte ids → logits (B, T, vocab). Pass a ForwardInfo to collect records."""
        stream = BlockResidualStream(self.embed(idx))  # (B, T, D)
        for layer in self.layers:
            layer_info = layer.run(stream, layer.mixer)
            if info is not None:
                info.layers.append(layer_info)
        out = stream.mix(self.output_query)
        if info is not None:
            info.output_mix = out
        return self.lm_head(self.norm(out.output))

    # -- one token at a time -------------------------------------------------------------------

    def new_cache(self, batch: int = 1) -> DecodeCache:
        memory = [
            layer.mixer.new_state(batch) if layer.kind == KDA else layer.mixer.new_cache(batch)
            for layer in self.layers
        ]
        return DecodeCache(memory=memory)

    def decode(
        self, tokens: torch.Tensor, cache: DecodeCache, keep_parts: bool = True
    ) -> tuple[torch.Tensor, list[LayerTrace]]:
        """Feed one token per sequence. tokens: (B,) → logits (B, vocab) and a LayerTrace per layer
        (the trace describes sequence 0). Updates `cache` in place. keep_parts=False skips the
        KDA decay/erase/write snapshots (faster when only memory sizes and mixes are wanted)."""
        stream = BlockResidualStream(self.embed(tokens)[:, None])  # (B, 1, D)
        traces = []
        for i, layer in enumerate(self.layers):
            record: dict = {}

            def mixer_fn(h, i=i, layer=layer, record=record):
                if layer.kind == KDA:
                    out, res, _ = layer.mixer.step(h, cache.memory[i], keep_parts)
                    cache.memory[i] = res.state
                    record["parts"] = {name: as_array(part[0]) for name, part in res.parts.items()}
                    return out
                out, cache.memory[i], weights = layer.mixer.step(h, cache.memory[i])
                record["attention"] = as_array(weights[0, :, 0])  # (H, T)
                return out

            info = layer.run(stream, mixer_fn)
            traces.append(self._layer_trace(i, layer, cache.memory[i], info, record))
        out = stream.mix(self.output_query)
        traces[-1].parts["attn_res_output"] = as_array(out.weights[0, 0])
        cache.position += 1
        return self.lm_head(self.norm(out.output))[:, 0], traces

    def _layer_trace(self, i: int, layer: DecoderLayer, memory, info: LayerInfo, record: dict) -> LayerTrace:
        parts = dict(record.get("parts", {}))
        parts["attn_res_ffn"] = as_array(info.ffn_mix.weights[0, 0])
        trace = LayerTrace(
            index=i,
            kind=layer.kind,
            memory="state" if layer.kind == KDA else "cache",
            memory_bytes=memory_nbytes(memory, batch=memory_batch(memory)),
            attn_res_weights=as_array(info.mixer_mix.weights[0, 0]),
            parts=parts,
        )
        if layer.kind == KDA:
            trace.state = as_array(memory[0])  # (H, K, V)
        else:
            trace.latent = as_array(memory.latent[0])  # (T, d_c)
            trace.attention = record["attention"]
        if info.routing is not None:
            trace.experts = info.routing.expert_ids[0].tolist()
            trace.expert_weights = info.routing.weights[0].tolist()
        return trace

    @torch.no_grad()
    def step(self, token: int, cache: DecodeCache, keep_parts: bool = True) -> Trace:
        """Feed one byte (batch of one) and return the Trace of this step; the greedy next byte."""
        started = time.perf_counter()
        position = cache.position
        logits, layers = self.decode(torch.tensor([int(token)]), cache, keep_parts)
        wall_ms = (time.perf_counter() - started) * 1000
        cache_bytes = sum(t.memory_bytes for t in layers if t.memory == "cache")
        state_bytes = sum(t.memory_bytes for t in layers if t.memory == "state")
        return Trace(
            token=int(logits[0].argmax()),
            position=position,
            logits=as_array(logits[0]),
            layers=layers,
            positions_computed=1,
            cache_bytes=cache_bytes,
            state_bytes=state_bytes,
            wall_ms=wall_ms,
        )

    @torch.no_grad()
    def run(self, prompt: list[int], new_tokens: int = 0, keep_parts: bool = True) -> list[Trace]:
        """Step through `prompt`, then continue greedily for `new_tokens`; one Trace per byte fed."""
        return greedy_run(self, prompt, new_tokens, keep_parts, "byte")

    # -- sizes and the checkpoint (the model protocol, core/models/protocol.py) ---------------

    def cache_bytes_per_token(self) -> int:
        return self.kinds.count(MLA) * self.cfg.latent_bytes_per_token(self.element_bytes())

    def state_bytes(self) -> int:
        return self.kinds.count(KDA) * self.cfg.board_bytes(self.element_bytes())

    def active_params(self) -> int:
        """Weights one token reads: everything except the routed experts it did not pick."""
        idle = 0
        for layer in self.layers:
            if isinstance(layer.ffn, MoE):
                idle += layer.ffn.total_params() - layer.ffn.active_params()
        return self.num_params() - idle

    @classmethod
    def load(cls, path: Path | str = CHECKPOINT) -> MiniK3:
        """The trained mini-K3 (fp32 in memory), ready for eval."""
        rebuild = "python -m core.train mini_k3"
        blob = read_checkpoint(path, rebuild)
        model = cls(MiniK3Config(**blob["config"]))
        state = {name: t.float() if t.is_floating_point() else t for name, t in blob["state_dict"].items()}
        load_weights(model, state, path, rebuild)
        model.meta = blob.get("meta", {})
        return model.eval()

    def save(self, path: Path | str, meta: dict | None = None) -> None:
        """Write config + weights (bf16, as K3 ships its dense weights) + metadata."""
        state = {
            n: t.to(torch.bfloat16) if t.is_floating_point() else t for n, t in self.state_dict().items()
        }
        write_checkpoint(path, {"config": asdict(self.cfg), "state_dict": state, "meta": meta or {}})


def memory_batch(memory) -> int:
    return memory.shape[0] if isinstance(memory, torch.Tensor) else memory.latent.shape[0]


def memory_nbytes(memory, batch: int = 1) -> int:
    """Bytes of one layer's memory for one sequence: the board, or the cached latents."""
    total = memory.numel() * memory.element_size() if isinstance(memory, torch.Tensor) else memory.nbytes()
    return total // max(1, batch)
