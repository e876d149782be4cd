"""Checks of the lessons on hybrid models: Kimi K3's layers, its experts, and a real hybrid (Qwen3.5)."""

from __future__ import annotations

from core.checks.questions import Choice, Number, Question
from core.i18n import _, number
from core.models import qwen35_mini
from core.plan import attention_twin, expert_bytes
from core.specs import SPECS
from core.units import format_bytes, format_context, format_params

LONG = 1_048_576  # the Kimi K3 lesson's longest conversation: 1M tokens


def kimi_k3() -> tuple[Question, ...]:
    spec = SPECS["kimi_k3"]
    at_long = attention_twin.memory_at_contexts(spec, [LONG])[0]
    times = round(at_long.twin_cache / at_long.hybrid_total, 1)
    return (
        Number(
            "caches",
            _("Of Kimi K3's {layers} layers, how many keep a cache that grows with every token?").format(
                layers=spec.num_layers
            ),
            answer=spec.num_full_attention_layers,
            why=_(
                "Only the MLA layers keep a cache: the solid squares of the layer map, {full} of {layers}. The "
                "other {linear} keep a board of fixed size."
            ).format(
                full=spec.num_full_attention_layers, layers=spec.num_layers, linear=spec.num_linear_layers
            ),
        ),
        Choice(
            "why_attention",
            _("Why does K3 keep any full-attention layers at all?"),
            (
                _("Full attention is faster than a board on long texts"),
                _(
                    "A board fades and overwrites, so an exact detail from far back can be lost; attention keeps it"
                ),
                _("KDA layers cannot learn without them"),
            ),
            answer=1,
            why=_(
                "The boards stay the same size because they forget (the Forgetting lesson); the solid MLA squares of "
                "the layer map keep every token, so those layers can still look back at any of them."
            ),
        ),
        Number(
            "saving",
            _(
                "At {context} tokens, how many times less memory does K3 keep than the same model with MLA in "
                "every layer? (one decimal)"
            ).format(context=format_context(LONG)),
            answer=times,
            tolerance=0.05,
            step=0.1,
            why=_(
                "“What one long conversation costs”: {hybrid} against {twin}, {times}× less, because only "
                "{full} of {layers} layers grow."
            ).format(
                hybrid=format_bytes(at_long.hybrid_total),
                twin=format_bytes(at_long.twin_cache),
                times=number(times, 1),
                full=spec.num_full_attention_layers,
                layers=spec.num_layers,
            ),
        ),
    )


def experts() -> tuple[Question, ...]:
    spec = SPECS["kimi_k3"]
    per_layer, awake = spec.expert_counts()
    dense = expert_bytes.bytes_per_token_rows(spec)[0][1]  # a dense model of K3's size, bf16: every weight read
    released = expert_bytes.release_weight_bytes_per_token(spec)
    return (
        Number(
            "awake",
            _(
                "Each K3 MoE layer has {n} experts. How many of them work on one token, shared ones included?"
            ).format(n=per_layer),
            answer=awake,
            why=_(
                "The router picks {routed} and {shared} shared experts always run: the {awake} lit squares of the "
                "MoE layer's grid."
            ).format(routed=spec.moe.top_k, shared=spec.moe.shared, awake=awake),
        ),
        Choice(
            "stored",
            _("Does a mixture of experts shrink what must be stored?"),
            (
                _("Yes: sleeping experts are not kept in memory"),
                _("Yes, by the share of experts that sleep"),
                _("No: every expert must be stored; only what one token reads shrinks"),
            ),
            answer=2,
            why=_(
                "“Parameters stored vs parameters used”: {total} stored, about {active} at work per token."
            ).format(total=format_params(spec.total_params()), active=format_params(spec.active_params())),
        ),
        Choice(
            "faster",
            _("Why should waking fewer experts make a token faster, one conversation at a time?"),
            (
                _("A token's speed is set by the bytes it reads, and it reads only the experts it wakes"),
                _("Fewer experts means fewer layers"),
                _("Sleeping experts lend their arithmetic to the awake ones"),
            ),
            answer=0,
            why=_(
                "A dense model of K3's size would read {dense} of weights per token; K3 as released reads "
                "{released} (the sentence under “Parameters stored vs parameters used”)."
            ).format(dense=format_bytes(dense), released=format_bytes(released)),
        ),
    )


def real_hybrid() -> tuple[Question, ...]:
    kinds = qwen35_mini.TEXT_CONFIG["layer_types"]
    boards = kinds.count("linear_attention")
    return (
        Number(
            "boards",
            _(
                "The miniature has {layers} layers, in Qwen3.5's order. How many of them keep a fixed board?"
            ).format(layers=len(kinds)),
            answer=boards,
            why=_(
                "The layer map: {boards} striped bars keep a board, {caches} plain one keeps a growing cache — "
                "Qwen3.5's three to one."
            ).format(boards=boards, caches=len(kinds) - boards),
        ),
        Choice(
            "growth",
            _("After 1,000 tokens instead of 10, what has happened to the memory?"),
            (
                _("Both grew 100 times"),
                _("The caches hold 100 times as many rows; the boards are the same size"),
                _("Neither changed: a hybrid keeps no growing memory"),
            ),
            answer=1,
            why=_(
                "In “Memory held”, the dashed line of the boards stays flat and the solid line of the caches climbs "
                "by the same bytes with every token."
            ),
        ),
        Choice(
            "fade",
            _("A head's fade α is close to 1 at a token. What does the head do there?"),
            (
                _("It forgets almost everything on its board"),
                _("It writes its new value hard"),
                _("It keeps its board: it forgets almost nothing"),
            ),
            answer=2,
            why=_(
                "In the map of fades and write strengths, a dark α means the head keeps its board; the write "
                "strength β is the other half of the picture."
            ),
        ),
    )
