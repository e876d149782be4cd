"""The feed-forward halves of the decode models: dense, or a mixture of experts of equal size.

Either is a GELU pair of matrices (x → W2 gelu(W1 x)) or, with `gated`, a SwiGLU as released MoEs
have (x → W2 (silu(x Wg) ⊙ x Wu), gate and up side by side in one W1): three matrices an expert, so an
expert of DeepSeek-V3's shapes (7,168 × 2,048) holds 84 MiB in bf16 and one of Qwen3.5-MoE's
(2,048 × 512) 6 MiB (core.gpu.suites.moe_sizing).

- `DenseFFN`: every weight is read for every token.
- `MoEFFN`: `n_shared` always-on experts plus `top_k` of the routed ones, chosen per token by
  a router (Kimi K3 wakes 2 shared + 16 of 896 experts). The chosen experts are gathered by
  index on the device, so routing never waits for the host; the gather copies the chosen
  weights once more (written, then read again), which a fused MoE kernel avoids — that copy
  is counted in `traffic()` as scratch, so the roofline knows about it.
  `way="grouped"` is that fused path: PyTorch's grouped GEMM (`torch._grouped_mm`, the kernel
  torchtitan's MoE uses; CUTLASS on Hopper) multiplies each chosen expert's weights in place, one
  group per expert, with the group boundaries computed on the device — no copy, no host sync.
  On an H200 the gather alone took most of a batch-1 MoE step (docs/gpu-runs/2026-11-30-*).
  `way="triton"` reads them in place too, with two Triton kernels written for one token
  (core.gpu.decode.moe_triton), as engines' fused MoE kernels do; it runs on any CUDA card Triton
  supports, GELU experts only.
  `MoEFFN.loop` is the reference the others are checked against: one expert after another, each by
  its id read on the host (a sync per token, so never graphed), as a plain per-expert loop runs.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from core.gpu.decode import moe_triton, triton_support
from core.gpu.decode.traffic import Traffic
from core.i18n import N_

FILL_BLOCK = 1 << 20  # elements drawn at random once, then repeated over a large CPU tensor
TILE_ABOVE = 1 << 24  # CPU tensors of more elements than this are filled by repeating a block


def random_(t: torch.Tensor, std: float) -> torch.Tensor:
    """N(0, std²) values in place. A CPU draws them at ~0.1 GB/s — half a minute for a few GB of experts —
    so above TILE_ABOVE elements one block is drawn and copied over the rest at memory speed: a decode
    step's time depends on how many bytes it reads, not on their values."""
    flat = t.view(-1)
    if t.device.type != "cpu" or flat.numel() <= TILE_ABOVE:
        return t.normal_(0.0, std)
    flat[:FILL_BLOCK].normal_(0.0, std)
    for start in range(FILL_BLOCK, flat.numel(), FILL_BLOCK):
        n = min(FILL_BLOCK, flat.numel() - start)
        flat[start : start + n].copy_(flat[:n])
    return t


def weight(
    shape: tuple[int, ...], device: torch.device, dtype: torch.dtype, std: float = 0.02
) -> nn.Parameter:
    """A random N(0, std²) weight that never needs a gradient (on 'meta', shapes only)."""
    w = torch.empty(shape, device=device, dtype=dtype)
    return nn.Parameter(w if w.device.type == "meta" else random_(w, std), requires_grad=False)


def _bytes(*tensors: torch.Tensor) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def activate(h: torch.Tensor, gated: bool) -> torch.Tensor:
    """GELU, or SwiGLU on a gate | up pair: (…, 2F) → (…, F)."""
    if not gated:
        return F.gelu(h)
    gate, up = h.chunk(2, dim=-1)
    return F.silu(gate) * up


class DenseFFN(nn.Module):
    """x → W2 act(W1 x); every weight is read for every token (`gated`: W1 holds gate and up)."""

    def __init__(
        self, d: int, hidden: int, device: torch.device, dtype: torch.dtype, gated: bool = False
    ) -> None:
        super().__init__()
        self.gated = gated
        self.w1 = weight((d, (2 if gated else 1) * hidden), device, dtype)
        self.w2 = weight((hidden, d), device, dtype)

    def active_params(self) -> int:
        return self.w1.numel() + self.w2.numel()

    def traffic(self) -> Traffic:
        return Traffic(weights=_bytes(self.w1, self.w2))

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (1, D) → (1, D)
        return activate(h @ self.w1, self.gated) @ self.w2


class MoEFFN(nn.Module):
    """`n_shared` always-on experts + `top_k` of the routed ones, chosen per token by a router."""

    def __init__(
        self,
        d: int,
        n_experts: int,
        n_shared: int,
        top_k: int,
        expert_hidden: int,
        device: torch.device,
        dtype: torch.dtype,
        way: str = "gather",
        gated: bool = False,
    ) -> None:
        super().__init__()
        n_routed = n_experts - n_shared
        if n_routed < top_k or top_k < 1:
            raise ValueError("need at least top_k routed experts")
        self.top_k, self.gated, self.expert_hidden = top_k, gated, expert_hidden
        up = (2 if gated else 1) * expert_hidden  # gate | up side by side when gated
        self.router = weight((d, n_routed), device, dtype)
        self.shared_w1 = weight((d, n_shared * up), device, dtype)
        self.shared_w2 = weight((n_shared * expert_hidden, d), device, dtype)
        self.w1 = weight((n_routed, d, up), device, dtype)  # (E, D, Fe) or (E, D, 2Fe)
        self.w2 = weight((n_routed, expert_hidden, d), device, dtype)  # (E, Fe, D)
        self._gather_out: tuple[torch.Tensor, torch.Tensor] | None = None  # the CPU's gathered experts
        self.use(way)

    def runnable_ways(self) -> list[str]:
        """The ways of reading the chosen experts that run on this layer's device, dtype and widths."""
        return [i for i in MOE_WAYS if self._runs_here(i)]

    def _runs_here(self, way: str) -> bool:
        _, d, fe = self.w1.shape
        return way_available(way, self.w1.device, self.w1.dtype, d, fe, self.gated)

    def use(self, way: str) -> None:
        """Read the chosen experts with `way` from now on (the weights stay as they are)."""
        if way not in MOE_WAYS:
            raise ValueError(f"unknown MoE implementation {way!r}; choose one of {', '.join(MOE_WAYS)}")
        if not self._runs_here(way):
            raise ValueError(
                f"the {way!r} MoE cannot run {self.w1.dtype} on {self.w1.device} at these widths"
            )
        self.way = way

    def active_params(self) -> int:
        per_expert = self.w1[0].numel() + self.w2[0].numel()
        return self.router.numel() + self.shared_w1.numel() + self.shared_w2.numel() + self.top_k * per_expert

    def traffic(self) -> Traffic:
        """Router, shared experts and the top_k routed ones read; with the gather, the gathered
        copy is written and read again (the grouped GEMM and the Triton kernels read the experts
        where they are; the Triton path adds into and reads back a small fp32 buffer)."""
        routed = self.top_k * _bytes(self.w1[0], self.w2[0])
        scratch = {
            "gather": 2 * routed,
            "grouped": 0,
            "triton": moe_triton.scratch_bytes(self.w1.shape[1], self.w1.shape[2], self.top_k),
        }[self.way]
        return Traffic(weights=_bytes(self.router, self.shared_w1, self.shared_w2) + routed, scratch=scratch)

    def forward(self, h: torch.Tensor) -> torch.Tensor:  # (1, D) → (1, D)
        out = activate(h @ self.shared_w1, self.gated) @ self.shared_w2
        logits = (h @ self.router)[0]  # (E,)
        top_v, top_i = torch.topk(logits, self.top_k)  # (k,) — stays on the device
        if self.way == "triton":  # the gates' softmax inside the kernel: three launches fewer
            return moe_triton.fused_experts(h, top_i, top_v, self.w1, self.w2, base=out)
        gate = torch.softmax(top_v.float(), -1).to(h.dtype)  # (k,)
        if self.way == "grouped":
            return out + self._grouped(h, top_i, gate)
        w1, w2 = self._gathered(top_i)  # (k, D, Fe | 2Fe), (k, Fe, D)
        # batched matrix × vector on the gathered, contiguous experts: no transposed copies
        # (einsum did one; measured on an H200: 1.55 → 1.31 ms per step, docs/gpu-runs/2026-11-30-*)
        hidden = (
            activate(torch.bmm(h.expand(self.top_k, 1, -1), w1), self.gated) * gate[:, None, None]
        )  # (k, 1, Fe)
        return out + torch.bmm(hidden, w2).sum(0)  # (1, D)

    def _gathered(self, top_i: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The chosen experts copied out by id. On a CPU into two blocks kept for the next token: a fresh
        block of this size is mapped in page by page at every step there, and the page faults took ten
        times the copy (a GPU's caching allocator reuses its blocks, and a CUDA graph keeps them)."""
        if self.w1.device.type != "cpu":
            return self.w1.index_select(0, top_i), self.w2.index_select(0, top_i)
        if self._gather_out is None:
            w1, w2 = self.w1, self.w2
            with torch.inference_mode(False):  # plain tensors: written into in and out of inference mode
                self._gather_out = (torch.empty((self.top_k, *w1.shape[1:]), dtype=w1.dtype),
                                    torch.empty((self.top_k, *w2.shape[1:]), dtype=w2.dtype))  # fmt: skip
        out1, out2 = self._gather_out
        return torch.index_select(self.w1, 0, top_i, out=out1), torch.index_select(
            self.w2, 0, top_i, out=out2
        )

    def loop(self, h: torch.Tensor) -> torch.Tensor:  # (1, D) → (1, D)
        """The same layer one expert at a time, each read where it lies by its id on the host: the
        per-expert loop the batched ways (`forward`) are checked against (a host sync; no CUDA graph)."""
        out = activate(h @ self.shared_w1, self.gated) @ self.shared_w2
        top_v, top_i = torch.topk((h @ self.router)[0], self.top_k)
        gate = torch.softmax(top_v.float(), -1).to(h.dtype)  # (k,)
        for j, e in enumerate(top_i.tolist()):
            out = out + gate[j] * (activate(h @ self.w1[e], self.gated) @ self.w2[e])  # (1, D)
        return out

    def _grouped(self, h: torch.Tensor, top_i: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
        """The chosen experts through two grouped GEMMs over all experts' weights in place: the
        token is repeated once per chosen expert, rows sorted by expert, and each expert's group
        (empty for the experts not chosen) multiplies only its own rows. (1, D) → (1, D)."""
        ids, order = torch.sort(top_i)  # (k,): groups must come in expert order
        offs = group_offsets(ids, self.w1.shape[0])  # (E,) int32, on the device
        x = h.expand(self.top_k, -1).contiguous()  # (k, D)
        hidden = (
            activate(torch._grouped_mm(x, self.w1, offs=offs), self.gated) * gate[order][:, None]
        )  # (k, Fe)
        return torch._grouped_mm(hidden, self.w2, offs=offs).sum(0, keepdim=True)  # (1, D)


# The ways an MoE layer can read its chosen experts (a "way" everywhere: the CLI's --skip-ways, the
# JSON's `way` of a series; a MoE row's JSON keeps its first name, `moe_impl`).
MOE_WAYS = ("gather", "grouped", "triton")
# The ways in words, for the page and the CLI (English here; the page shows `_(words)`).
MOE_WAY_WORDS = {
    "gather": N_("gathered copy (index_select + bmm)"),
    "grouped": N_("grouped GEMM (torch._grouped_mm)"),
    "triton": N_("fused Triton kernels"),
}
# The decode models' MoE feed-forwards by name (core.gpu.decode.models.build), each with the way it reads its experts.
MOE_FFN_WAYS = {"moe": "gather", "moe_grouped": "grouped", "moe_triton": "triton"}


def way_available(
    way: str, device: torch.device, dtype: torch.dtype, d: int, expert_hidden: int, gated: bool = False
) -> bool:
    """Whether the MoE way `way` (how the chosen experts are read) runs on this device, dtype and widths
    (`gated`: SwiGLU experts, which the Triton kernels do not compute)."""
    if way == "grouped":
        return grouped_mm_available(device, dtype, d, expert_hidden)
    if way == "triton":
        return not gated and triton_support.available(device)
    return True


def group_offsets(sorted_ids: torch.Tensor, n_experts: int) -> torch.Tensor:
    """Where each expert's rows end among rows sorted by expert: offs[e] = #ids ≤ e, (E,) int32.

    The same as `cumsum(bincount(ids, minlength=E))`, but bincount sizes its output from the
    largest id, which a GPU must send to the host (a sync; no CUDA graph). A (E, k) comparison
    stays on the device."""
    experts = torch.arange(n_experts, device=sorted_ids.device)  # (E,)
    return (sorted_ids[None, :] <= experts[:, None]).sum(1).to(torch.int32)  # (E,)


GROUPED_MM_CARDS = ((9, 0), (10, 0))  # compute capabilities with torch._grouped_mm's CUTLASS kernel


def grouped_mm_available(device: torch.device, dtype: torch.dtype, d: int, expert_hidden: int) -> bool:
    """Whether `torch._grouped_mm` runs here: PyTorch has it; on CUDA only in bf16 on Hopper (sm_90)
    or datacenter Blackwell (sm_100), where it has a CUTLASS kernel — elsewhere it falls back to a
    loop that reads the group ends on the host, which no CUDA graph can hold; rows 16-byte aligned
    (widths a multiple of 16 bytes)."""
    if not hasattr(torch, "_grouped_mm"):
        return False
    row_bytes = torch.finfo(dtype).bits // 8
    if (d * row_bytes) % 16 or (expert_hidden * row_bytes) % 16:
        return False
    if device.type == "cuda":
        return dtype == torch.bfloat16 and torch.cuda.get_device_capability(device) in GROUPED_MM_CARDS
    return device.type in ("cpu", "meta")  # meta: shapes only, nothing runs
