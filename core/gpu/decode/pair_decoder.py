"""A released model's decode step for a batch of sequences, built from the planner's shapes, random weights.

`PairDecoder(model, batch, device, dtype)` takes a `core.plan.config.PlannedModel` with softmax attention
(multi-head or grouped-query, with Qwen3's q/k norms and Qwen3.5's output gate), optionally Gated DeltaNet
layers (Qwen3.5's linear attention) and a dense SwiGLU feed-forward, and holds every weight the config
names — its parameter count is the planner's `total_params` — so one step reads what the released
model's step reads. The weights are random: a step moves the same bytes as a trained model's.

Per sequence it keeps what the planner counts (core.plan.memory.sequence_bytes, serving engines' layout):

- a full-attention layer: keys and values, `(B, kv_heads, positions, head_dim)` each, in the model's dtype;
- a Gated DeltaNet layer: the fp32 state `(B, v_heads, d_k, d_v)` and the short convolution's last
  kernel − 1 inputs `(B, channels, kernel − 1)`.

One step for all B sequences: the B tokens' rows of the table, then per layer RMSNorm → mixer →
RMSNorm → SwiGLU, then the head. Grouped-query attention runs as one `scaled_dot_product_attention`
with each key/value head's G query heads as G queries (no copy of the cache per query head). The
Gated DeltaNet step is the recurrence of `core.ops.gated_delta_rule.step` written in place:
S ← αS, S += k (β (v − Sᵀk))ᵀ, o = Sᵀq, with q and k repeated from 16 to 32 heads as Qwen3.5 does.
Positions are plain ints and the tokens are looked up on the device, so a step can be graphed.
Left out, as they cost no bytes a step reads: rotary embeddings and the biases Qwen's configs do not have.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from core.gpu.decode.ffn import FILL_BLOCK, random_, weight
from core.gpu.decode.sized import SizedModule
from core.gpu.decode.traffic import Traffic
from core.plan.config import PlannedModel
from core.specs import LinearAttention, SoftmaxAttention


def _rms(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def _fill_positions(cache: torch.Tensor, depth: int) -> None:
    """Random unit-scale keys or values for positions [0, depth) of a (B, KV, L, Dh) cache; on a CPU one
    block of positions is drawn and copied over the rest (and over every sequence), as `ffn.random_` does."""
    if depth == 0:
        return
    if cache.device.type != "cpu":
        cache[:, :, :depth].normal_()
        return
    b, n_kv, _, dh = cache.shape
    rows = min(depth, max(1, FILL_BLOCK // (n_kv * dh)))
    block = torch.randn(n_kv, rows, dh, dtype=cache.dtype)  # (KV, rows, Dh)
    for start in range(0, depth, rows):
        n = min(rows, depth - start)
        cache[:, :, start : start + n].copy_(block[None, :, :n].expand(b, -1, -1, -1))


def _ones(n: int, device: torch.device, dtype: torch.dtype) -> nn.Parameter:
    return nn.Parameter(torch.ones(n, device=device, dtype=dtype), requires_grad=False)


def supported(model: PlannedModel) -> str | None:
    """Why this decoder cannot build `model` (None: it can)."""
    spec = model.spec
    if not isinstance(spec.attention, SoftmaxAttention):
        return f"{spec.name}: only softmax attention (MHA or GQA), not {spec.attention.kind}"
    if spec.linear is not None and spec.linear.kind != "gated_delta":
        return f"{spec.name}: only Gated DeltaNet linear layers, not {spec.linear.kind}"
    if spec.moe is not None:
        return f"{spec.name}: only a dense feed-forward, not experts"
    if not spec.mlp.gated or spec.mlp.bias or spec.learned_positions:
        return f"{spec.name}: only a SwiGLU feed-forward without biases and rotary positions"
    if model.sliding_layers:
        return f"{spec.name}: no sliding-window layers"
    return None


class _Layer(nn.Module):
    """One layer's weights: two norms, the mixer's (attention or Gated DeltaNet), the SwiGLU's."""

    def __init__(self, model: PlannedModel, kind: str, device: torch.device, dtype: torch.dtype) -> None:
        super().__init__()
        spec = model.spec
        d = spec.hidden
        self.kind = kind
        self.norm_mix, self.norm_ffn = _ones(d, device, dtype), _ones(d, device, dtype)
        if kind == "attention":
            a: SoftmaxAttention = spec.attention  # type: ignore[assignment]
            q_out = a.heads * a.head_dim * (2 if a.output_gate else 1)
            kv_out = a.kv_heads * a.head_dim
            self.w_qkv = weight((d, q_out + 2 * kv_out), device, dtype)  # q | gate | k | v, one matmul
            if a.bias:
                self.b_qkv = weight((q_out + 2 * kv_out,), device, dtype)
                if a.out_bias:
                    self.b_o = weight((d,), device, dtype)
            if a.qk_norm:
                self.q_norm, self.k_norm = _ones(a.head_dim, device, dtype), _ones(a.head_dim, device, dtype)
            self.w_o = weight((a.heads * a.head_dim, d), device, dtype)
        else:
            lin: LinearAttention = spec.linear  # type: ignore[assignment]
            self.w_qkvz = weight((d, 2 * lin.key_dim + 2 * lin.value_dim), device, dtype)  # q | k | v | z
            self.w_ba = weight((d, 2 * lin.v_heads), device, dtype)  # β and the decay's input, per value head
            self.conv = weight((lin.conv_channels, lin.conv_kernel), device, dtype, std=0.5)
            self.dt_bias = _ones(lin.v_heads, device, dtype)
            self.a_log = weight((lin.v_heads,), device, dtype, std=0.5)
            self.o_norm = _ones(lin.head_v_dim, device, dtype)
            self.w_out = weight((lin.value_dim, d), device, dtype)
        self.w_gate_up = weight((d, 2 * spec.mlp.intermediate), device, dtype)
        self.w_down = weight((spec.mlp.intermediate, d), device, dtype)


class PairDecoder(SizedModule):
    """A released model's shapes (embedding → layers → head) decoding `batch` sequences at once."""

    graphable = True

    def __init__(
        self, model: PlannedModel, batch: int, device: torch.device | str, dtype: torch.dtype
    ) -> None:
        super().__init__()
        why = supported(model)
        if why is not None:
            raise ValueError(why)
        if batch < 1:
            raise ValueError(f"batch must be at least 1, got {batch}")
        spec = model.spec
        self.planned, self.spec, self.batch = model, spec, batch
        self.device, self.dtype = torch.device(device), dtype
        self.kinds = ["attention" if k == spec.attention.kind else "gated_delta" for k in spec.layer_kinds()]
        self.embed = weight((spec.vocab, spec.hidden), self.device, dtype)
        self.head = None if spec.tied_embeddings else weight((spec.hidden, spec.vocab), self.device, dtype)
        self.norm_out = _ones(spec.hidden, self.device, dtype)
        self.layers = nn.ModuleList(_Layer(model, kind, self.device, dtype) for kind in self.kinds)
        self.keys: list[torch.Tensor] = []  # per full-attention layer: (B, kv_heads, L, head_dim)
        self.values: list[torch.Tensor] = []
        self.states: list[torch.Tensor] = []  # per Gated DeltaNet layer: (B, v_heads, d_k, d_v) fp32
        self.convs: list[torch.Tensor] = []  # per Gated DeltaNet layer: (B, channels, kernel − 1)
        self.max_len = 0
        self.pos = 0

    # -- sizes (elem_bytes, total_params and weight_bytes: SizedModule) --------------------------
    def sequence_bytes(self, positions: int) -> int:
        """What one sequence holds with room for `positions` tokens (the planner's `sequence_bytes`)."""
        a, lin, e = self.spec.attention, self.spec.linear, self.elem_bytes
        n_full = self.kinds.count("attention")
        total = n_full * 2 * a.kv_heads * a.head_dim * positions * e
        if lin is not None:
            n_lin = len(self.kinds) - n_full
            total += n_lin * (lin.state_elements() * 4 + (lin.conv_kernel - 1) * lin.conv_channels * e)
        return total

    def memory_bytes(self) -> int:
        """What the allocated caches and states hold now, every sequence."""
        return sum(t.numel() * t.element_size() for t in self.persistent_memory())

    def persistent_memory(self) -> list[torch.Tensor]:
        return [*self.keys, *self.values, *self.states, *self.convs]

    def traffic(self, pos: int) -> Traffic:
        """One step at position `pos` for all sequences: every weight once (B rows of the table), each
        sequence's keys and values read to `pos` and its new row written; each state read four times and
        written twice (decay, recall, update, read-out), each convolution window read and written once."""
        a, lin, e, b = self.spec.attention, self.spec.linear, self.elem_bytes, self.batch
        table = self.embed.numel() * e
        weights = self.weight_bytes() - table + b * self.spec.hidden * e
        if self.head is None:  # a tied table is the head too: read whole
            weights += table
        n_full = self.kinds.count("attention")
        row = 2 * a.kv_heads * a.head_dim * e  # one position's key and value
        state = 0
        if lin is not None:
            per_layer = lin.state_elements() * 4 * 6 + 2 * (lin.conv_kernel - 1) * lin.conv_channels * e
            state = b * (len(self.kinds) - n_full) * per_layer
        return Traffic(weights=weights, cache_read=b * n_full * (pos + 1) * row, cache_write=b * n_full * row,
                       state=state)  # fmt: skip

    # -- memory ----------------------------------------------------------------------------------
    def allocate(self, max_len: int, resident_positions: int | None = None) -> None:
        """Room for `max_len` positions of `batch` sequences (all on the device: `resident_positions`
        is the single-sequence models' spill option, not offered here)."""
        self.release()
        a, lin, b = self.spec.attention, self.spec.linear, self.batch
        for kind in self.kinds:
            if kind == "attention":
                shape = (b, a.kv_heads, max_len, a.head_dim)
                self.keys.append(torch.empty(shape, device=self.device, dtype=self.dtype))
                self.values.append(torch.empty(shape, device=self.device, dtype=self.dtype))
            else:
                assert lin is not None
                state = (b, lin.v_heads, lin.head_k_dim, lin.head_v_dim)
                self.states.append(torch.zeros(state, device=self.device, dtype=torch.float32))
                conv = (b, lin.conv_channels, lin.conv_kernel - 1)
                self.convs.append(torch.zeros(conv, device=self.device, dtype=self.dtype))
        self.max_len = max_len

    def release(self) -> None:
        self.keys, self.values, self.states, self.convs = [], [], [], []

    def fill(self, depth: int) -> None:
        """Untimed prefill: random unit-scale keys and values to `depth`, a random state and window."""
        if self.keys and depth + 1 > self.keys[0].shape[2]:
            raise ValueError(f"depth {depth} does not fit the allocated {self.keys[0].shape[2]} positions")
        for t in (*self.keys, *self.values):
            _fill_positions(t, depth)
        lin = self.spec.linear
        for s in self.states:
            random_(s, 1.0 / lin.head_k_dim) if depth else s.zero_()
        for c in self.convs:
            random_(c, 1.0) if depth else c.zero_()
        self.pos = depth

    # -- one step --------------------------------------------------------------------------------
    @torch.inference_mode()
    def step(self, tokens: torch.Tensor) -> torch.Tensor:
        """Decode one token per sequence ((B,) long on the device) → logits (B, vocab)."""
        x = self.embed.index_select(0, tokens.reshape(self.batch))  # (B, D)
        full = linear = 0
        for layer in self.layers:
            h = _rms(x, layer.norm_mix)
            if layer.kind == "attention":
                x = x + self._attend(layer, h, full)
                full += 1
            else:
                x = x + self._delta(layer, h, linear)
                linear += 1
            gate, up = (_rms(x, layer.norm_ffn) @ layer.w_gate_up).chunk(2, dim=-1)  # (B, F) each
            x = x + (F.silu(gate) * up) @ layer.w_down
        self.pos += 1
        x = _rms(x, self.norm_out)
        return x @ (self.embed.T if self.head is None else self.head)  # (B, vocab)

    def _attend(self, layer: _Layer, h: torch.Tensor, i: int) -> torch.Tensor:  # (B, D) → (B, D)
        a: SoftmaxAttention = self.spec.attention  # type: ignore[assignment]
        b, n_h, n_kv, dh = self.batch, a.heads, a.kv_heads, a.head_dim
        qkv = h @ layer.w_qkv
        if a.bias:
            qkv = qkv + layer.b_qkv
        q_out = n_h * dh
        q = qkv[:, :q_out].view(b, n_h, dh)
        gate = qkv[:, q_out : 2 * q_out] if a.output_gate else None  # (B, H·Dh)
        k0 = 2 * q_out if a.output_gate else q_out
        k = qkv[:, k0 : k0 + n_kv * dh].view(b, n_kv, dh)
        v = qkv[:, k0 + n_kv * dh :].view(b, n_kv, dh)
        if a.qk_norm:
            q, k = _rms(q, layer.q_norm), _rms(k, layer.k_norm)
        keys, values = self.keys[i], self.values[i]  # (B, KV, L, Dh)
        keys[:, :, self.pos].copy_(k)
        values[:, :, self.pos].copy_(v)
        n = self.pos + 1
        # each key/value head's G query heads as G queries of it (query head j reads kv head j // G)
        out = F.scaled_dot_product_attention(
            q.view(b, n_kv, n_h // n_kv, dh), keys[:, :, :n], values[:, :, :n]
        )  # (B, KV, G, Dh)
        out = out.reshape(b, q_out)
        if gate is not None:
            out = out * torch.sigmoid(gate)
        out = out @ layer.w_o
        return out + layer.b_o if hasattr(layer, "b_o") else out

    def _delta(self, layer: _Layer, h: torch.Tensor, i: int) -> torch.Tensor:  # (B, D) → (B, D)
        lin: LinearAttention = self.spec.linear  # type: ignore[assignment]
        b, hk, hv, dk, dv = self.batch, lin.qk_heads, lin.v_heads, lin.head_k_dim, lin.head_v_dim
        qkvz = h @ layer.w_qkvz  # (B, 2K + 2V)
        mixed, z = qkvz[:, : lin.conv_channels], qkvz[:, lin.conv_channels :]  # (B, C), (B, V)
        beta_in, decay_in = (h @ layer.w_ba).float().chunk(2, dim=-1)  # (B, Hv) each
        conv = self.convs[i]  # (B, C, kernel − 1): the last inputs
        window = torch.cat([conv, mixed[:, :, None]], dim=-1)  # (B, C, kernel)
        conv.copy_(window[:, :, 1:])
        mixed = F.silu((window * layer.conv).sum(-1)).float()  # (B, C): causal depthwise convolution
        q = mixed[:, : hk * dk].view(b, hk, dk)
        k = mixed[:, hk * dk : 2 * hk * dk].view(b, hk, dk)
        v = mixed[:, 2 * hk * dk :].view(b, hv, dv)
        q = F.normalize(q, dim=-1).repeat_interleave(hv // hk, dim=1) * dk**-0.5  # (B, Hv, Dk)
        k = F.normalize(k, dim=-1).repeat_interleave(hv // hk, dim=1)
        beta = torch.sigmoid(beta_in)  # (B, Hv)
        alpha = torch.exp(-torch.exp(layer.a_log.float()) * F.softplus(decay_in + layer.dt_bias.float()))
        o = delta_step_(self.states[i], q, k, v, beta, alpha)  # (B, Hv, V)
        o = _rms(o, layer.o_norm.float()) * F.silu(z.view(b, hv, dv).float())  # gated RMSNorm
        return o.to(self.dtype).reshape(b, hv * dv) @ layer.w_out


def delta_step_(
    state: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    beta: torch.Tensor,
    alpha: torch.Tensor,
) -> torch.Tensor:
    """One gated-delta step for every sequence and head, `state` (B, H, K, V) updated in place:
    S ← αS; S += k (β (v − Sᵀk))ᵀ; returns o = Sᵀq (B, H, V). q, k (B, H, K) (q already scaled),
    v (B, H, V), β and α (B, H); as core.ops.gated_delta_rule.step with g = log α, the board read four
    times and written twice, no board-sized temporary."""
    b, h, dk, dv = state.shape
    s = state.view(b * h, dk, dv)  # (B·H, K, V)
    s.mul_(alpha.reshape(-1, 1, 1))  # S ← αS
    kk = k.reshape(b * h, 1, dk)
    recalled = torch.bmm(kk, s)  # (B·H, 1, V): Sᵀk
    delta = beta.reshape(-1, 1, 1) * (v.reshape(b * h, 1, dv) - recalled)  # (B·H, 1, V)
    s.baddbmm_(kk.transpose(1, 2), delta)  # S += k (β (v − Sᵀk))ᵀ
    return torch.bmm(q.reshape(b * h, 1, dk), s).view(b, h, dv)  # Sᵀq
