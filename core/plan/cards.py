"""Accelerators the planner knows: memory, memory bandwidth and dense 16-bit tensor peak, with sources.

Memory sizes are the marketed number read as GiB, the unit the driver reports in; the driver shows
a little less (a "24 GB" RTX 4090 24,564 MiB, an "80 GB" H100 81,559 MiB, a "141 GB" H200 143,771 MiB
as NVML read it in docs/gpu-runs/2026-11-30-nvidia-h200: 0.05–0.5 % under), and an L40S with ECC on
46,068 MiB of its "48 GB" — the usable share absorbs such differences. Peaks are *dense* BF16/FP16 tensor throughput with FP32 accumulate;
vendor pages often print the 2:4-sparsity figure, which is twice this. Where a product page gives
only another precision, the figure is derived by the stated halving and marked "derived".
Apple does not publish a tensor peak, so prefill is not estimated for Apple machines.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.i18n import N_

GiB = 1024**3
GB = 1e9
TFLOPS = 1e12


@dataclass(frozen=True)
class PlanCard:
    """One accelerator as the planner sees it."""

    key: str
    name: str
    memory_bytes: float
    bandwidth_bytes_per_s: float
    peak_flops: float | None  # dense BF16/FP16 tensor, FP32 accumulate; None where unpublished
    source: str
    unified: bool = False  # Apple: CPU and GPU share one memory

    @property
    def kind(self) -> str:
        return "unified memory" if self.unified else "GPU"


# Sources are marked with N_ (module constants) and translated where they are shown: `_(card.source)`.

CARDS: dict[str, PlanCard] = {
    c.key: c
    for c in (
        PlanCard(
            "rtx3060_12gb",
            "RTX 3060 12GB",
            12 * GiB,
            360 * GB,
            25.4 * TFLOPS,
            N_(
                "NVIDIA Ampere GA102 whitepaper (GeForce RTX 30 table): 360 GB/s; peak derived from the RTX 3090's 71 TFLOPS by tensor cores × clock"
            ),
        ),
        PlanCard(
            "rtx3090",
            "RTX 3090 24GB",
            24 * GiB,
            936 * GB,
            71 * TFLOPS,
            N_(
                "NVIDIA Ampere GA102 whitepaper (GeForce RTX 30 table): 936 GB/s, FP16 tensor (FP32 acc.) 71 TFLOPS"
            ),
        ),
        PlanCard(
            "rtx4060ti_16gb",
            "RTX 4060 Ti 16GB",
            16 * GiB,
            288 * GB,
            44.1 * TFLOPS,
            N_("NVIDIA RTX 4060 Ti product page: 288 GB/s, 353 AI TOPS (FP8 sparse) → FP16 dense derived"),
        ),
        PlanCard(
            "rtx4090",
            "RTX 4090 24GB",
            24 * GiB,
            1008 * GB,
            165.2 * TFLOPS,
            N_(
                "NVIDIA Ada Lovelace architecture whitepaper (GeForce RTX 40 table): 1,008 GB/s, FP16 tensor (FP32 acc.) 165.2 TFLOPS"
            ),
        ),
        PlanCard(
            "rtx5090",
            "RTX 5090 32GB",
            32 * GiB,
            1792 * GB,
            209.5 * TFLOPS,
            N_(
                "NVIDIA RTX Blackwell GPU architecture whitepaper: 1,792 GB/s, FP16 tensor (FP32 acc.) 209.5 TFLOPS"
            ),
        ),
        PlanCard(
            "l40s",
            "L40S 48GB",
            48 * GiB,
            864 * GB,
            362.05 * TFLOPS,
            N_("NVIDIA L40S datasheet: 864 GB/s, BF16 tensor 362.05 TFLOPS (733 with sparsity)"),
        ),
        PlanCard(
            "a100_80gb",
            "A100 SXM 80GB",
            80 * GiB,
            2039 * GB,
            312 * TFLOPS,
            N_("NVIDIA A100 datasheet: 2,039 GB/s, BF16 tensor 312 TFLOPS (624 with sparsity)"),
        ),
        PlanCard(
            "h100_pcie",
            "H100 PCIe 80GB",
            80 * GiB,
            2000 * GB,
            756 * TFLOPS,
            N_("NVIDIA H100 datasheet (PCIe): 2.0 TB/s, BF16 tensor 1,513 TFLOPS with sparsity → 756 dense"),
        ),
        PlanCard(
            "h100_80gb",
            "H100 SXM 80GB",
            80 * GiB,
            3350 * GB,
            989 * TFLOPS,
            N_("NVIDIA H100 datasheet (SXM): 3.35 TB/s, BF16 tensor 1,979 TFLOPS with sparsity → 989 dense"),
        ),
        PlanCard(
            "h200",
            "H200 SXM 141GB",
            141 * GiB,
            4800 * GB,
            989 * TFLOPS,
            N_(
                "NVIDIA H200 datasheet: 141 GB HBM3e, 4.8 TB/s, BF16 tensor 1,979 TFLOPS with sparsity → 989 dense"
            ),
        ),
        PlanCard(
            "b200",
            "B200 180GB",
            180 * GiB,
            7700 * GB,
            2250 * TFLOPS,
            N_(
                "NVIDIA HGX B200 page: 1.44 TB and 62 TB/s per 8 GPUs; BF16 4.5 PFLOPS with sparsity → 2.25 dense"
            ),
        ),
        PlanCard(
            "mi300x",
            "AMD Instinct MI300X 192GB",
            192 * GiB,
            5300 * GB,
            1307.4 * TFLOPS,
            N_("AMD MI300X datasheet: 192 GB HBM3, 5.3 TB/s, BF16 dense 1,307.4 TFLOPS"),
        ),
        PlanCard(
            "m4_max_128gb",
            "Apple M4 Max 128GB",
            128 * GiB,
            546 * GB,
            None,
            N_("Apple M4 Max newsroom (Oct 2024): up to 128 GB unified memory, 546 GB/s"),
            unified=True,
        ),
        PlanCard(
            "m3_ultra_512gb",
            "Apple M3 Ultra 512GB",
            512 * GiB,
            819 * GB,
            None,
            N_("Apple Mac Studio newsroom (Mar 2025): M3 Ultra up to 512 GB unified memory, 819 GB/s"),
            unified=True,
        ),
    )
}


def card(key: str) -> PlanCard:
    try:
        return CARDS[key]
    except KeyError:
        raise ValueError(f"unknown card {key!r}; known: {', '.join(CARDS)}") from None
