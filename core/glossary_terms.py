"""The glossary's table: every term a beginner meets, one record per term, in course order.

Each record holds the fields of `core.glossary.Term`, which builds the terms from them (the lookups
live there). `name` and `text` stay English here, marked for the catalogs (`NP_`, `N_`); `patterns`
say how a term shows up in prose (regular expressions over the page's strings); `code` patterns
catch text a page only builds at run time (e.g. `format_bytes(` prints KiB/MiB/GiB); `values` fill
the {placeholders} of `text` with numbers from the model configs and weight formats, never typed.
"""

from __future__ import annotations

from core.i18n import N_, NP_
from core.plan.formats import Q6_K_BITS, WEIGHT_FORMATS
from core.specs import SPECS

_K3 = SPECS["kimi_k3"]  # the hybrid's layer counts come from its config, never typed
_Q4_0, _Q4_K_M = WEIGHT_FORMATS["q4_0"], WEIGHT_FORMATS["q4_k_m"]  # real bits per weight, with sources
# MXFP4: 4-bit numbers plus one 8-bit scale per block, so the block size follows from the bits per weight
_MXFP4_GROUP = round(8 / (WEIGHT_FORMATS["mxfp4"].bits - 4))
_K3_LAYERS = (
    ("ratio", round(_K3.num_linear_layers / _K3.num_full_attention_layers)),
    ("linear", _K3.num_linear_layers),
    ("full", _K3.num_full_attention_layers),
    ("layers", _K3.num_layers),
)


def _t(key, name, text, lesson, *patterns, code=(), first="", values=(), reading="") -> dict[str, object]:
    """One term's record: the keyword arguments of `core.glossary.Term`. `reading` is how the Japanese name
    is read, in hiragana (the Japanese glossary is sorted by it); a name Japanese writes in Latin letters
    (GPU, KV cache) needs none: it sorts A to Z."""
    return dict(
        key=key,
        reading=reading,
        name=name,
        text=text,
        lesson=lesson,
        patterns=tuple(patterns),
        code=tuple(code),
        first=first,
        values=tuple(values),
    )


RECORDS: tuple[dict[str, object], ...] = (
    # --- text and models -----------------------------------------------------------------
    _t(
        "token",
        NP_("glossary", "token"),
        N_(
            "The unit of text a model reads and writes one at a time: a word piece in real "
            "models (GPT-2 knows {vocab:,} of them), a single byte in this course's tiny models."
        ),
        "gpt2",
        r"(?i)\btokens?\b",
        values=(("vocab", SPECS["gpt2"].vocab),),
        reading="とーくん",
    ),
    _t(
        "byte",
        NP_("glossary", "byte"),
        N_(
            "Eight bits: one letter of plain English in UTF-8 (a Japanese character takes three, "
            "an emoji four), and also the unit memory is counted in."
        ),
        "gpt2",
        r"(?i)\bbytes?\b",
        reading="ばいと",
    ),
    _t(
        "parameter",
        NP_("glossary", "parameter / weight"),
        N_(
            "One learned number inside a model; 'weights' is the everyday word "
            "for all of them together, and '124M parameters' means 124 million such numbers."
        ),
        "gpt2",
        r"(?i)\bparameters?\b",
        r"(?i)\bweights\b",
        reading="ぱらめーた",
    ),
    _t(
        "layer",
        NP_("glossary", "layer"),
        N_(
            "One stage of processing that every token passes through; models stack dozens, "
            "each reading the previous one's output."
        ),
        "gpt2",
        r"(?i)\blayers?\b",
        reading="そう",
    ),
    _t(
        "block",
        NP_("glossary", "block"),
        N_(
            "One repeated unit of a transformer: an attention layer followed by a feed-forward "
            "layer (GPT-2 small stacks {layers})."
        ),
        "gpt2",
        r"(?i)\bblocks?\b",
        values=(("layers", SPECS["gpt2"].num_layers),),
        reading="ぶろっく",
    ),
    _t(
        "transformer",
        NP_("glossary", "transformer"),
        N_(
            "The design of GPT-2 and of nearly every language model since (Vaswani et al., 2017): a stack "
            "of identical blocks, in each of which every token looks back at the tokens before it."
        ),
        "gpt2",
        r"(?i)\btransformers?\b",
    ),
    _t(
        "residual",
        NP_("glossary", "residual (stream)"),
        N_(
            "The running vector each token carries up through the model: every block adds its result "
            "onto it instead of replacing it, so what earlier blocks found is kept."
        ),
        "gpt2",
        r"(?i)\bresidual\b",
        reading="ざんさすとりーむ",
    ),
    _t(
        "embedding",
        NP_("glossary", "embedding"),
        N_(
            "The list of numbers a token is turned into before the first layer; a "
            "learned table has one such row per possible token."
        ),
        "kimi_k3",
        r"(?i)\bembeddings?\b",
        reading="うめこみ",
    ),
    _t(
        "context",
        NP_("glossary", "context / context window"),
        N_(
            "Everything the model has read so far in one conversation, "
            "measured in tokens; the window is the most it can look back."
        ),
        "gpt2",
        r"(?i)\bcontext\b",
        reading="こんてきすと",
    ),
    _t(
        "matrix",
        NP_("glossary", "matrix / vector"),
        N_(
            "A vector is a list of numbers; a matrix is a grid of them. Models are "
            "mostly matrices multiplied with vectors."
        ),
        "primer",
        r"(?i)\bmatri(x|ces)\b",
        r"(?i)\bvectors?\b",
        reading="ぎょうれつ",
    ),
    # --- attention ---------------------------------------------------------------------------
    _t(
        "vector",
        NP_("glossary", "vector"),
        N_(
            "A list of numbers that together mean something, such as one token's meaning in a layer; drawn "
            "as an arrow when it has two numbers."
        ),
        "primer",
        r"(?i)\bvectors?\b",
        first="gpt2",
        reading="べくとる",
    ),
    _t(
        "dot_product",
        NP_("glossary", "dot product"),
        N_(
            "Multiply two vectors number by number and add up the products: large when they point the same "
            "way, zero at right angles, negative when opposite."
        ),
        "primer",
        r"(?i)\bdot[- ]products?\b",
        first="kv_cache",
        reading="ないせき",
    ),
    _t(
        "query",
        NP_("glossary", "query"),
        N_("The vector a token uses to ask 'what am I looking for?' when it looks back at earlier tokens."),
        "kv_cache",
        r"(?i)\bquer(y|ies)\b",
        reading="くえり",
    ),
    _t(
        "key",
        NP_("glossary", "key"),
        N_("The vector each token offers to be found by: a query is compared with every key."),
        "kv_cache",
        r"\bkeys?\b",
        reading="きー",
    ),
    _t(
        "value",
        NP_("glossary", "value"),
        N_("The vector a token hands over when a query picks it; the output mixes values."),
        "kv_cache",
        r"\bvalues?\b",
        reading="ばりゅー",
    ),
    _t(
        "attention",
        NP_("glossary", "attention"),
        N_(
            "How a token looks back: its query is scored against every earlier key, "
            "and the values are mixed by those scores."
        ),
        "kv_cache",
        r"(?i)\battention\b",
        reading="あてんしょん",
    ),
    _t(
        "softmax",
        NP_("glossary", "softmax"),
        N_(
            "A function that turns a list of scores into weights that are all positive and "
            "add up to 1, giving the biggest score the biggest share."
        ),
        "kv_cache",
        r"(?i)\bsoftmax\b",
        reading="そふとまっくす",
    ),
    _t(
        "attention_weights",
        NP_("glossary", "attention weights"),
        N_(
            "The softmax shares a query gives to the earlier tokens: "
            "how much of each value goes into the output."
        ),
        "kv_cache",
        r"(?i)\battention weights?\b",
        reading="あてんしょんのおもみ",
    ),
    _t(
        "head",
        NP_("glossary", "head"),
        N_(
            "One of several attention units that run side by side in a layer, each with its own "
            "smaller queries, keys and values."
        ),
        "kv_cache",
        r"(?i)\bheads?\b",
        reading="へっど",
    ),
    _t(
        "kv_cache",
        NP_("glossary", "KV cache"),
        N_(
            "The keys and values of every token read so far, kept so they need not be "
            "computed again; it grows by one entry per token."
        ),
        "kv_cache",
        r"(?i)\bcache\b",
    ),
    _t(
        "gqa",
        NP_("glossary", "GQA (grouped-query attention)"),
        N_(
            "Several query heads share one key/value head, so the cache "
            "stores fewer keys and values (Llama-3-8B: {heads} query heads, "
            "{kv_heads} key/value heads)."
        ),
        "planner",
        r"\bGQA\b",
        r"(?i)grouped-query",
        values=(
            ("heads", SPECS["llama3_8b"].attention.heads),
            ("kv_heads", SPECS["llama3_8b"].attention.kv_heads),
        ),
    ),
    _t(
        "mha",
        NP_("glossary", "MHA (multi-head attention)"),
        N_("Plain attention where every head keeps its own keys and values, as in GPT-2."),
        "planner",
        r"\bMHA\b",
    ),
    _t(
        "mla",
        NP_("glossary", "MLA / latent"),
        N_(
            "Multi-head latent attention: each token's keys and values are squeezed into one short 'latent' "
            "vector that is cached; attention reads that vector directly, because the matrices that would "
            "expand it are folded into the query and the output."
        ),
        "kimi_k3",
        r"\bMLA\b",
        r"(?i)\blatent\b",
    ),
    # --- numbers and memory ------------------------------------------------------------------
    _t(
        "fp32",
        NP_("glossary", "fp32 / bf16 / fp8 / 4-bit"),
        N_(
            "How many bits each stored number takes: 32, 16, 8 or 4; fewer "
            "bits save memory and reading time at some cost in precision."
        ),
        "kv_cache",
        r"(?i)\b(fp32|fp64|bf16|fp16|fp8|mxfp4)\b",
        r"\b(4|8|16|32)-bit\b",
    ),
    _t(
        "gib",
        NP_("glossary", "KiB / MiB / GiB vs GB"),
        N_(
            "Memory sizes in powers of two (1 GiB = 1,073,741,824 bytes), as this "
            "course prints them; GB is 10⁹ bytes, as card makers and bandwidth figures use."
        ),
        "kv_cache",
        r"\b(KiB|MiB|GiB|TiB|GB|GB/s)\b",
        code=(r"format_bytes\(",),
    ),
    _t(
        "gpu",
        NP_("glossary", "GPU / graphics card"),
        N_("A chip built to do thousands of multiplications at once; language models run on them."),
        "your_gpu",
        r"\bGPUs?\b",
        r"(?i)graphics card",
    ),
    _t(
        "vram",
        NP_("glossary", "VRAM"),
        N_("The graphics card's own memory: the weights and the cache must fit in it to run at full speed."),
        "kv_cache",
        r"\bVRAM\b",
    ),
    _t(
        "bandwidth",
        NP_("glossary", "bandwidth"),
        N_(
            "How many bytes per second a memory can deliver (GB/s); when a model reads "
            "more than it computes, bandwidth sets its speed."
        ),
        "kv_cache",
        r"(?i)\bbandwidth\b",
        reading="めもりたいいきはば",
    ),
    _t(
        "pcie",
        NP_("glossary", "PCIe"),
        N_(
            "The link between the graphics card and the rest of the computer; many times slower "
            "than the card's own memory."
        ),
        "kv_cache",
        r"\bPCIe\b",
    ),
    _t(
        "roofline",
        NP_("glossary", "roofline"),
        N_(
            "The speed a step would reach if moving its bytes were all it did: the bytes divided by a memory "
            "speed (or work divided by compute, whichever is slower). Divided by a measured copy speed, as this "
            "course's own runs are, a step can land a little above it."
        ),
        "your_gpu",
        r"(?i)\broofline\b",
        first="kv_cache",
        reading="るーふらいん",
    ),
    # --- the fixed-size board --------------------------------------------------------------
    _t(
        "board",
        NP_("glossary", "board / fixed state"),
        N_(
            "This course's name for the fixed-size matrix a linear-attention head keeps instead of a "
            "cache (a layer keeps one per head): every token writes onto it, and it never grows."
        ),
        "linear_attention",
        r"(?i)\bboards?\b",
        r"(?i)fixed state",
        reading="こくばん",
    ),
    _t(
        "linear_attention",
        NP_("glossary", "linear attention"),
        N_(
            "Attention without the softmax, regrouped so that every token adds its key–value pair onto one "
            "board of fixed size instead of a cache that grows."
        ),
        "linear_attention",
        r"(?i)\blinear[- ]attention\b",
        reading="せんけいあてんしょん",
    ),
    _t(
        "collision",
        NP_("glossary", "collision"),
        N_(
            "Two keys that share board rows: reading one also brings back part of the other's value. "
            "Past as many pairs as the board has rows it cannot be avoided; keys that are not at right "
            "angles collide sooner."
        ),
        "collisions",
        r"(?i)\bcollisions?\b",
        first="linear_attention",
        reading="しょうとつ",
    ),
    _t(
        "mqar",
        NP_("glossary", "MQAR / associative recall"),
        N_(
            "A test task: read a list of key→value pairs, then answer each key when it is asked again; it "
            "measures how much a memory holds exactly."
        ),
        "collisions",
        r"\bMQAR\b",
        r"(?i)associative recall",
    ),
    _t(
        "deltanet",
        NP_("glossary", "DeltaNet / delta rule"),
        N_(
            "Linear attention that first erases what the board returns for a key, then writes the new value "
            "(erase, then write), by a write strength β between 0 and 1."
        ),
        "deltanet",
        r"\bDeltaNet\b",
        r"(?i)\bdelta rule\b",
    ),
    _t(
        "gated_deltanet",
        NP_("glossary", "Gated DeltaNet"),
        N_(
            "DeltaNet with a fade: before each write the whole board is multiplied by one rate α between "
            "0 and 1, so old entries drain away."
        ),
        "forgetting",
        r"Gated DeltaNet",
    ),
    _t(
        "kda",
        NP_("glossary", "KDA (Kimi Delta Attention)"),
        N_(
            "Gated DeltaNet with one fade rate per key channel, so some rows are kept while others are "
            "cleared; Kimi Linear and Kimi K3 use it."
        ),
        "forgetting",
        r"\bKDA\b",
        r"Kimi Delta Attention",
    ),
    _t(
        "hybrid",
        NP_("glossary", "hybrid"),
        N_(
            "A model that mixes layer kinds: Kimi K3 has about "
            "{ratio} KDA layers (fixed boards) for every "
            "full-attention layer (a growing cache) — {linear} KDA + "
            "{full} full attention in its {layers} layers."
        ),
        "kimi_k3",
        r"(?i)\bhybrids?\b",
        first="collisions",
        values=_K3_LAYERS,
        reading="はいぶりっど",
    ),
    _t(
        "short_conv",
        NP_("glossary", "short convolution"),
        N_(
            "A small filter that mixes each token with the few just before it (the last "
            "{last} in Kimi's "
            "layers); a board layer keeps those few inputs in a small buffer that, like its boards, never grows."
        ),
        "kimi_k3",
        r"(?i)short[- ]conv",
        values=(("last", SPECS["kimi_k3"].linear.conv_kernel - 1),),
        reading="みじかいたたみこみ",
    ),
    _t(
        "pseudo_query",
        NP_("glossary", "pseudo-query"),
        N_(
            "A learned vector, one per sub-layer, that Attention Residuals uses in place of a token's "
            "query to weigh the outputs of earlier layers."
        ),
        "kimi_k3",
        r"(?i)pseudo-quer(y|ies)",
        reading="ぎじくえり",
    ),
    _t(
        "tensor_parallel",
        NP_("glossary", "tensor parallel"),
        N_(
            "Splitting every layer's matrices across several GPUs, which then work on each token together "
            "and share the memory; the heads must split evenly among them."
        ),
        "planner",
        r"(?i)tensor[- ]parallel",
        reading="てんそるへいれつ",
    ),
    _t(
        "attn_res",
        NP_("glossary", "Attention Residuals (AttnRes)"),
        N_(
            "Kimi K3's look back over depth: before each sub-layer, a learned query weighs the outputs of "
            "earlier layers instead of adding them all up equally."
        ),
        "kimi_k3",
        r"Attention Residuals",
        r"\bAttnRes\b",
    ),
    _t(
        "transpose",
        NP_("glossary", "transpose (ᵀ)"),
        N_(
            "Flipping a matrix over its diagonal, so rows become columns; kᵀ turns "
            "a column of numbers into a row."
        ),
        "primer",
        r"ᵀ",
        r"(?i)\btranspose",
        reading="てんち",
    ),
    _t(
        "outer_product",
        NP_("glossary", "outer product"),
        N_("A column times a row (k vᵀ): a whole grid where entry (i, j) is k's i-th number times v's j-th."),
        "primer",
        r"(?i)outer product",
        reading="がいせき",
    ),
    _t(
        "unit_vector",
        NP_("glossary", "unit / orthogonal vector"),
        N_(
            "A unit vector has length 1; two vectors are orthogonal "
            "when they point at right angles, so neither has any part of the other."
        ),
        "primer",
        r"(?i)\bunit (vector|key)s?\b",
        r"(?i)\borthogonal\b",
        reading="たんいべくとる",
    ),
    _t(
        "channel",
        NP_("glossary", "channel"),
        N_(
            "One of the numbers in a vector, seen as a lane of its own; on the board, "
            "one key channel is one row."
        ),
        "forgetting",
        r"(?i)\bchannels?\b",
        reading="ちゃねる",
    ),
    _t(
        "recurrence",
        NP_("glossary", "recurrence"),
        N_(
            "A rule that computes each step from the result of the step before, so the steps must run in order."
        ),
        "chunks",
        r"(?i)\brecurren(ce|t)\b",
        reading="ぜんかしき",
    ),
    _t(
        "wy",
        NP_("glossary", "WY representation"),
        N_(
            "A way to write many erase-then-write steps as one product of matrices, "
            "so a whole chunk is computed at once instead of token by token."
        ),
        "chunks",
        r"\bWY\b",
        r"(?i)UT transform",
    ),
    _t(
        "gate",
        NP_("glossary", "gate"),
        N_(
            "A number between 0 and 1, computed from the token, that scales how much of "
            "something passes; here, how much of the board survives each step."
        ),
        "forgetting",
        r"(?i)\bgates?\b",
        reading="げーと",
    ),
    _t(
        "sigmoid",
        NP_("glossary", "sigmoid"),
        N_("A function that squashes any number into the range 0 to 1."),
        "experts",
        r"(?i)\bsigmoid\b",
        reading="しぐもいど",
    ),
    _t(
        "rmsnorm",
        NP_("glossary", "RMSNorm"),
        N_("Rescales a vector so its typical size is 1, keeping its direction."),
        "kimi_k3",
        r"RMSNorm",
    ),
    # --- experts -------------------------------------------------------------------------
    _t(
        "ffn",
        NP_("glossary", "FFN / feed-forward"),
        N_(
            "The part of each block that works on every token alone (an MLP, a multilayer perceptron: two or "
            "three matrix multiplications in a row); it holds most of a dense model's weights."
        ),
        "experts",
        r"(?i)feed-forward",
        r"\bFFN\b",
        r"\bMLP\b",
        first="kimi_k3",
    ),
    _t(
        "expert",
        NP_("glossary", "expert / MoE"),
        N_(
            "In a mixture of experts (MoE) the feed-forward part is split into many "
            "small networks, the experts; each token runs only a few of them."
        ),
        "experts",
        r"(?i)\bexperts?\b",
        r"\bMoE\b",
        reading="えきすぱーと",
    ),
    _t(
        "router",
        NP_("glossary", "router"),
        N_("The small layer that scores every expert for a token and wakes the best few."),
        "experts",
        r"(?i)\brouter\b",
        reading="るーたー",
    ),
    # --- serving -------------------------------------------------------------------------
    _t(
        "decode",
        NP_("glossary", "prefill / decode"),
        N_(
            "Prefill reads the whole prompt in one pass; decode then writes one token at a time, each step "
            "reading the weights and the cache again — once for the whole batch, so at batch 1 once per token."
        ),
        "your_gpu",
        r"(?i)\bdecod(e|es|ing)\b",
        r"(?i)\bprefill\b",
        reading="ぷりふぃる",
    ),
    _t(
        "batch",
        NP_("glossary", "batch"),
        N_(
            "Several conversations served together: one step reads the weights once for all of them, "
            "while each keeps its own cache; batch 1 is a single conversation."
        ),
        "planner",
        r"(?i)\bbatch(es)?\b",
        first="kv_cache",
        reading="ばっち",
    ),
    # --- measuring -------------------------------------------------------------------------
    _t(
        "nvml",
        NP_("glossary", "NVML"),
        N_(
            "NVIDIA's management library: the driver interface that reports a card's name, "
            "memory, power and clocks."
        ),
        "your_gpu",
        r"\bNVML\b",
    ),
    _t(
        "j_per_token",
        NP_("glossary", "J/token"),
        N_("Joules of energy spent per generated token: average watts times seconds per token."),
        "your_gpu",
        r"J/token",
        r"(?i)joules? per token",
        first="experts",
    ),
    _t(
        "kernel",
        NP_("glossary", "kernel (GPU)"),
        N_(
            "One small program the GPU runs over many numbers at once; a model's step is a chain of "
            "them, each started by the CPU, and fast libraries write fused ones that do several steps in one."
        ),
        "your_gpu",
        r"(?i)\bkernels?\b",
        first="chunks",
        reading="かーねる",
    ),
    _t(
        "cuda_graph",
        NP_("glossary", "CUDA graph"),
        N_(
            "A recording of all the kernels of one or more steps that the GPU replays with one call, "
            "so the CPU no longer has to start each kernel itself."
        ),
        "your_gpu",
        r"\bCUDA graphs?\b",
    ),
    _t(
        "tg128",
        NP_("glossary", "tg128 (llama-bench)"),
        N_(
            "llama.cpp's benchmark row 'text generation of 128 tokens': the "
            "average tokens/s while writing 128 tokens; '@ d4096' means after 4,096 tokens of context."
        ),
        "your_gpu",
        r"\btg\d+\b",
    ),
    _t(
        "q4_0",
        NP_("glossary", "Q4_0 / Q4_K_M"),
        N_(
            "llama.cpp's 4-bit weight formats: Q4_0 stores each weight in 4 bits plus one shared scale per "
            "small block ({q4_0:.1f} bits per weight); Q4_K_M mixes Q4_K blocks with larger Q6_K ones "
            "({q6_k:.1f} bits per weight), about {q4_k_m:.1f} bits per weight over a whole model."
        ),
        "your_gpu",
        r"\bQ4_(0|K_M)\b",
        first="kv_cache",
        values=(("q4_0", _Q4_0.bits), ("q6_k", Q6_K_BITS), ("q4_k_m", _Q4_K_M.bits)),
    ),
    _t(
        "ngl",
        NP_("glossary", "-ngl"),
        N_(
            "llama.cpp's option 'number of GPU layers': how many layers run on the card; the rest "
            "run on the CPU from main memory."
        ),
        "your_gpu",
        r"-ngl\b",
        first="kv_cache",
    ),
    _t(
        "num_ctx",
        NP_("glossary", "num_ctx"),
        N_(
            "Ollama's context-length setting; a larger value reserves a larger KV cache, "
            "which may no longer fit in VRAM."
        ),
        "your_gpu",
        r"\bnum_ctx\b",
    ),
    # --- training, formats and tools (issue 40: every term a Story page shows) ------------------------
    _t(
        "checkpoint",
        NP_("glossary", "checkpoint"),
        N_("A saved copy of a model's weights in files, which a program loads to run the trained model."),
        "gpt2",
        r"(?i)\bcheckpoints?\b",
        reading="ちぇっくぽいんと",
    ),
    _t(
        "seed",
        NP_("glossary", "seed"),
        N_(
            "A number that fixes a run's random draws — a model's random starting numbers, or which token "
            "sampling picks — so the run can be repeated exactly; another seed gives another random start."
        ),
        "collisions",
        r"(?i)\bseeds?\b",
        first="gpt2",
        reading="しーど",
    ),
    _t(
        "loss",
        NP_("glossary", "loss"),
        N_(
            "How wrong a model still is on its training examples, as one number; training nudges the "
            "weights to make it smaller, so lower is better."
        ),
        "collisions",
        r"(?i)\bloss(es)?\b",
        reading="そんしつ",
    ),
    _t(
        "learning_rate",
        NP_("glossary", "learning rate"),
        N_(
            "How big each nudge of training is: too small and the model learns slowly, too large and it "
            "overshoots and may never learn."
        ),
        "collisions",
        r"(?i)\blearning[- ]rates?\b",
        reading="がくしゅうりつ",
    ),
    _t(
        "flops",
        NP_("glossary", "FLOPs"),
        N_(
            "Floating-point operations: single multiplications or additions of numbers. One multiply-add is "
            "two of them, and their count says how much arithmetic a step needs."
        ),
        "linear_attention",
        r"\bFLOPs?\b",
    ),
    _t(
        "chunk",
        NP_("glossary", "chunk"),
        N_(
            "A stretch of tokens handled together as one piece: the chunked form of a board layer computes a "
            "whole chunk with a few matrix products, then hands the board on to the next chunk."
        ),
        "chunks",
        r"(?i)\bchunk(s|ed)?\b",
        reading="ちゃんく",
    ),
    _t(
        "full_attention",
        NP_("glossary", "full attention"),
        N_(
            "Ordinary softmax attention, which keeps every earlier key and value in its cache and looks at "
            "all of them; in a hybrid, the layers that are not fixed boards."
        ),
        "kimi_k3",
        r"(?i)\bfull[- ]attention\b",
        reading="ふるあてんしょん",
    ),
    _t(
        "dense",
        NP_("glossary", "dense model"),
        N_(
            "A model in which every token runs through all of the weights; the opposite of a mixture of "
            "experts, where each token wakes only a few."
        ),
        "experts",
        r"(?i)\bdense\b",
        first="kimi_k3",
        reading="みつなもでる",
    ),
    _t(
        "mxfp4",
        NP_("glossary", "MXFP4"),
        N_(
            "A 4-bit number format in which each block of {group} weights shares one scale, so a weight "
            "takes {bits:.2f} bits; Kimi K3 ships its experts in it."
        ),
        "experts",
        r"(?i)\bmxfp4\b",
        values=(("group", _MXFP4_GROUP), ("bits", WEIGHT_FORMATS["mxfp4"].bits)),
    ),
    _t(
        "quantisation",
        NP_("glossary", "quantisation"),
        N_(
            "Storing a model's weights in fewer bits (8, 4 or even fewer instead of 16), so it takes less "
            "memory and reads faster, at some cost in precision."
        ),
        "your_gpu",
        r"(?i)\bquanti[sz](ation|ations|ed|e|ing)\b",
        reading="りょうしか",
    ),
    _t(
        "log_scale",
        NP_("glossary", "log scale"),
        N_(
            "A chart axis on which each equal step up multiplies the value (for example by 10) instead of "
            "adding to it, so tiny and huge numbers fit on one chart."
        ),
        "your_gpu",
        r"(?i)\blog[- ]scale",
        first="collisions",
        reading="たいすうめもり",
    ),
    _t(
        "llama_cpp",
        NP_("glossary", "llama.cpp"),
        N_(
            "A free program that runs language models on an ordinary computer or graphics card, often with "
            "4-bit weights; its published speed tests are quoted in this course."
        ),
        "your_gpu",
        r"llama\.cpp",
        first="kv_cache",
    ),
    _t(
        "ollama",
        NP_("glossary", "Ollama"),
        N_(
            "A free app, built on llama.cpp, that downloads language models and runs them on your own computer."
        ),
        "your_gpu",
        r"\bOllama\b",
        first="kv_cache",
    ),
    _t(
        "vllm",
        NP_("glossary", "vLLM"),
        N_(
            "A free serving program that runs a language model for many users at once on a GPU server, "
            "batching their requests together."
        ),
        "your_gpu",
        r"\bvLLM\b",
    ),
)
