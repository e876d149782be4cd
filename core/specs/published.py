"""Published measurements to set beside the reader's own, each with its source and what kind it is.

Collected in docs/sources.md §7.3–7.6 (numbers copied from the sources; a "derived"
note marks our own arithmetic on them), re-checked against the sources for issue 15:

- a **primary** source is a paper, an official repository or its docs, or a maintainer's own
  benchmark (the llama-bench README, the Kimi Linear repository, the ML.ENERGY leaderboard's post,
  an arXiv paper);
- anything else — a personal blog, a vendor's blog, a personal benchmark repository, pull-request
  text in a personal fork — is kept only as a labelled **community report**.

Every row says what was measured (`measured`): which number, by which tool, and what sat where.
llama.cpp's `-ngl` moves *layers* (their weights, computed by the CPU) off the card at depth 0 — not
the cache — and Ollama's num_ctx rows grow the cache until Ollama moves whole layers to the CPU.
Different tools, models and quantisations: compare shapes (how much speed a long context costs,
how much energy an MoE saves), not absolute tokens/s.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.i18n import N_, _

PRIMARY = N_("primary")
COMMUNITY = N_("community report")
KINDS = (PRIMARY, COMMUNITY)


@dataclass(frozen=True)
class Published:
    topic: str  # "context", "spill", "power", "dense vs MoE"
    gpu: str  # the card, or "(card not stated)"
    model: str
    measured: str  # what number was measured, with which tool, and where weights and cache sat
    setting: str  # the values of what was varied, in the order of `result`
    result: str  # the numbers, with their units
    source: str  # URL, or owner/repo : path
    source_kind: str  # PRIMARY or COMMUNITY
    source_what: str  # what the source is, in a few words ("paper", "personal blog", …)


# pull-request text kept in a contributor's own fork of llama.cpp, not a maintainer's thread
_LLAMA_PR = "https://github.com/Abai/llama.cpp/blob/28d2ed2d9dd0d4d67976c3e9e952107d04ba8880/PR-BODY-fattn-dequant-cap.md"
_LLAMA_PR_WHAT = N_("pull-request text in a contributor's llama.cpp fork")
_LLAMA_BENCH = "https://github.com/ggml-org/llama.cpp/blob/master/tools/llama-bench/README.md"
_LLAMA_BENCH_WHAT = N_("official llama.cpp docs (llama-bench README)")
_TG_DEPTH = (
    N_("decode speed, llama-bench tg128 after filling the context to depth d; Q4_0 weights, q8_0 KV cache, "
    "all on the card")
)


def _llama_pr(gpu: str, model: str, depths: str, result: str) -> Published:
    """A row of the llama.cpp fork's pull-request text: decode speed after filling the context to depth d."""
    return Published("context", gpu, model, _TG_DEPTH, depths, result, _LLAMA_PR, COMMUNITY, _LLAMA_PR_WHAT)


PUBLISHED: tuple[Published, ...] = (
    Published(
        "context",
        N_("(card not stated)"),
        "Qwen2 7B Q4_K_M",
        N_("decode speed, llama-bench tg128 at depth d; all on the card"),
        N_("depth 0 / 512"),
        N_("120.60 / 116.71 tokens/s"),
        _LLAMA_BENCH,
        PRIMARY,
        _LLAMA_BENCH_WHAT,
    ),
    _llama_pr("RTX 3090", N_("Llama 8B (full attention, GQA)"), N_("depth 0 / 16K / 32K / 64K"),
              N_("154.62 / 101.74 / 75.22 / 49.21 tokens/s (−68 % at 64K)")),
    _llama_pr("RTX 3090", N_("Qwen3.5/3.6-27B (linear + full hybrid)"), N_("depth 0 / 16K / 32K / 64K"),
              N_("46.59 / 42.53 / 38.97 / 33.23 tokens/s (−29 % at 64K)")),
    _llama_pr("RTX 3090", "DeepSeek-V2 16B (MLA, MoE)", N_("depth 0 / 16K / 32K / 64K"),
              N_("266.31 / 179.63 / 139.98 / 98.54 tokens/s")),
    _llama_pr("RTX 5070 Laptop 8GB", "Llama 8B", N_("depth 0 / 16K / 32K"),
              N_("76.98 / 51.42 / 38.80 tokens/s")),
    Published(
        "context",
        "RTX 4090",
        "Llama-3-8B Q4_K_M",
        N_("decode speed, llama-bench tgN: the average over N tokens as the context grows from 0 to N; all on "
        "the card"),
        N_("N = 512 → 8192 generated tokens"),
        N_("130.58 → 110.66 tokens/s (average over the N tokens)"),
        "https://github.com/XiongjieDai/GPU-Benchmarks-on-LLM-Inference",
        COMMUNITY,
        N_("personal benchmark repository"),
    ),
    Published(
        "context",
        N_("(card not stated)"),
        N_("Kimi Linear 48B-A3B (KDA:MLA 3:1 hybrid)"),
        N_("KV cache size and decoding time per token, against the same model with MLA in every layer"),
        N_("1M-token context"),
        N_("up to 75 % less KV cache; up to 6× the decoding throughput (6.3× less time per token)"),
        "https://github.com/MoonshotAI/Kimi-Linear",
        PRIMARY,
        N_("official repository and tech report (Moonshot AI)"),
    ),
    Published(
        "spill",
        "RTX 3090",
        "Qwen3.6 27B Q4 (Ollama)",
        N_("decode speed as num_ctx grows; past the card's memory Ollama moves whole layers (weights and "
        "cache) to the CPU"),
        "num_ctx 8K / 32K / 128K / 256K",
        N_("35.9 / 22.8 / 6.9 / 4.2 tokens/s (100 / 88 / 70 / 55 % on the GPU)"),
        "https://bric.pe.kr/blog/ollama-num-ctx-kv-cache-trap-tokens-per-second",
        COMMUNITY,
        N_("personal blog"),
    ),
    Published(
        "spill",
        "RTX 3060 12GB",
        "DeepSeek-R1 14B (Ollama)",
        N_("decode speed before and after a larger num_ctx pushed the model past the card's memory; Ollama "
        "then runs layers on the CPU"),
        N_("num_ctx raised past VRAM"),
        N_("4.8 tokens/s instead of about 35"),
        "https://insiderllm.com/guides/num-ctx-vram-overflow-slow-inference/",
        COMMUNITY,
        N_("guide website"),
    ),
    Published(
        "spill",
        N_("(card not stated)"),
        "Llama 7B Q4_0",
        N_("decode speed, llama-bench tg128 at depth 0; -ngl sets how many layers' weights stay on the card, "
        "the CPU computes the rest: weights moved, not the cache"),
        N_("-ngl 35 / 34 / 30 / 10 layers on the card"),
        N_("131.66 / 71.76 / 40.04 / 13.45 tokens/s"),
        _LLAMA_BENCH,
        PRIMARY,
        _LLAMA_BENCH_WHAT,
    ),
    Published(
        "spill",
        "RTX 4080 Laptop 12GB",
        N_("models run with HF transformers"),
        N_("time per step as the context outgrows the card and CUDA unified memory pages tensors to system "
        "RAM over PCIe"),
        N_("context 512 → 32K tokens"),
        N_("25–105× longer steps past the VRAM edge"),
        "https://chimeraforge.vercel.app/reports/technical-report-127",
        COMMUNITY,
        N_("self-published report"),
    ),
    Published(
        "power",
        "RTX 5060 Ti 16GB",
        "Qwen2.5-Coder-7B Q4 (llama.cpp)",
        N_("decode speed and GPU power under a power cap"),
        N_("180 W / 150 W cap"),
        N_("81.2 tokens/s at 172.7 W / 80.4 tokens/s at 147.2 W (≈2.13 J/token at 180 W, derived)"),
        "https://inventivehq.com/blog/gpu-power-limit-tokens-per-watt",
        COMMUNITY,
        N_("vendor blog"),
    ),
    Published(
        "power",
        N_("6× RTX 3090"),
        "MiniMax M2.5 Q2",
        N_("decode speed at a 4K-token context under a per-card power cap"),
        N_("350 / 250 / 150 / 100 W cap"),
        N_("72.6 / 70.7 / 62.6 / 12.1 tokens/s"),
        "https://llmgarage.ai/power-limit-tokens-per-second-benchmark",
        COMMUNITY,
        N_("hobbyist benchmark website"),
    ),
    Published(
        "power",
        "H100",
        "Llama 3.1 8B (vLLM)",
        N_("energy per token, ML.ENERGY leaderboard v2.0 (vLLM 0.5.4) vs v3.0 (vLLM 0.11.1)"),
        N_("batch 64"),
        N_("0.20 → 0.12 J/token"),
        "https://ml.energy/blog/measurement/energy/llm-inference-energy-a-longitudinal-analysis",
        PRIMARY,
        N_("the ML.ENERGY leaderboard maintainers' own post"),
    ),
    Published(
        "dense vs MoE",
        N_("1× H100"),
        N_("GPT-OSS-20B (MoE) vs Qwen3-32B (dense)"),
        N_("decode throughput, and energy per 1,000 tokens from nvidia-smi power samples (bf16)"),
        N_("2,048-token context, 64 tokens decoded"),
        N_("MoE: +31.8 % decode throughput, −25.8 % energy per 1,000 tokens"),
        "https://arxiv.org/abs/2508.16700",
        PRIMARY,
        N_("paper (arXiv)"),
    ),
    Published(
        "dense vs MoE",
        N_("2× RTX 3090"),
        N_("Qwen3-32B Q5_K_M (dense) vs Nemotron-3-Nano-30B-A3B Q6_K (MoE)"),
        N_("decode speed with llama.cpp, weights and cache all on the two cards"),
        N_("dense vs MoE of similar total size"),
        N_("9.06 vs 64.82 tokens/s"),
        "https://llmgarage.ai/moe-vs-dense-showdown.html",
        COMMUNITY,
        N_("hobbyist benchmark website"),
    ),
    Published(
        "dense vs MoE",
        "RTX 5080 16GB",
        N_("dense 8–14B vs MoE (Ollama)"),
        N_("steady-state GPU power (median) while generating"),
        "Ollama 0.20.7, Windows 11",
        N_("dense 217–301 W vs MoE 47–73 W — but the MoE did not fit and waited on experts on the CPU"),
        "https://ai-hardware-zukan.com/?p=2436",
        COMMUNITY,
        N_("personal blog"),
    ),
)


def published_table(topic: str | None = None, brief: bool = False) -> tuple[list[dict[str, str]], list[str]]:
    """Rows narrow enough for a phone — what was measured (model, card, quantity), setting, result, and a
    numbered source with its kind: a fifth column ran off a phone's screen — and the sources they number,
    each with what it is (long paths and URLs do not wrap, so they go below the table).

    `brief` names only the model and card in the first column ("model on card"), so the table stays
    short enough to compare at a glance; the full table says how each number was measured."""
    rows, sources = [], []
    for p in PUBLISHED:
        if topic is not None and p.topic != topic:
            continue
        # the page's words in the reader's language (the settings and results too: 'tokens/s', 'depth',
        # 'W cap' are words); models, numbers and sources stay as published
        label = _("{kind}, {what}: {source}").format(kind=_(p.source_kind), what=_(p.source_what), source=p.source)
        card = _(p.gpu) if p.gpu.startswith("(") else _("on {gpu}").format(gpu=_(p.gpu))
        if label not in sources:
            sources.append(label)
        name = _("**{model} {card}**").format(model=_(p.model), card=card)
        first = (
            {_("model on card"): name}
            if brief
            else {_("what was measured"): _("{name}: {measured}").format(name=name, measured=_(p.measured))}
        )
        rows.append(
            {
                **first,
                _("setting"): _(p.setting),
                _("result"): _(p.result),
                _("source"): f"[{sources.index(label) + 1}] {_(p.source_kind)}",
            }
        )
    return rows, sources


DEPTH_WORDS = {"0": 0, "16K": 16384, "32K": 32768, "64K": 65536}  # the depths the context rows quote


def published_row(topic: str, model_prefix: str, gpu: str | None = None) -> Published:
    """The one row of `topic` whose model starts with `model_prefix` (on `gpu`, when given)."""
    (row,) = [
        p for p in PUBLISHED if p.topic == topic and p.model.startswith(model_prefix) and gpu in (None, p.gpu)
    ]
    return row


def depth_run(model_prefix: str) -> Published:
    """The RTX 3090 context row (llama-bench after filling the context to each depth) of one model."""
    return published_row("context", model_prefix, "RTX 3090")


def result_speeds(row: Published) -> list[float]:
    """The tokens/s a row lists, in order: '131.66 / 71.76 / … tokens/s' → [131.66, 71.76, …]."""
    return [float(v) for v in row.result.split("tokens/s")[0].split("/")]


def measured_speeds(row: Published) -> dict[int, float]:
    """Depth → tokens/s, read from the row's 'depth 0 / 16K / …' and '154.62 / 101.74 / …' text."""
    depths = [DEPTH_WORDS[d.strip()] for d in row.setting.removeprefix("depth").split("/")]
    speeds = result_speeds(row)
    if len(depths) != len(speeds):
        raise ValueError(f"{row.model}: {len(depths)} depths but {len(speeds)} speeds")
    return dict(zip(depths, speeds, strict=True))


def depth_loss(model_prefix: str) -> float:
    """Share of its depth-0 speed a model's RTX 3090 row loses by its deepest depth: 0.68 for Llama 8B."""
    speeds = measured_speeds(depth_run(model_prefix))
    return 1 - speeds[max(speeds)] / speeds[0]
