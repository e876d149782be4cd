"""The MQAR sweep: accuracy against pairs, what it shows, how each model trained, what each keeps."""

from __future__ import annotations

import streamlit as st

from core.figures.recall import protocol_rows
from core.figures.style import label_of
from core.i18n import _, language
from core.mechanisms import get as mechanism
from core.mechanisms import rule_keys
from core.recall import results as rr
from core.recall.config import RecallModelConfig
from core.recall.task import DEFAULT_VOCAB
from core.specs import SPECS
from ui.charts import data_table, show_figure
from ui.course import lesson_ref
from ui.depth import engineer, in_depth
from ui.recall.results import curves_picture, sweep_picture

LAYERS = RecallModelConfig().n_layers  # every recall model of the sweep has this many layers


def _legend_words(results: dict) -> None:
    """One plain line for the legend's names that later lessons explain, with the lesson that does,
    and what the hybrid is (K3's own mix counted from its config)."""
    mixers = list(dict.fromkeys(c["mixer"] for c in results["cells"]))
    later = [m for m in mixers if m in rule_keys() and m != "linear"]
    by_lesson: dict[str, list[str]] = {}
    for m in later:
        by_lesson.setdefault(mechanism(m).lesson, []).append(label_of(m))
    k3 = SPECS["kimi_k3"]
    words = _("; ").join(
        _("{names} ({lesson})").format(names=_(" and ").join(names), lesson=lesson_ref(slug))
        for slug, names in by_lesson.items()
    )
    st.caption(
        _(
            "In the legend, softmax attention keeps a cache and linear attention is the board of {lesson}. "
        ).format(lesson=lesson_ref("linear_attention"))
        + (
            _(
                "The other boards are the rules the next lessons build — {words}: they add an erase step, "
                "then a fade. "
            ).format(words=words)
            if words
            else ""
        )
        + (
            _(
                "The hybrid stacks a KDA layer and an attention layer — a two-layer miniature of Kimi K3, which "
                "has about three KDA layers for each full-attention layer ({linear} + {full} in K3)."
            ).format(linear=k3.num_linear_layers, full=k3.num_full_attention_layers)
            if "hybrid" in mixers
            else ""
        )
    )


def _legend_in_short(results: dict) -> None:
    """Story: the legend's names in one plain line (the full version, with lessons, is Engineer's), and what
    one step along the log-scale pairs axis means, read from the pair counts."""
    pairs = results["sweep"]["pair_counts"]
    ratios = {b / a for a, b in zip(pairs[:-1], pairs[1:], strict=True)}
    step = (
        _("each tick to the right is {ratio:g}× as many pairs").format(ratio=ratios.pop())
        if len(ratios) == 1
        else _("equal distances to the right multiply the pairs by the same factor")
    )
    st.caption(
        _(
            "Each colour is one memory (the legend names it); higher is better, and a bar spans the model's "
            "worst and best training run. The pairs axis is a log scale: {step}. Softmax attention keeps a "
            "cache, linear attention is the board of {lesson}; the other boards and the hybrid come in later "
            "lessons."
        ).format(step=step, lesson=lesson_ref("linear_attention"))
    )


def _what_the_sweep_shows(results: dict) -> None:
    """Two readings of the chart, from the numbers: past a board's rows no rule keeps every pair, and
    whether the hybrid's attention layer caught up with attention in this budget."""
    pairs = max(results["sweep"]["pair_counts"])
    boards = [
        m for m in dict.fromkeys(c["mixer"] for c in results["cells"]) if m not in ("attention", "hybrid")
    ]
    for width in results["sweep"]["widths"]:
        if pairs <= width:
            continue
        scores = [rr.quote(results, m, width, pairs) for m in boards]
        attention = rr.quote(results, "attention", width, pairs)
        st.caption(
            _(
                "At width {width} the {pairs} pairs outnumber a board's {width} rows, so no rule can keep them "
                "all apart: the board models answer {low:.0%}–{high:.0%} of questions, attention "
                "{attention:.0%}."
            ).format(width=width, pairs=pairs, low=min(scores), high=max(scores), attention=attention)
        )
        if engineer():
            st.caption(_("Which rule is ahead there moves with the learning rate and the seed."))
    if not engineer():
        return
    width = max(results["sweep"]["widths"])
    hybrid, attention = (
        rr.quote(results, "hybrid", width, pairs),
        rr.quote(results, "attention", width, pairs),
    )
    if hybrid is not None and attention is not None and attention - hybrid > 0.05:
        st.caption(
            _(
                "The hybrid (a KDA layer, then an attention layer) answers {hybrid:.0%} at width {width} with "
                "{pairs} pairs, below attention's {attention:.0%}: in this "
                "training budget its one attention layer had not learned exact look-up — its loss was still "
                "well above attention's when training stopped (curves below)."
            ).format(hybrid=hybrid, width=width, pairs=pairs, attention=attention)
        )


def _training_details(results: dict, key: str) -> None:
    """The evidence behind each point, behind a toggle that starts closed (depth for whoever wants it):
    loss curves and the learning-rate table."""
    if not st.toggle(
        _("Show how each model trained (loss curves, learning rates)"), value=False, key=f"{key}_curves"
    ):
        return
    widths = results["sweep"]["widths"]
    width = st.radio(_("Curves for width"), widths, horizontal=True, key=f"{key}_curve_width")
    show_figure(curves_picture(width, language()), key=f"{key}_curves_chart")
    st.caption(
        _(
            "A *loss curve* shows how wrong the model still is (its loss) as training goes on; lower is better. "
            "One line per seed at each model's chosen learning rate. Loss is measured only where a key is "
            "asked again; the dashed line is the plateau — the loss of pure guessing, where training often sits "
            "flat before it learns: a run that stays near it is still guessing among the "
            "{values} values, and one that ends above it never learned the task. "
            "Runs stop early once their loss is near zero."
        ).format(values=DEFAULT_VOCAB.n_values)
    )
    rows = protocol_rows(results)
    data_table(rows, key=f"{key}_protocol_table", pin=2, width="stretch", height=36 * (len(rows) + 1) + 4)
    st.caption(
        _(
            "Each 'lr' column is the mean accuracy (over pair counts and seeds) at that learning rate; "
            "* marks a learning rate where a seed never left the starting plateau — those are "
            "never chosen while another rate learned."
        )
    )


def render_sweep(results: dict, key: str) -> None:
    """The sweep's chart, its readings, the training details and the memory table; `key` prefixes widget keys."""
    first_width = results["sweep"]["widths"][0]
    in_depth(
        _(
            "Small models were **trained** to do this very job (the *MQAR* task): read a list of key→value "
            "pairs, then answer each key again. They differ only in the layer that mixes tokens. The chart: the "
            "share of questions each answers right on lists it never saw; a width-{width} model's board is "
            "{width}×{width} numbers."
        ).format(width=first_width),
        _the_task_in_full(results),
    )
    if engineer():
        _how_it_was_trained(results)
    accuracy_chart, rows = sweep_picture(language())
    show_figure(accuracy_chart, key=f"{key}_accuracy_chart")
    _legend_in_short(results)
    if engineer():
        _legend_words(results)
        _honest_notes(results)
    _what_the_sweep_shows(results)
    if engineer():
        _training_details(results, key)
        _memory_table(results, rows, key)


def _the_task_in_full(results: dict) -> str:
    """Engineer's telling of the task (in place of Story's): the models, the paper, the pair counts and widths."""
    sweep = results["sweep"]
    pairs = sweep["pair_counts"]
    first_width = sweep["widths"][0]
    return _(
        "Each small model ({layers} layers) was **trained** to do one job: read a list of key→value pairs, "
        "then answer each key again later (the *MQAR* task from the Zoology paper). All models are "
        "the same except the layer that mixes tokens. Below: the share of questions each answers right "
        "on new lists it never saw, for {pairs} pairs, at {widths} widths. The *width* "
        "is also the size of each fixed board: a width-{width} board is "
        "{width}×{width} numbers."
    ).format(layers=LAYERS, pairs=", ".join(map(str, pairs)), widths=len(sweep["widths"]), width=first_width)


def _how_it_was_trained(results: dict) -> None:
    """Engineer: the training protocol in full (Zoology's, with this course's rates)."""
    sweep = results["sweep"]
    st.caption(
        _(
            "How it was trained (the *learning rate* is the size of each small correction training makes to the "
            "weights; Zoology's protocol, arXiv 2312.04927: sweep the learning rate, keep the best; "
            "the rates are this course's own): every model at {n_lrs} learning rates "
            "({lrs}) × {seeds} seeds (different "
            "random starts). Each point is the mean of the seeds at that model's best learning rate; the "
            "bar runs from the worst seed to the best."
        ).format(
            n_lrs=len(sweep["lrs"]),
            lrs=", ".join(f"{lr:g}" for lr in sweep["lrs"]),
            seeds=len(sweep["seeds"]),
        )
    )


def _honest_notes(results: dict) -> None:
    """Engineer: the models whose seeds stayed on the starting plateau at every learning rate."""
    stuck = [c for c in results["cells"] if c["plateau"]]
    for c in stuck:
        chosen = next(row for row in c["lr_table"] if row["lr"] == c["lr"])
        mixed = len(chosen["plateau_seeds"]) < len(chosen["seeds"])
        st.caption(
            (
                _(
                    "Honest note: {model} at width {width} — at every learning rate at least one "
                    "of its seeds stayed on the starting plateau (the flat stretch of the loss where a model "
                    "still only guesses among the values), so its points average a trained and an untrained "
                    "run: hence the long bars. That says nothing about what the mechanism can hold; its loss "
                    "curves are under *Show how each model trained*, below."
                )
                if mixed
                else _(
                    "Honest note: {model} at width {width} — at every learning rate at least one "
                    "of its seeds stayed on the starting plateau (the flat stretch of the loss where a model "
                    "still only guesses among the values). That says nothing about what the mechanism can "
                    "hold; its loss curves are under *Show how each model trained*, below."
                )
            ).format(model=label_of(c["mixer"]), width=c["d_model"])
        )


def _memory_table(results: dict, rows: list[dict], key: str) -> None:
    """Engineer: what each model keeps while reading, in bytes."""
    sweep = results["sweep"]
    st.markdown(
        _("**What each model keeps while reading** (float32; lists of {tokens} tokens)").format(
            tokens=sweep["seq_len"]
        )
    )
    data_table(rows, key=f"{key}_memory_table", pin=2, width="stretch", height=36 * (len(rows) + 1) + 4)
    st.caption(
        _(
            "Each model has {layers} layers, so a board model keeps {layers} boards ({layers} width × width "
            "grids; the hybrid one, beside its attention layer's cache), and the "
            "total adds them to the cache (cache per token × tokens) and to the short convolutions' last inputs. "
            "A fixed board stays the same size however long the text. Attention keeps a key and "
            "a value for every token, so its cache grows with the text."
        ).format(layers=LAYERS)
    )
