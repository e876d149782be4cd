"""Benchmark presets: the model shapes and run lengths for one class of machine.

`tiny` is what the tests run, `cpu` a machine without CUDA, `small` an 8–12 GB card and
`large` a 24 GB or bigger one; `preset_choices` says which of them a page offers.
Every preset repeats its timing three times and gives its MoE two shared experts.

The batch sweep's released pair (Qwen3-8B's and Qwen3.5-9B's shapes, core.gpu.decode.pair_shapes) is
built whole on `large`; the others cut it down where their machine cannot hold it — fewer layers (a
multiple of four: the hybrid's 3:1 pattern) and a shorter vocabulary, each layer's shapes as released;
`tiny` also divides every width by 32, for the tests and the validator's dry run.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.i18n import N_
from core.units import format_bytes

MIB = 1024**2
GIB = 1024**3
WHOLE_CARD = N_("all its memory")  # the budget choice that pretends nothing (a page shows it translated)


@dataclass(frozen=True, kw_only=True)
class Preset:
    """Model shapes and benchmark lengths for one class of machine."""

    name: str
    description: str
    d_model: int
    n_layers: int
    n_heads: int
    vocab: int
    ffn_hidden: int  # dense feed-forward width in the context benchmark
    depths: tuple[int, ...]  # context depths d for `tg @ d`
    n_steps: int  # timed decode steps per repetition
    warmup: int = 2  # untimed decode steps at each depth
    repeats: int = 3
    moe_ffn_hidden: int  # total feed-forward width (dense) = n_experts × expert_hidden (MoE)
    moe_experts: int  # total experts, shared included
    moe_shared: int = 2
    moe_top_k: int  # routed experts per token
    moe_depth: int  # context depth during the dense-vs-MoE test
    moe_gated: bool = False  # SwiGLU experts (three matrices, as released MoEs) instead of GELU pairs
    energy_seconds: float = 0.0  # minimum timed window per model for the energy reading
    idle_seconds: float = 0.0  # idle-power baseline window
    rest_seconds: float = 0.0  # quiet time before the idle window, so the card settles after work
    depth_seconds: float = 30.0  # time cap on timing one depth (eager and graphed together)
    use_graphs: bool = True  # on CUDA, also replay each repetition as one CUDA graph
    # kernel ways not to try, 'moe:triton' (one part's) or bare (core.gpu.timing.ways); PyTorch's always runs
    skip_ways: tuple[str, ...] = ()
    budget_choices: tuple[int, ...]  # "pretend my card has N bytes" options
    copy_bytes: int  # buffer size for the copy-bandwidth test
    # the batch sweep: "released" (Qwen3-8B vs Qwen3.5-9B shapes) or "synthetic" (this preset's full
    # attention vs a pure fixed state; core.gpu.suites.batch_bench), and how far the released pair is cut
    batch_pair: str = "released"
    pair_layers: int | None = None  # None: as released (36 and 32); else a multiple of 4
    pair_vocab: int | None = None  # None: as released
    pair_width_divisor: int = 1

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def expert_hidden(self) -> int:
        return self.moe_ffn_hidden // self.moe_experts


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            name="tiny",
            description=N_("Seconds on a laptop CPU; what the tests run."),
            d_model=64,
            n_layers=2,
            n_heads=4,
            vocab=256,
            ffn_hidden=256,
            depths=(0, 256, 512, 1024, 2048),
            n_steps=16,
            moe_ffn_hidden=1024,
            moe_experts=32,
            moe_top_k=2,
            moe_depth=64,
            budget_choices=(1 * MIB, 3 * MIB // 2),
            copy_bytes=16 * MIB,
            pair_layers=4,
            pair_vocab=256,
            pair_width_divisor=32,
        ),
        Preset(
            name="cpu",
            description=N_("For a CPU run in well under a minute."),
            d_model=256,
            n_layers=4,
            n_heads=4,
            vocab=256,
            ffn_hidden=1024,
            depths=(0, 2048, 4096, 8192, 16384),
            n_steps=8,
            warmup=1,
            moe_ffn_hidden=4096,
            moe_experts=64,
            moe_top_k=2,
            moe_depth=256,
            budget_choices=(48 * MIB, 96 * MIB),
            copy_bytes=64 * MIB,
            pair_layers=4,  # fp32: 3.6 GB and 4.0 GB of weights
            pair_vocab=16384,
        ),
        Preset(
            name="small",
            description=N_("For 8–12 GB cards; its KV cache per token is Llama-3-8B's."),
            d_model=2048,
            n_layers=16,
            n_heads=16,
            vocab=32000,
            ffn_hidden=8192,
            depths=(0, 8192, 16384, 32768, 49152, 65536),
            n_steps=32,
            moe_ffn_hidden=16384,
            moe_experts=128,
            moe_top_k=4,
            moe_depth=1024,
            energy_seconds=6.0,
            idle_seconds=4.0,
            rest_seconds=5.0,
            budget_choices=(6 * GIB, 8 * GIB, 12 * GIB),
            copy_bytes=1 * GIB,
            pair_layers=8,  # bf16: 3.6 GB and 4.0 GB of weights
            pair_vocab=32000,
        ),
        Preset(
            name="large",
            description=N_("For 24 GB and bigger cards."),
            d_model=4096,
            n_layers=16,
            n_heads=32,
            vocab=32000,
            ffn_hidden=16384,
            depths=(0, 16384, 32768, 65536, 98304, 131072),
            n_steps=16,
            moe_ffn_hidden=32768,
            moe_experts=256,
            moe_top_k=6,
            moe_depth=1024,
            energy_seconds=8.0,
            idle_seconds=4.0,
            rest_seconds=5.0,
            budget_choices=(12 * GIB, 16 * GIB, 24 * GIB),
            copy_bytes=2 * GIB,
        ),
    )
}


def preset_for_vram(total_bytes: int | None) -> str:
    """'large' from 20 GiB of VRAM, else 'small'."""
    return "large" if total_bytes is not None and total_bytes >= 20 * GIB else "small"


def preset_choices(on_gpu: bool, vram_total_bytes: int | None) -> tuple[list[str], str]:
    """The presets a page offers, and the one it starts on: GPU sizes by VRAM, else the CPU ones."""
    if on_gpu:
        return ["small", "large", "tiny"], preset_for_vram(vram_total_bytes)
    return ["cpu", "tiny"], "cpu"


def budget_options(preset: Preset) -> dict[str, int | None]:
    """'Pretend my card has …' choices, label → bytes, smallest first; the whole card (None) last."""
    return {format_bytes(b): b for b in preset.budget_choices} | {WHOLE_CARD: None}
