"""A miniature Kimi K3: KDA boards, latent-cache attention, Block AttnRes and experts.

Built from the same rules as the real model (Kimi K3 config and release code: HF
transformers `modular_kimi_k3.py`, mlx-lm `kimi_k3.py`; facts.md §1.6–1.9, §3.2),
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

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from core.models.moe import DenseMLP, MoE, MoEConfig, Routing
from core.ops import kda
from core.ops.attn_res import AttnResResult, BlockResidualStream
from core.trace import LayerTrace, Trace

KDA, MLA = "kda", "mla"


@dataclass
class MiniK3Config:
    vocab_size: int = 256  # bytes
    d_model: int = 96
    num_layers: int = 9
    full_attn_every: int = 4  # K3: every 4th layer is full attention …
    final_full_attention: bool = True  # … and so is the last one
    attn_res_block_size: int = 3  # decoder layers per AttnRes block (K3: 12)
    # Kimi Delta Attention
    kda_heads: int = 2
    kda_head_dim: int = 32  # d_k = d_v
    gate_lower_bound: float = -5.0  # K3's gate_lower_bound
    chunk_size: int = 32
    # Multi-head latent attention (NoPE)
    mla_heads: int = 2
    kv_latent_dim: int = 32  # d_c: the cached latent (K3: 512)
    shared_key_dim: int = 8  # d_R: the cached key part shared by all heads (K3: 64)
    mla_head_dim: int = 32  # per-head key (latent part) and value size (K3: 128)
    # Feed-forward
    first_k_dense: int = 1  # K3: layer 1 is dense
    dense_hidden: int = 192
    num_experts: int = 16  # routed (K3: 896)
    top_k: int = 2  # routed experts per token (K3: 16)
    num_shared_experts: int = 1  # (K3: 2)
    expert_hidden: int = 32
    routed_scaling_factor: float = 1.0
    norm_eps: float = 1e-5

    def layer_kinds(self) -> list[str]:
        """'kda' or 'mla' per layer, from the same rule that lays out K3's 93 layers."""
        return schedule(self.num_layers, self.full_attn_every, self.final_full_attention)

    def moe_config(self) -> MoEConfig:
        return MoEConfig(
            d_model=self.d_model,
            num_experts=self.num_experts,
            top_k=self.top_k,
            num_shared=self.num_shared_experts,
            expert_hidden=self.expert_hidden,
            routed_scaling_factor=self.routed_scaling_factor,
        )


def schedule(num_layers: int, full_attn_every: int, final_full_attention: bool) -> list[str]:
    """The hybrid layer map: K3's rule from core/specs, spelled as 'kda' / 'mla' per layer."""
    from core.specs import hybrid_layer_kinds

    kinds = hybrid_layer_kinds(num_layers, full_attn_every, final_full_attention)
    return [KDA if kind in ("kda", "linear") else MLA for kind in kinds]


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)


# ---------------------------------------------------------------------------------------------
# Kimi Delta Attention layer: a fixed board per head
# ---------------------------------------------------------------------------------------------


@dataclass
class KDAInputs:
    """Everything the KDA op needs for some tokens, already activated."""

    q: torch.Tensor  # (B, T, H, K) L2-normalised
    k: torch.Tensor  # (B, T, H, K) L2-normalised
    v: torch.Tensor  # (B, T, H, V)
    beta: torch.Tensor  # (B, T, H)
    g: torch.Tensor  # (B, T, H, K) log-decay in (lb, 0)


class KDALayer(nn.Module):
    """Token mixer with a fixed d_k × d_v board per head (Kimi Linear / K3 KDA)."""

    def __init__(self, cfg: MiniK3Config) -> None:
        super().__init__()
        H, Dh, D = cfg.kda_heads, cfg.kda_head_dim, cfg.d_model
        self.heads, self.head_dim, self.lower_bound = H, Dh, cfg.gate_lower_bound
        self.chunk_size = cfg.chunk_size
        self.q_proj = nn.Linear(D, H * Dh, bias=False)
        self.k_proj = nn.Linear(D, H * Dh, bias=False)
        self.v_proj = nn.Linear(D, H * Dh, bias=False)
        self.f_a = nn.Linear(D, Dh, bias=False)  # low-rank decay projection, as in K3
        self.f_b = nn.Linear(Dh, H * Dh, bias=False)
        self.b_proj = nn.Linear(D, H, bias=False)
        self.g_proj = nn.Linear(D, H * Dh, bias=False)  # full-rank output gate
        self.o_norm = RMSNorm(Dh, cfg.norm_eps)
        self.o_proj = nn.Linear(H * Dh, D, bias=False)
        # A = exp(A_log) ~ U(1, 16) per head (fla's init). dt_bias is set so that the initial
        # per-step keep rate e^g of the channels is spread between 0.5 and 0.99 (our choice).
        A = torch.empty(H).uniform_(1, 16)
        self.A_log = nn.Parameter(A.log())
        keep = torch.linspace(0.99, 0.5, H * Dh).reshape(H, Dh)  # (H, K)
        frac = keep.log() / cfg.gate_lower_bound  # sigmoid(A · dt_bias) = g / lb
        self.dt_bias = nn.Parameter((torch.logit(frac) / A[:, None]).reshape(-1))

    def inputs(self, x: torch.Tensor) -> KDAInputs:
        """x: (B, T, D) → q, k, v, β, g for the op."""
        B, T, _ = x.shape
        H, Dh = self.heads, self.head_dim
        q = F.normalize(F.silu(self.q_proj(x)).view(B, T, H, Dh), dim=-1)  # (B, T, H, K)
        k = F.normalize(F.silu(self.k_proj(x)).view(B, T, H, Dh), dim=-1)  # (B, T, H, K)
        v = F.silu(self.v_proj(x)).view(B, T, H, Dh)  # (B, T, H, V)
        beta = torch.sigmoid(self.b_proj(x))  # (B, T, H)
        pre = (self.f_b(self.f_a(x)) + self.dt_bias).view(B, T, H, Dh)  # (B, T, H, K)
        g = self.lower_bound * torch.sigmoid(self.A_log.exp()[:, None] * pre)  # (B, T, H, K), in (lb, 0)
        return KDAInputs(q, k, v, beta, g)

    def finish(self, x: torch.Tensor, o: torch.Tensor) -> torch.Tensor:
        """Per-head norm, sigmoid output gate, output projection. o: (B, T, H, V) → (B, T, D)."""
        B, T = x.shape[:2]
        gate = torch.sigmoid(self.g_proj(x)).view(B, T, self.heads, self.head_dim)  # (B, T, H, V)
        return self.o_proj((self.o_norm(o) * gate).reshape(B, T, -1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Whole sequence at once with the chunked (WY/UT) form. x: (B, T, D)."""
        a = self.inputs(x)
        o, _ = kda.chunk(a.q, a.k, a.v, beta=a.beta, g=a.g, chunk_size=self.chunk_size)  # (B, T, H, V)
        return self.finish(x, o)

    def step(
        self, x: torch.Tensor, S: torch.Tensor, keep_parts: bool = True
    ) -> tuple[torch.Tensor, kda.StepResult, KDAInputs]:
        """One token. x: (B, 1, D), S: (B, H, K, V) → output (B, 1, D), the op's step record, inputs."""
        a = self.inputs(x)
        res = kda.step(
            S, a.q[:, 0], a.k[:, 0], a.v[:, 0], beta_t=a.beta[:, 0], g_t=a.g[:, 0], keep_parts=keep_parts
        )
        return self.finish(x, res.output[:, None]), res, a

    def new_state(self, batch: int, dtype=torch.float32) -> torch.Tensor:
        return torch.zeros(batch, self.heads, self.head_dim, self.head_dim, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# Multi-head latent attention layer: a growing cache of small latents
# ---------------------------------------------------------------------------------------------


@dataclass
class LatentCache:
    """What an MLA layer keeps per token: the latent c_t and the shared key part."""

    latent: torch.Tensor  # (B, T, d_c)
    shared_key: torch.Tensor  # (B, T, d_R)

    @property
    def length(self) -> int:
        return self.latent.shape[1]

    def nbytes(self) -> int:
        return (
            self.latent.numel() * self.latent.element_size()
            + self.shared_key.numel() * self.shared_key.element_size()
        )


class MLALayer(nn.Module):
    """NoPE multi-head latent attention with a sigmoid output gate (K3's "gated MLA")."""

    def __init__(self, cfg: MiniK3Config) -> None:
        super().__init__()
        H, Dh, Dc, Dr, D = cfg.mla_heads, cfg.mla_head_dim, cfg.kv_latent_dim, cfg.shared_key_dim, cfg.d_model
        self.heads, self.head_dim, self.latent_dim, self.shared_dim = H, Dh, Dc, Dr
        self.scale = (Dh + Dr) ** -0.5
        self.q_proj = nn.Linear(D, H * (Dh + Dr), bias=False)
        self.kv_down = nn.Linear(D, Dc + Dr, bias=False)  # x → [c_t ; k_shared]: what gets cached
        self.kv_norm = RMSNorm(Dc, cfg.norm_eps)
        self.kv_up = nn.Linear(Dc, H * 2 * Dh, bias=False)  # c_t → per-head key part and value
        self.g_proj = nn.Linear(D, H * Dh, bias=False)
        self.o_proj = nn.Linear(H * Dh, D, bias=False)

    def compress(self, x: torch.Tensor) -> LatentCache:
        """x: (B, T, D) → the per-token entries this layer caches."""
        c, k_shared = self.kv_down(x).split([self.latent_dim, self.shared_dim], dim=-1)
        return LatentCache(latent=self.kv_norm(c), shared_key=k_shared)  # (B, T, d_c), (B, T, d_R)

    def attend(self, x: torch.Tensor, cache: LatentCache, causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
        """Queries from x (B, Tq, D) against all cached tokens; returns (B, Tq, D) and weights (B, H, Tq, Tk)."""
        B, Tq, _ = x.shape
        H, Dh, Dr, Tk = self.heads, self.head_dim, self.shared_dim, cache.length
        q = self.q_proj(x).view(B, Tq, H, Dh + Dr).transpose(1, 2)  # (B, H, Tq, Dh + Dr)
        kv = self.kv_up(cache.latent).view(B, Tk, H, 2 * Dh).transpose(1, 2)  # (B, H, Tk, 2·Dh)
        k_latent, v = kv.split([Dh, Dh], dim=-1)  # (B, H, Tk, Dh) each
        k_shared = cache.shared_key[:, None].expand(B, H, Tk, Dr)  # (B, H, Tk, d_R), same for every head
        k = torch.cat([k_latent, k_shared], dim=-1)  # (B, H, Tk, Dh + Dr)
        scores = (q @ k.transpose(-1, -2)) * self.scale  # (B, H, Tq, Tk)
        if causal:
            mask = torch.ones(Tq, Tk, dtype=torch.bool, device=x.device).tril(Tk - Tq)
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = scores.softmax(dim=-1)  # (B, H, Tq, Tk)
        o = (weights @ v).transpose(1, 2)  # (B, Tq, H, Dh)
        gate = torch.sigmoid(self.g_proj(x)).view(B, Tq, H, Dh)
        return self.o_proj((o * gate).reshape(B, Tq, -1)), weights

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.attend(x, self.compress(x), causal=True)[0]

    def step(self, x: torch.Tensor, cache: LatentCache) -> tuple[torch.Tensor, LatentCache, torch.Tensor]:
        """One token x: (B, 1, D): append its latent, attend over the whole cache."""
        new = self.compress(x)
        cache = LatentCache(
            latent=torch.cat([cache.latent, new.latent], dim=1),  # (B, T + 1, d_c)
            shared_key=torch.cat([cache.shared_key, new.shared_key], dim=1),  # (B, T + 1, d_R)
        )
        out, weights = self.attend(x, cache, causal=False)
        return out, cache, weights

    def new_cache(self, batch: int, dtype=torch.float32) -> LatentCache:
        return LatentCache(
            latent=torch.zeros(batch, 0, self.latent_dim, dtype=dtype),
            shared_key=torch.zeros(batch, 0, self.shared_dim, dtype=dtype),
        )


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


class MiniK3(nn.Module):
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
                    record["parts"] = {name: _np(part[0]) for name, part in res.parts.items()}
                    return out
                out, cache.memory[i], weights = layer.mixer.step(h, cache.memory[i])
                record["attention"] = weights[0, :, 0].detach().numpy().copy()  # (H, T)
                return out

            info = layer.run(stream, mixer_fn)
            traces.append(self._layer_trace(i, layer, cache.memory[i], info, record))
        out = stream.mix(self.output_query)
        traces[-1].parts["attn_res_output"] = _np(out.weights[0, 0])
        cache.position += 1
        return self.lm_head(self.norm(out.output))[:, 0], traces

    def _layer_trace(self, i: int, layer: DecoderLayer, memory, info: LayerInfo, record: dict) -> LayerTrace:
        parts = dict(record.get("parts", {}))
        parts["attn_res_ffn"] = _np(info.ffn_mix.weights[0, 0])
        trace = LayerTrace(
            index=i,
            kind=layer.kind,
            memory="state" if layer.kind == KDA else "cache",
            memory_bytes=memory_nbytes(memory, batch=memory_batch(memory)),
            attn_res_weights=_np(info.mixer_mix.weights[0, 0]),
            parts=parts,
        )
        if layer.kind == KDA:
            trace.state = _np(memory[0])  # (H, K, V)
        else:
            trace.latent = _np(memory.latent[0])  # (T, d_c)
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
            logits=_np(logits[0]),
            layers=layers,
            positions_computed=1,
            cache_bytes=cache_bytes,
            state_bytes=state_bytes,
            wall_ms=wall_ms,
        )

    @torch.no_grad()
    def run(self, prompt: list[int], new_tokens: int = 0, keep_parts: bool = True) -> list[Trace]:
        """Step through `prompt`, then continue greedily for `new_tokens`; one Trace per byte fed."""
        if not prompt:
            raise ValueError("prompt must hold at least one byte")
        cache = self.new_cache()
        traces = [self.step(t, cache, keep_parts) for t in prompt]
        for _ in range(new_tokens):
            traces.append(self.step(traces[-1].token, cache, keep_parts))
        return traces

    # -- sizes ---------------------------------------------------------------------------------

    def total_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def active_params(self) -> int:
        """Weights one token reads: everything except the routed experts it did not pick."""
        idle = 0
        for layer in self.layers:
            if isinstance(layer.ffn, MoE):
                idle += layer.ffn.total_params() - layer.ffn.active_params()
        return self.total_params() - idle


def _np(x: torch.Tensor) -> np.ndarray:
    return x.detach().float().numpy().copy()


def memory_batch(memory) -> int:
    return memory.shape[0] if isinstance(memory, torch.Tensor) else memory.latent.shape[0]


def memory_nbytes(memory, batch: int = 1) -> int:
    """Bytes of one layer's memory for one sequence: the board, or the cached latents."""
    total = memory.numel() * memory.element_size() if isinstance(memory, torch.Tensor) else memory.nbytes()
    return total // max(1, batch)


# ---------------------------------------------------------------------------------------------
# The shipped checkpoint
# ---------------------------------------------------------------------------------------------

CHECKPOINT = Path(__file__).resolve().parents[2] / "assets" / "mini_k3" / "model.pt"


def save(model: MiniK3, path: Path, meta: dict | None = None) -> None:
    """Write config + weights (bf16, as K3 ships its dense weights) + metadata."""
    state = {
        name: t.to(torch.bfloat16) if t.is_floating_point() else t for name, t in model.state_dict().items()
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"config": asdict(model.cfg), "state_dict": state, "meta": meta or {}}, path)


def load(path: Path = CHECKPOINT) -> MiniK3:
    """The trained mini-K3 (fp32 in memory), ready for eval. Run `python -m core.train mini_k3` to rebuild it."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{path} is missing; rebuild it with `python -m core.train mini_k3`")
    blob = torch.load(path, map_location="cpu", weights_only=True)
    model = MiniK3(MiniK3Config(**blob["config"]))
    model.load_state_dict(
        {name: t.float() if t.is_floating_point() else t for name, t in blob["state_dict"].items()}
    )
    model.meta = blob.get("meta", {})
    return model.eval()


# ---------------------------------------------------------------------------------------------
# The router on a whole text (lesson 9)
# ---------------------------------------------------------------------------------------------


@dataclass
class TextRouting:
    """One MoE layer's decisions over a text: who was woken for each byte, and how hard."""

    layer: int  # 0-based decoder layer
    expert_ids: np.ndarray  # (T, k)
    weights: np.ndarray  # (T, E) mixing weight per byte and routed expert, 0 where not picked
    load: np.ndarray  # (E,) bytes served per routed expert


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
