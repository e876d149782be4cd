"""The course glossary: every term a beginner meets, in one plain sentence, with the lesson that
explains it in depth.

One record per term. Pages introduce a term with `ui.glossary.new_words(...)` in the first lesson
(in course order) whose prose uses it; `tests/app/test_glossary.py` walks the lessons in order
and fails when a term is used before that. `patterns` say how a term shows up in prose (regular
expressions over the page's strings); `code` patterns catch text a page only builds at run time
(e.g. `format_bytes(` prints KiB/MiB/GiB).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.plan.formats import Q6_K_BITS, WEIGHT_FORMATS
from core.specs import SPECS

_K3 = SPECS["kimi_k3"]  # the hybrid's layer counts come from its config, never typed
_Q4_0, _Q4_K_M = WEIGHT_FORMATS["q4_0"], WEIGHT_FORMATS["q4_k_m"]  # real bits per weight, with sources


@dataclass(frozen=True)
class Term:
    key: str
    name: str  # how the glossary and the "new words" box print it
    sentence: str  # one plain sentence, no maths assumed
    lesson: str  # slug of the lesson that explains it in depth (ui/course.py)
    patterns: tuple[str, ...]  # regexes over prose strings (case-sensitive; use (?i) where needed)
    code: tuple[str, ...] = ()  # regexes over page source for text built at run time
    first: str = ""  # slug of the lesson whose "new words" box explains it first, when earlier than `lesson`

    @property
    def first_lesson(self) -> str:
        """Where a reader first meets the term explained (its first "new words" box)."""
        return self.first or self.lesson

    def used_in(self, prose: str, source: str = "") -> bool:
        """True if `prose` (the page's strings) or `source` (its code) uses the term."""
        if any(re.search(p, prose) for p in self.patterns):
            return True
        return any(re.search(p, source) for p in self.code)


def _t(key, name, sentence, lesson, *patterns, code=(), first="") -> Term:
    return Term(key, name, sentence, lesson, tuple(patterns), tuple(code), first)


TERMS: tuple[Term, ...] = (
    # --- text and models -----------------------------------------------------------------
    _t(
        "token",
        "token",
        "The unit of text a model reads and writes one at a time: a word piece in real "
        f"models (GPT-2 knows {SPECS['gpt2'].vocab:,} of them), a single byte in this course's tiny models.",
        "gpt2",
        r"(?i)\btokens?\b",
    ),
    _t(
        "byte",
        "byte",
        "Eight bits: one letter of plain English in UTF-8 (a Japanese character takes three, "
        "an emoji four), and also the unit memory is counted in.",
        "gpt2",
        r"(?i)\bbytes?\b",
    ),
    _t(
        "parameter",
        "parameter / weight",
        "One learned number inside a model; 'weights' is the everyday word "
        "for all of them together, and '124M parameters' means 124 million such numbers.",
        "gpt2",
        r"(?i)\bparameters?\b",
        r"(?i)\bweights\b",
    ),
    _t(
        "layer",
        "layer",
        "One stage of processing that every token passes through; models stack dozens, "
        "each reading the previous one's output.",
        "gpt2",
        r"(?i)\blayers?\b",
    ),
    _t(
        "block",
        "block",
        "One repeated unit of a transformer: an attention layer followed by a feed-forward "
        f"layer (GPT-2 small stacks {SPECS['gpt2'].num_layers}).",
        "gpt2",
        r"(?i)\bblocks?\b",
    ),
    _t(
        "transformer",
        "transformer",
        "The design of GPT-2 and of nearly every language model since (Vaswani et al., 2017): a stack "
        "of identical blocks, in each of which every token looks back at the tokens before it.",
        "gpt2",
        r"(?i)\btransformers?\b",
    ),
    _t(
        "residual",
        "residual (stream)",
        "The running vector each token carries up through the model: every block adds its result "
        "onto it instead of replacing it, so what earlier blocks found is kept.",
        "gpt2",
        r"(?i)\bresidual\b",
    ),
    _t(
        "embedding",
        "embedding",
        "The list of numbers a token is turned into before the first layer; a "
        "learned table has one such row per possible token.",
        "kimi_k3",
        r"(?i)\bembeddings?\b",
    ),
    _t(
        "context",
        "context / context window",
        "Everything the model has read so far in one conversation, "
        "measured in tokens; the window is the most it can look back.",
        "gpt2",
        r"(?i)\bcontext\b",
    ),
    _t(
        "matrix",
        "matrix / vector",
        "A vector is a list of numbers; a matrix is a grid of them. Models are "
        "mostly matrices multiplied with vectors.",
        "primer",
        r"(?i)\bmatri(x|ces)\b",
        r"(?i)\bvectors?\b",
    ),
    # --- attention ---------------------------------------------------------------------------
    _t(
        "vector",
        "vector",
        "A list of numbers that together mean something, such as one token's meaning in a layer; drawn "
        "as an arrow when it has two numbers.",
        "primer",
        r"(?i)\bvectors?\b",
        first="gpt2",
    ),
    _t(
        "dot_product",
        "dot product",
        "Multiply two vectors number by number and add up the products: large when they point the same "
        "way, zero at right angles, negative when opposite.",
        "primer",
        r"(?i)\bdot[- ]products?\b",
        first="kv_cache",
    ),
    _t(
        "query",
        "query",
        "The vector a token uses to ask 'what am I looking for?' when it looks back at earlier tokens.",
        "kv_cache",
        r"(?i)\bquer(y|ies)\b",
    ),
    _t(
        "key",
        "key",
        "The vector each token offers to be found by: a query is compared with every key.",
        "kv_cache",
        r"\bkeys?\b",
    ),
    _t(
        "value",
        "value",
        "The vector a token hands over when a query picks it; the output mixes values.",
        "kv_cache",
        r"\bvalues?\b",
    ),
    _t(
        "attention",
        "attention",
        "How a token looks back: its query is scored against every earlier key, "
        "and the values are mixed by those scores.",
        "kv_cache",
        r"(?i)\battention\b",
    ),
    _t(
        "softmax",
        "softmax",
        "A function that turns a list of scores into weights that are all positive and "
        "add up to 1, giving the biggest score the biggest share.",
        "kv_cache",
        r"(?i)\bsoftmax\b",
    ),
    _t(
        "attention_weights",
        "attention weights",
        "The softmax shares a query gives to the earlier tokens: "
        "how much of each value goes into the output.",
        "kv_cache",
        r"(?i)\battention weights?\b",
    ),
    _t(
        "head",
        "head",
        "One of several attention units that run side by side in a layer, each with its own "
        "smaller queries, keys and values.",
        "kv_cache",
        r"(?i)\bheads?\b",
    ),
    _t(
        "kv_cache",
        "KV cache",
        "The keys and values of every token read so far, kept so they need not be "
        "computed again; it grows by one entry per token.",
        "kv_cache",
        r"(?i)\bcache\b",
    ),
    _t(
        "gqa",
        "GQA (grouped-query attention)",
        "Several query heads share one key/value head, so the cache "
        f"stores fewer keys and values (Llama-3-8B: {SPECS['llama3_8b'].attention.heads} query heads, "
        f"{SPECS['llama3_8b'].attention.kv_heads} key/value heads).",
        "planner",
        r"\bGQA\b",
        r"(?i)grouped-query",
    ),
    _t(
        "mha",
        "MHA (multi-head attention)",
        "Plain attention where every head keeps its own keys and values, as in GPT-2.",
        "planner",
        r"\bMHA\b",
    ),
    _t(
        "mla",
        "MLA / latent",
        "Multi-head latent attention: each token's keys and values are squeezed into "
        "one short 'latent' vector that is cached and expanded when needed.",
        "kimi_k3",
        r"\bMLA\b",
        r"(?i)\blatent\b",
    ),
    # --- numbers and memory ------------------------------------------------------------------
    _t(
        "fp32",
        "fp32 / bf16 / fp8 / 4-bit",
        "How many bits each stored number takes: 32, 16, 8 or 4; fewer "
        "bits save memory and reading time at some cost in precision.",
        "kv_cache",
        r"(?i)\b(fp32|fp64|bf16|fp16|fp8|mxfp4)\b",
        r"\b(4|8|16|32)-bit\b",
    ),
    _t(
        "gib",
        "KiB / MiB / GiB vs GB",
        "Memory sizes in powers of two (1 GiB = 1,073,741,824 bytes), as this "
        "course prints them; GB is 10⁹ bytes, as card makers and bandwidth figures use.",
        "kv_cache",
        r"\b(KiB|MiB|GiB|TiB|GB|GB/s)\b",
        code=(r"format_bytes\(",),
    ),
    _t(
        "gpu",
        "GPU / graphics card",
        "A chip built to do thousands of multiplications at once; language models run on them.",
        "your_gpu",
        r"\bGPUs?\b",
        r"(?i)graphics card",
    ),
    _t(
        "vram",
        "VRAM",
        "The graphics card's own memory: the weights and the cache must fit in it to run at full speed.",
        "kv_cache",
        r"\bVRAM\b",
    ),
    _t(
        "bandwidth",
        "bandwidth",
        "How many bytes per second a memory can deliver (GB/s); when a model reads "
        "more than it computes, bandwidth sets its speed.",
        "kv_cache",
        r"(?i)\bbandwidth\b",
    ),
    _t(
        "pcie",
        "PCIe",
        "The link between the graphics card and the rest of the computer; many times slower "
        "than the card's own memory.",
        "kv_cache",
        r"\bPCIe\b",
    ),
    _t(
        "roofline",
        "roofline",
        "The fastest a step can possibly run: bytes it must read divided by the "
        "memory's bandwidth (or work divided by compute, whichever is slower).",
        "your_gpu",
        r"(?i)\broofline\b",
        first="kv_cache",
    ),
    # --- the fixed-size board --------------------------------------------------------------
    _t(
        "board",
        "board / fixed state",
        "This course's name for the fixed-size matrix a linear-attention head keeps instead of a "
        "cache (a layer keeps one per head): every token writes onto it, and it never grows.",
        "linear_attention",
        r"(?i)\bboards?\b",
        r"(?i)fixed state",
    ),
    _t(
        "linear_attention",
        "linear attention",
        "Attention without the softmax, regrouped so that every token adds its key–value pair onto one "
        "board of fixed size instead of a cache that grows.",
        "linear_attention",
        r"(?i)\blinear[- ]attention\b",
    ),
    _t(
        "collision",
        "collision",
        "Two keys that share board rows: reading one also brings back part of the other's value. "
        "Past as many pairs as the board has rows it cannot be avoided; keys that are not at right "
        "angles collide sooner.",
        "collisions",
        r"(?i)\bcollisions?\b",
        first="linear_attention",
    ),
    _t(
        "mqar",
        "MQAR / associative recall",
        "A test task: read a list of key→value pairs, then answer each key when it is asked again; it "
        "measures how much a memory holds exactly.",
        "collisions",
        r"\bMQAR\b",
        r"(?i)associative recall",
    ),
    _t(
        "deltanet",
        "DeltaNet / delta rule",
        "Linear attention that first erases what the board returns for a key, then writes the new value "
        "(erase, then write), by a write strength β between 0 and 1.",
        "deltanet",
        r"\bDeltaNet\b",
        r"(?i)\bdelta rule\b",
    ),
    _t(
        "gated_deltanet",
        "Gated DeltaNet",
        "DeltaNet with a fade: before each write the whole board is multiplied by one rate α between "
        "0 and 1, so old entries drain away.",
        "forgetting",
        r"Gated DeltaNet",
    ),
    _t(
        "kda",
        "KDA (Kimi Delta Attention)",
        "Gated DeltaNet with one fade rate per key channel, so some rows are kept while others are "
        "cleared; Kimi Linear and Kimi K3 use it.",
        "forgetting",
        r"\bKDA\b",
        r"Kimi Delta Attention",
    ),
    _t(
        "hybrid",
        "hybrid",
        "A model that mixes layer kinds: Kimi K3 has about "
        f"{round(_K3.num_linear_layers / _K3.num_full_attention_layers)} KDA layers (fixed boards) for every "
        f"full-attention layer (a growing cache) — {_K3.num_linear_layers} KDA + "
        f"{_K3.num_full_attention_layers} full attention in its {_K3.num_layers} layers.",
        "kimi_k3",
        r"(?i)\bhybrids?\b",
        first="collisions",
    ),
    _t(
        "short_conv",
        "short convolution",
        "A small filter that mixes each token with the few just before it (the last "
        f"{SPECS['kimi_k3'].linear.conv_kernel - 1} in Kimi's "
        "layers); a board layer keeps those few inputs in a small buffer that, like its boards, never grows.",
        "kimi_k3",
        r"(?i)short[- ]conv",
    ),
    _t(
        "pseudo_query",
        "pseudo-query",
        "A learned vector, one per sub-layer, that Attention Residuals uses in place of a token's "
        "query to weigh the outputs of earlier layers.",
        "kimi_k3",
        r"(?i)pseudo-quer(y|ies)",
    ),
    _t(
        "tensor_parallel",
        "tensor parallel",
        "Splitting every layer's matrices across several GPUs, which then work on each token together "
        "and share the memory; the heads must split evenly among them.",
        "planner",
        r"(?i)tensor[- ]parallel",
    ),
    _t(
        "attn_res",
        "Attention Residuals (AttnRes)",
        "Kimi K3's look back over depth: before each sub-layer, a learned query weighs the outputs of "
        "earlier layers instead of adding them all up equally.",
        "kimi_k3",
        r"Attention Residuals",
        r"\bAttnRes\b",
    ),
    _t(
        "transpose",
        "transpose (ᵀ)",
        "Flipping a matrix over its diagonal, so rows become columns; kᵀ turns "
        "a column of numbers into a row.",
        "primer",
        r"ᵀ",
        r"(?i)\btranspose",
    ),
    _t(
        "outer_product",
        "outer product",
        "A column times a row (k vᵀ): a whole grid where entry (i, j) is k's i-th number times v's j-th.",
        "primer",
        r"(?i)outer product",
    ),
    _t(
        "unit_vector",
        "unit / orthogonal vector",
        "A unit vector has length 1; two vectors are orthogonal "
        "when they point at right angles, so neither has any part of the other.",
        "primer",
        r"(?i)\bunit (vector|key)s?\b",
        r"(?i)\borthogonal\b",
    ),
    _t(
        "channel",
        "channel",
        "One of the numbers in a vector, seen as a lane of its own; on the board, "
        "one key channel is one row.",
        "forgetting",
        r"(?i)\bchannels?\b",
    ),
    _t(
        "recurrence",
        "recurrence",
        "A rule that computes each step from the result of the step before, so the steps must run in order.",
        "chunks",
        r"(?i)\brecurren(ce|t)\b",
    ),
    _t(
        "wy",
        "WY representation",
        "A way to write many erase-then-write steps as one product of matrices, "
        "so a whole chunk is computed at once instead of token by token.",
        "chunks",
        r"\bWY\b",
        r"(?i)UT transform",
    ),
    _t(
        "gate",
        "gate",
        "A number between 0 and 1, computed from the token, that scales how much of "
        "something passes; here, how much of the board survives each step.",
        "forgetting",
        r"(?i)\bgates?\b",
    ),
    _t(
        "sigmoid",
        "sigmoid",
        "A function that squashes any number into the range 0 to 1.",
        "experts",
        r"(?i)\bsigmoid\b",
    ),
    _t(
        "rmsnorm",
        "RMSNorm",
        "Rescales a vector so its typical size is 1, keeping its direction.",
        "kimi_k3",
        r"RMSNorm",
    ),
    # --- experts -------------------------------------------------------------------------
    _t(
        "ffn",
        "FFN / feed-forward",
        "The part of each block that works on every token alone (an MLP, a multilayer perceptron: two or "
        "three matrix multiplications in a row); it holds most of a dense model's weights.",
        "experts",
        r"(?i)feed-forward",
        r"\bFFN\b",
        r"\bMLP\b",
        first="kimi_k3",
    ),
    _t(
        "expert",
        "expert / MoE",
        "In a mixture of experts (MoE) the feed-forward part is split into many "
        "small networks, the experts; each token runs only a few of them.",
        "experts",
        r"(?i)\bexperts?\b",
        r"\bMoE\b",
    ),
    _t(
        "router",
        "router",
        "The small layer that scores every expert for a token and wakes the best few.",
        "experts",
        r"(?i)\brouter\b",
    ),
    # --- serving -------------------------------------------------------------------------
    _t(
        "decode",
        "prefill / decode",
        "Prefill reads the whole prompt in one pass; decode then writes one token at a time, each step "
        "reading the weights and the cache again — once for the whole batch, so at batch 1 once per token.",
        "your_gpu",
        r"(?i)\bdecod(e|es|ing)\b",
        r"(?i)\bprefill\b",
    ),
    _t(
        "batch",
        "batch",
        "Several conversations served together: one step reads the weights once for all of them, "
        "while each keeps its own cache; batch 1 is a single conversation.",
        "planner",
        r"(?i)\bbatch(es)?\b",
        first="kv_cache",
    ),
    # --- measuring -------------------------------------------------------------------------
    _t(
        "nvml",
        "NVML",
        "NVIDIA's management library: the driver interface that reports a card's name, "
        "memory, power and clocks.",
        "your_gpu",
        r"\bNVML\b",
    ),
    _t(
        "j_per_token",
        "J/token",
        "Joules of energy spent per generated token: average watts times seconds per token.",
        "your_gpu",
        r"J/token",
        r"(?i)joules? per token",
        first="experts",
    ),
    _t(
        "kernel",
        "kernel (GPU)",
        "One small program the GPU runs over many numbers at once; a model's step is a chain of "
        "them, each started by the CPU, and fast libraries write fused ones that do several steps in one.",
        "your_gpu",
        r"(?i)\bkernels?\b",
        first="chunks",
    ),
    _t(
        "cuda_graph",
        "CUDA graph",
        "A recording of all the kernels of one or more steps that the GPU replays with one call, "
        "so the CPU no longer has to start each kernel itself.",
        "your_gpu",
        r"\bCUDA graphs?\b",
    ),
    _t(
        "tg128",
        "tg128 (llama-bench)",
        "llama.cpp's benchmark row 'text generation of 128 tokens': the "
        "average tokens/s while writing 128 tokens; '@ d4096' means after 4,096 tokens of context.",
        "your_gpu",
        r"\btg\d+\b",
    ),
    _t(
        "q4_0",
        "Q4_0 / Q4_K_M",
        "llama.cpp's 4-bit weight formats: Q4_0 stores each weight in 4 bits plus one shared scale per "
        f"small block ({_Q4_0.bits:.1f} bits per weight); Q4_K_M mixes Q4_K blocks with larger Q6_K ones "
        f"({Q6_K_BITS:.1f} bits per weight), about {_Q4_K_M.bits:.1f} bits per weight over a whole model.",
        "your_gpu",
        r"\bQ4_(0|K_M)\b",
        first="kv_cache",
    ),
    _t(
        "ngl",
        "-ngl",
        "llama.cpp's option 'number of GPU layers': how many layers run on the card; the rest "
        "run on the CPU from main memory.",
        "your_gpu",
        r"-ngl\b",
        first="kv_cache",
    ),
    _t(
        "num_ctx",
        "num_ctx",
        "Ollama's context-length setting; a larger value reserves a larger KV cache, "
        "which may no longer fit in VRAM.",
        "your_gpu",
        r"\bnum_ctx\b",
    ),
)

BY_KEY: dict[str, Term] = {t.key: t for t in TERMS}
if len(BY_KEY) != len(TERMS):  # pragma: no cover - a typo guard
    raise ValueError("two glossary terms share a key")


def get(key: str) -> Term:
    """The term `key` (ValueError for an unknown key)."""
    try:
        return BY_KEY[key]
    except KeyError:
        raise ValueError(f"no glossary term {key!r}") from None


def alphabetical() -> list[Term]:
    """Every term, sorted the way a reader looks one up."""
    return sorted(TERMS, key=lambda t: t.name.lower().lstrip("-"))
