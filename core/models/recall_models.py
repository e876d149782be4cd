"""Two-layer tiny models for associative recall that differ only in their token mixer.

The comparison follows Zoology (arXiv 2312.04927): same embedding, same blocks,
same MLPs, same projections and short convolutions — only the rule that moves information
between positions changes:

    attention    softmax attention; keeps every key and value (a cache that grows per token)
    linear       linear attention: adds k vᵀ to a fixed K×V board        (core/ops/linear_attention.py)
    delta        DeltaNet: erases what the board returned for k, then writes (core/ops/delta_rule.py)
    gated_delta  Gated DeltaNet: the delta rule plus one fade rate per head (core/ops/gated_delta_rule.py)
    kda          Kimi Delta Attention: the delta rule plus a fade rate per key channel (core/ops/kda.py)
    hybrid       a KDA layer, then an attention layer (the Kimi Linear / K3 mix, in miniature)

Fixed-state mixers follow fla's layers (`fla/layers/delta_net.py`, `gated_deltanet.py`,
`kda.py`): q and k are L2-normalised per head, `beta = sigmoid(W_b x)`, gates in log
space `g = −exp(A_log) · softplus(W_a x + dt_bias)`, and the head outputs pass an RMS
norm before the output projection. As in fla, q, k and v each pass a short causal
depthwise convolution (kernel 3) after their projection, so a token's key can be built
from its predecessor — which is how a value learns which key it belongs to (H3, Based
and fla all use one). Every model, softmax attention included, has the same convolutions.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from core.mechanisms import get as get_rule
from core.mechanisms import rule_keys
from core.models.layers import RMSNorm
from core.models.protocol import ModelBase, load_weights, read_checkpoint, write_checkpoint
from core.recall import DEFAULT_VOCAB
from core.trace import LayerTrace, Trace, as_array

STATE_MIXERS = rule_keys()  # every fixed-board rule in the registry
MIXERS = ("attention", *STATE_MIXERS, "hybrid")
BYTES_PER_ELEMENT = 4  # float32


@dataclass
class RecallModelConfig:
    """Everything that defines one recall model; stored beside its weights."""

    mixer: str = "attention"
    d_model: int = 32
    n_heads: int = 1
    vocab_size: int = DEFAULT_VOCAB.size
    n_layers: int = 2
    conv_size: int = 3
    mlp_ratio: int = 2
    chunk_size: int = 16

    def __post_init__(self) -> None:
        if self.mixer not in MIXERS:
            raise ValueError(f"unknown mixer '{self.mixer}'; choose one of {', '.join(MIXERS)}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} must be divisible by n_heads {self.n_heads}")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def layer_kinds(self) -> tuple[str, ...]:
        """The mixer of each layer: the hybrid is a KDA layer followed by an attention layer."""
        if self.mixer == "hybrid":
            return ("kda",) + ("attention",) * (self.n_layers - 1)
        return (self.mixer,) * self.n_layers

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class LayerMemory:
    """What one layer holds after reading a sequence (numpy copies for pictures)."""

    index: int
    kind: str
    state: np.ndarray | None = None  # (H, K, V) the fixed board, state layers
    keys: np.ndarray | None = None  # (H, T, Dh) the cache, attention layers
    values: np.ndarray | None = None  # (H, T, Dh)


@dataclass
class RecallReadout:
    logits: torch.Tensor  # (B, T, vocab)
    memories: list[list[LayerMemory]] = field(default_factory=list)  # per batch row, per layer


@dataclass
class RecallCache:
    """Decoding memory of one sequence: per layer the short convolution's window and the K/V cache
    (attention) or the board (fixed-state mixers)."""

    windows: list[torch.Tensor]  # per layer (B, conv_size − 1, 3·D): the last projected q, k, v
    memory: list  # per layer (keys, values) each (B, H, T, Dh), or a board (B, H, K, V)
    position: int = 0  # tokens read so far


class ShortConv(nn.Module):
    """Depthwise causal convolution over time: position t mixes tokens t−2, t−1, t."""

    def __init__(self, dim: int, size: int) -> None:
        super().__init__()
        self.size = size
        self.conv = nn.Conv1d(dim, dim, size, groups=dim, padding=size - 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # (B, T, D)
        T = x.shape[1]
        return self.conv(x.transpose(1, 2))[..., :T].transpose(1, 2)  # (B, T, D)

    def step(self, x: torch.Tensor, window: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One position x (B, 1, D) after `window` (B, size − 1, D) → output (B, 1, D), next window."""
        full = torch.cat([window, x], dim=1)  # (B, size, D)
        y = F.conv1d(full.transpose(1, 2), self.conv.weight, self.conv.bias, groups=x.shape[-1])  # (B, D, 1)
        return y.transpose(1, 2), full[:, 1:]


class SoftmaxAttention(nn.Module):
    """Causal multi-head softmax attention; its memory is the K/V cache, a row per token."""

    kind = "attention"

    def __init__(self, cfg: RecallModelConfig) -> None:
        super().__init__()
        self.H, self.Dh = cfg.n_heads, cfg.head_dim
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.conv = ShortConv(3 * cfg.d_model, cfg.conv_size)
        self.out = nn.Linear(cfg.d_model, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor, keep_memory: bool = False):
        B, T, D = x.shape
        q, k, v = self.conv(self.qkv(x)).view(B, T, 3, self.H, self.Dh).unbind(2)  # each (B, T, H, Dh)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # (B, H, T, Dh)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, Dh)
        y = self.out(o.transpose(1, 2).reshape(B, T, D))
        memory = (k.detach(), v.detach()) if keep_memory else None
        return y, memory

    def step(self, x: torch.Tensor, window: torch.Tensor, memory, keep_parts: bool = True):
        """One token x (B, 1, D): append its key and value, attend over all of them."""
        B, _, D = x.shape
        qkv, window = self.conv.step(self.qkv(x), window)
        q, k, v = (t.transpose(1, 2) for t in qkv.view(B, 1, 3, self.H, self.Dh).unbind(2))  # (B, H, 1, Dh)
        keys, values = (torch.cat([old, new], dim=2) for old, new in zip(memory, (k, v), strict=True))
        weights = ((q @ keys.transpose(-1, -2)) * self.Dh**-0.5).softmax(dim=-1)  # (B, H, 1, T)
        y = self.out((weights @ values).transpose(1, 2).reshape(B, 1, D))
        return y, window, (keys, values), {"attention": weights[:, :, 0]}

    def new_memory(self, batch: int, dtype: torch.dtype):
        empty = torch.zeros(batch, self.H, 0, self.Dh, dtype=dtype)  # (B, H, 0, Dh)
        return empty, empty.clone()

    def cache_elements_per_token(self) -> int:
        return 2 * self.H * self.Dh

    def state_elements(self) -> int:
        return 0


class FixedStateMixer(nn.Module):
    """Linear attention, DeltaNet, Gated DeltaNet or KDA: a K×V board per head, through core/ops."""

    def __init__(self, cfg: RecallModelConfig, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.rule = get_rule(kind)
        self.H, self.K = cfg.n_heads, cfg.head_dim
        self.chunk_size = cfg.chunk_size
        D = cfg.d_model
        self.qkv = nn.Linear(D, 3 * D, bias=False)
        self.conv = ShortConv(3 * D, cfg.conv_size)
        self.out = nn.Linear(D, D, bias=False)
        self.out_norm = RMSNorm(self.K)
        if self.rule.takes_beta:
            self.beta_proj = nn.Linear(D, self.H)
        if self.rule.gated:
            n_gates = self.H if self.rule.gate == "head" else self.H * self.K
            self.gate_proj = nn.Linear(D, n_gates, bias=False)
            # fla / Mamba-2 draw A ~ U(1, 16) per head; with one head that draw alone would set the
            # memory span (A = 11 forgets most channels within a few tokens), so the heads get
            # A spread evenly over [1, 16] instead, starting at 1 (H = 1 → A = 1). dt stays
            # log-uniform in [1e-3, 1e-1] per gate, stored through the inverse softplus.
            self.A_log = nn.Parameter(torch.log(torch.linspace(1.0, 16.0, self.H)))
            dt = torch.exp(torch.empty(n_gates).uniform_(math.log(1e-3), math.log(1e-1)))
            self.dt_bias = nn.Parameter(dt + torch.log(-torch.expm1(-dt)))
        self.op = self.rule.ops

    def gates(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """beta = sigmoid(W_b x) (B, T, H); g = −exp(A_log)·softplus(W_a x + dt_bias), log space."""
        B, T, _ = x.shape
        extra: dict[str, torch.Tensor] = {}
        if self.rule.takes_beta:
            extra["beta"] = torch.sigmoid(self.beta_proj(x))  # (B, T, H)
        if self.rule.gated:
            raw = F.softplus(self.gate_proj(x) + self.dt_bias)
            if self.rule.gate == "head":
                extra["g"] = -self.A_log.exp() * raw  # (B, T, H)
            else:
                extra["g"] = -self.A_log.exp()[:, None] * raw.view(B, T, self.H, self.K)  # (B, T, H, K)
        return extra

    def forward(self, x: torch.Tensor, keep_memory: bool = False):
        B, T, D = x.shape
        q, k, v = self.conv(self.qkv(x)).view(B, T, 3, self.H, self.K).unbind(2)  # each (B, T, H, K)
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        o, S = self.op.chunk(
            q, k, v, **self.gates(x), chunk_size=self.chunk_size
        )  # (B, T, H, K), (B, H, K, K)
        y = self.out(self.out_norm(o).reshape(B, T, D))
        return y, (S.detach() if keep_memory else None)

    def step(self, x: torch.Tensor, window: torch.Tensor, S: torch.Tensor, keep_parts: bool = True):
        """One token x (B, 1, D): the rule's `step` on the board S (B, H, K, V)."""
        B, _, D = x.shape
        qkv, window = self.conv.step(self.qkv(x), window)
        q, k, v = qkv.view(B, 3, self.H, self.K).unbind(1)  # each (B, H, K)
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        gates = {f"{name}_t": value[:, 0] for name, value in self.gates(x).items()}  # beta_t, g_t
        res = self.op.step(S, q, k, v, **gates, keep_parts=keep_parts)
        y = self.out(self.out_norm(res.output).reshape(B, 1, D))
        return y, window, res.state, res.parts

    def new_memory(self, batch: int, dtype: torch.dtype) -> torch.Tensor:
        return torch.zeros(batch, self.H, self.K, self.K, dtype=dtype)  # (B, H, K, V)

    def cache_elements_per_token(self) -> int:
        return 0

    def state_elements(self) -> int:
        return self.H * self.K * self.K


class Block(nn.Module):
    """Pre-norm block: x + mixer(norm(x)), then x + MLP(norm(x))."""

    def __init__(self, cfg: RecallModelConfig, kind: str) -> None:
        super().__init__()
        self.norm1 = RMSNorm(cfg.d_model)
        self.mixer = SoftmaxAttention(cfg) if kind == "attention" else FixedStateMixer(cfg, kind)
        self.norm2 = RMSNorm(cfg.d_model)
        hidden = cfg.mlp_ratio * cfg.d_model
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, hidden), nn.GELU(), nn.Linear(hidden, cfg.d_model))

    def forward(self, x: torch.Tensor, keep_memory: bool = False):
        y, memory = self.mixer(self.norm1(x), keep_memory)
        x = x + y
        return x + self.mlp(self.norm2(x)), memory

    def step(self, x: torch.Tensor, window: torch.Tensor, memory, keep_parts: bool = True):
        """`forward` for one token x (B, 1, D), carrying the mixer's window and memory."""
        y, window, memory, parts = self.mixer.step(self.norm1(x), window, memory, keep_parts)
        x = x + y
        return x + self.mlp(self.norm2(x)), window, memory, parts


class RecallModel(ModelBase, nn.Module):
    """Embedding → 2 blocks → norm → logits over the whole vocabulary."""

    def __init__(self, cfg: RecallModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg, kind) for kind in cfg.layer_kinds)
        self.norm = RMSNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, std=0.02)
            if getattr(module, "bias", None) is not None:
                nn.init.zeros_(module.bias)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (B, T) → logits (B, T, vocab)."""
        return self.read(tokens, keep_memory=False).logits

    def read(self, tokens: torch.Tensor, keep_memory: bool = True) -> RecallReadout:
        """Run a whole sequence; with keep_memory, also return each layer's board or cache."""
        x = self.embed(tokens)  # (B, T, D)
        per_layer = []
        for block in self.blocks:
            x, memory = block(x, keep_memory)
            per_layer.append(memory)
        logits = self.head(self.norm(x))  # (B, T, vocab)
        readout = RecallReadout(logits)
        if keep_memory:
            for b in range(tokens.shape[0]):
                row = []
                for i, (block, memory) in enumerate(zip(self.blocks, per_layer, strict=True)):
                    kind = block.mixer.kind
                    if kind == "attention":
                        keys, values = memory
                        row.append(LayerMemory(i, kind, keys=keys[b].numpy(), values=values[b].numpy()))
                    else:
                        row.append(LayerMemory(i, kind, state=memory[b].numpy()))
                readout.memories.append(row)
        return readout

    # --- memory accounting: what the model must keep to go on reading -----------------------------

    def state_elements(self) -> int:
        """Numbers in the fixed boards (all layers), independent of sequence length."""
        return sum(block.mixer.state_elements() for block in self.blocks)

    def cache_elements_per_token(self) -> int:
        """Numbers the attention layers add to their K/V cache for every token read."""
        return sum(block.mixer.cache_elements_per_token() for block in self.blocks)

    def conv_elements(self) -> int:
        """The short convolutions' rolling window (kernel − 1 past q, k, v per layer), fixed size."""
        return sum((block.mixer.conv.size - 1) * 3 * self.cfg.d_model for block in self.blocks)

    def state_bytes(self) -> int:
        """Fixed memory (float32): the boards and the convolution windows; `memory_bytes(T)` adds the cache."""
        return (self.state_elements() + self.conv_elements()) * BYTES_PER_ELEMENT

    def cache_bytes_per_token(self) -> int:
        return self.cache_elements_per_token() * BYTES_PER_ELEMENT

    # --- one token at a time, and the checkpoint (the model protocol, core/models/protocol.py) ----

    def new_cache(self, batch: int = 1) -> RecallCache:
        dtype, width = self.embed.weight.dtype, 3 * self.cfg.d_model  # the window holds q, k and v
        windows = [torch.zeros(batch, b.mixer.conv.size - 1, width, dtype=dtype) for b in self.blocks]
        return RecallCache(windows, [b.mixer.new_memory(batch, dtype) for b in self.blocks])

    @torch.no_grad()
    def step(self, token: int, cache: RecallCache, keep_parts: bool = True) -> Trace:
        """Feed one token (batch of one); the Trace's token is the model's top guess for the next."""
        started = time.perf_counter()
        x = self.embed(torch.tensor([[int(token)]]))  # (1, 1, D)
        layers = []
        for i, block in enumerate(self.blocks):
            x, cache.windows[i], cache.memory[i], parts = block.step(
                x, cache.windows[i], cache.memory[i], keep_parts
            )
            layers.append(_layer_trace(i, block.mixer, cache.memory[i], parts))
        logits = self.head(self.norm(x))[0, 0]  # (vocab,)
        position, cache.position = cache.position, cache.position + 1
        return Trace(
            token=int(logits.argmax()),
            position=position,
            logits=as_array(logits),
            layers=layers,
            positions_computed=1,
            cache_bytes=cache.position * self.cache_bytes_per_token(),
            state_bytes=self.state_bytes(),
            wall_ms=(time.perf_counter() - started) * 1000,
        )

    @classmethod
    def load(cls, path) -> RecallModel:
        """Rebuild a model from `save`, in eval mode; `model.meta` holds what was saved beside it."""
        blob = read_checkpoint(path, "python -m core.train recall")
        model = cls(RecallModelConfig(**blob["config"]))
        load_weights(model, blob["state_dict"], path, "python -m core.train recall")  # strict=True
        model.meta = blob.get("extra", {})
        return model.eval()

    def save(self, path, meta: dict | None = None) -> None:
        """Weights + config (+ e.g. recorded accuracy) in one small file."""
        blob = {"config": self.cfg.to_dict(), "state_dict": self.state_dict(), "extra": meta or {}}
        write_checkpoint(path, blob)


def _layer_trace(index: int, mixer: nn.Module, memory, parts: dict) -> LayerTrace:
    """One layer's memory after a step, as numpy copies of sequence 0."""
    if mixer.kind == "attention":
        keys, values = (as_array(t[0]) for t in memory)  # (H, T, Dh) each
        nbytes = keys.shape[1] * mixer.cache_elements_per_token() * BYTES_PER_ELEMENT
        attention = as_array(parts["attention"][0])  # (H, T)
        return LayerTrace(index, "attention", "cache", nbytes, keys=keys, values=values, attention=attention)
    board = as_array(memory[0])  # (H, K, V)
    named = {name: as_array(part[0]) for name, part in parts.items()}
    return LayerTrace(
        index, mixer.kind, "state", mixer.state_elements() * BYTES_PER_ELEMENT, state=board, parts=named
    )


def build_model(mixer: str, d_model: int, n_heads: int = 1, seed: int = 0, **kwargs) -> RecallModel:
    """A freshly initialised model; the seed fixes the initial weights."""
    torch.manual_seed(seed)
    return RecallModel(RecallModelConfig(mixer=mixer, d_model=d_model, n_heads=n_heads, **kwargs))


# --- a reader's own sequence ---------------------------------------------------------------------


@dataclass
class RecallAnswer:
    key: str
    expected: str | None  # the value written for this key, None if it was never written
    predicted: str  # the model's top token, by name
    probability: float  # the model's probability for its top token
    expected_probability: float | None  # the model's probability for the right value


@dataclass
class ReaderRecall:
    tokens: list[str]  # token names, in order
    answers: list[RecallAnswer]
    memories: list[LayerMemory]  # each layer's board or cache after the whole sequence


@torch.no_grad()
def recall_from_tokens(
    model: RecallModel, tokens: list[int], query_positions: list[int], expected: list[str | None]
) -> ReaderRecall:
    """Run the model over one token sequence and read its answer at each query position."""
    vocab = DEFAULT_VOCAB
    readout = model.read(torch.tensor([tokens]), keep_memory=True)
    probs = readout.logits[0].softmax(-1)  # (T, vocab)
    answers = []
    for pos, right in zip(query_positions, expected, strict=True):
        top = int(probs[pos].argmax())
        p_right = float(probs[pos, vocab.value_token(right)]) if right is not None else None
        answers.append(
            RecallAnswer(
                vocab.token_name(tokens[pos]), right, vocab.token_name(top), float(probs[pos, top]), p_right
            )
        )
    return ReaderRecall([vocab.token_name(t) for t in tokens], answers, readout.memories[0])


@torch.no_grad()
def memory_colour_ranges(
    model: RecallModel, n_pairs: int = 8, seq_len: int = 64, seed: int = 123
) -> tuple[float, ...]:
    """One fixed colour range per layer of a model for its boards/caches: the 99th percentile of
    |entries| over a few held-out sequences, so every reader's sequence is drawn on the same scale.
    Per layer, not per model: a model's two memories can differ tenfold in size (a softmax layer's
    keys against the board after it), and one shared range would leave the smaller one blank."""
    from core.recall import generate

    data = generate(16, seq_len, n_pairs, seed)
    readout = model.read(data.inputs, keep_memory=True)
    by_layer: dict[int, list[np.ndarray]] = {}
    for row in readout.memories:
        for i, layer in enumerate(row):
            by_layer.setdefault(i, []).append(
                np.abs(layer.state if layer.state is not None else layer.keys).ravel()
            )
    return tuple(float(np.quantile(np.concatenate(by_layer[i]), 0.99)) for i in sorted(by_layer))
