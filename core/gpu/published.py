"""Published measurements to set beside the reader's own, each with its source.

Collected in reference/gpu-measurement.md §3.3–3.6 (numbers copied from the sources;
a "derived" note marks our own arithmetic on them). Different tools, models and
quantisations: compare shapes (how much speed a long context costs, how much energy
an MoE saves), not absolute tokens/s.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Published:
    topic: str  # "context", "spill", "power", "dense vs MoE"
    gpu: str
    model: str
    setting: str
    result: str
    source: str  # URL or owner/repo : path


_LLAMA_PR = "Abai/llama.cpp : PR-BODY-fattn-dequant-cap.md (llama-bench, -fa 1, Q4_0 weights, q8_0 KV)"

PUBLISHED: tuple[Published, ...] = (
    Published(
        "context",
        "RTX 3090",
        "Llama 8B (full attention, GQA)",
        "tg128 @ depth 0 / 16K / 32K / 64K",
        "154.62 / 101.74 / 75.22 / 49.21 t/s (−68 % at 64K)",
        _LLAMA_PR,
    ),
    Published(
        "context",
        "RTX 3090",
        "Qwen3.5/3.6-27B (linear + full hybrid)",
        "tg128 @ depth 0 / 16K / 32K / 64K",
        "46.59 / 42.53 / 38.97 / 33.23 t/s (−29 % at 64K)",
        _LLAMA_PR,
    ),
    Published(
        "context",
        "RTX 3090",
        "DeepSeek-V2 16B (MLA, MoE)",
        "tg128 @ depth 0 / 16K / 32K / 64K",
        "266.31 / 179.63 / 139.98 / 98.54 t/s",
        _LLAMA_PR,
    ),
    Published(
        "context",
        "RTX 5070 Laptop 8GB",
        "Llama 8B",
        "tg128 @ depth 0 / 16K / 32K",
        "76.98 / 51.42 / 38.80 t/s",
        _LLAMA_PR,
    ),
    Published(
        "context",
        "RTX 4090",
        "Llama-3-8B Q4_K_M",
        "tg512 → tg8192 (average over N tokens)",
        "130.58 → 110.66 t/s",
        "XiongjieDai/GPU-Benchmarks-on-LLM-Inference : README.md",
    ),
    Published(
        "context",
        "(hybrid KDA:MLA 3:1)",
        "Kimi Linear 48B-A3B",
        "1M context",
        "up to 75 % less KV cache, up to 6× decoding throughput",
        "https://github.com/MoonshotAI/Kimi-Linear",
    ),
    Published(
        "spill",
        "RTX 3090",
        "qwen3.6:27b Q4 (Ollama)",
        "num_ctx 8K / 32K / 128K / 256K",
        "35.9 / 22.8 / 6.9 / 4.2 t/s (100 % → 55 % on GPU)",
        "https://bric.pe.kr/blog/ollama-num-ctx-kv-cache-trap-tokens-per-second",
    ),
    Published(
        "spill",
        "RTX 3060 12GB",
        "DeepSeek-R1 14B (Ollama)",
        "num_ctx pushed past VRAM",
        "4.8 t/s instead of about 35",
        "https://insiderllm.com/guides/num-ctx-vram-overflow-slow-inference/",
    ),
    Published(
        "spill",
        "(not stated)",
        "Llama 7B Q4_0",
        "-ngl 35 / 34 / 30 / 10 layers on GPU",
        "131.66 / 71.76 / 40.04 / 13.45 t/s",
        "ggml-org/llama.cpp : tools/llama-bench/README.md",
    ),
    Published(
        "spill",
        "RTX 4080 Laptop 12GB",
        "HF transformers, 512 → 32K",
        "past VRAM (CUDA unified memory)",
        "25–105× latency cliffs",
        "https://chimeraforge.vercel.app/reports/technical-report-127",
    ),
    Published(
        "power",
        "RTX 5060 Ti 16GB",
        "Qwen2.5-Coder-7B Q4 (llama.cpp)",
        "180 W / 150 W power cap",
        "81.2 t/s at 172.7 W / 80.4 t/s at 147.2 W (≈2.13 J/token at 180 W, derived)",
        "https://inventivehq.com/blog/gpu-power-limit-tokens-per-watt",
    ),
    Published(
        "power",
        "6× RTX 3090",
        "MiniMax M2.5 Q2, decode @4K",
        "350 / 250 / 150 / 100 W cap",
        "72.6 / 70.7 / 62.6 / 12.1 t/s",
        "https://llmgarage.ai/power-limit-tokens-per-second-benchmark",
    ),
    Published(
        "power",
        "H100",
        "Mistral 7B BF16 (vLLM)",
        "batch 1 / batch 128",
        "732 / 13.8 µWh per token (≈2.6 J/token at batch 1, derived)",
        "https://reddit.fufik.eu/r/FunMachineLearning/comments/1ttmzvp/",
    ),
    Published(
        "power",
        "H100",
        "Llama 3.1 8B (vLLM)",
        "batch 64",
        "0.20 → 0.12 J/token across benchmark versions",
        "https://ml.energy/blog/measurement/energy/llm-inference-energy-a-longitudinal-analysis",
    ),
    Published(
        "dense vs MoE",
        "1× H100",
        "GPT-OSS-20B (MoE) vs Qwen3-32B (dense)",
        "bf16, 2048 context, batch 1",
        "+31.8 % decode throughput, −25.8 % energy per 1,000 tokens",
        "https://arxiv.org/abs/2508.16700",
    ),
    Published(
        "dense vs MoE",
        "2× RTX 3090",
        "Qwen3-32B Q5 vs Nemotron-3-Nano-30B-A3B Q6",
        "llama.cpp, fully on GPU",
        "9.06 vs 64.82 t/s",
        "https://llmgarage.ai/moe-vs-dense-showdown.html",
    ),
    Published(
        "dense vs MoE",
        "RTX 5080 16GB",
        "dense 8–14B vs MoE (Ollama)",
        "steady-state board power",
        "dense 217–301 W vs MoE 47–73 W — but the MoE did not fit and waited on CPU experts",
        "https://ai-hardware-zukan.com/?p=2436",
    ),
)


def published_table(topic: str | None = None) -> tuple[list[dict[str, str]], list[str]]:
    """Rows narrow enough for a phone — what was measured, setting, result, and a numbered source —
    and the sources they number (long paths and URLs do not wrap, so they go below the table)."""
    rows, sources = [], []
    for p in PUBLISHED:
        if topic is not None and p.topic != topic:
            continue
        if p.source not in sources:
            sources.append(p.source)
        rows.append(
            {
                "measured": f"{p.model} {p.gpu if p.gpu.startswith('(') else 'on ' + p.gpu} ({p.topic})",
                "setting": p.setting,
                "result": p.result,
                "source": f"[{sources.index(p.source) + 1}]",
            }
        )
    return rows, sources
