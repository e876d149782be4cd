"""Trained recall: the shipped MQAR sweep, and one trained model answering the reader's own pairs.

The collisions lesson shows it in full; the DeltaNet and forgetting lessons link to it. Everything drawn comes from
assets/recall/ (results.json and the checkpoints written by `python -m core.train recall`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import plotly.graph_objects as go
import streamlit as st

from core import recall_results as rr
from core.figures.recall import (
    accuracy_vs_pairs,
    answer_figure,
    board_figure,
    cache_figure,
    memory_rows,
    protocol_rows,
    training_curves,
)
from core.figures.style import label_of
from core.mechanisms import get as mechanism
from core.mechanisms import rule_keys
from core.models.recall_models import (
    ReaderRecall,
    RecallModel,
    RecallModelConfig,
    memory_colour_ranges,
    recall_from_tokens,
)
from core.recall import DEFAULT_VOCAB, parse_recall_text
from core.specs import SPECS
from core.units import format_bytes
from ui.course import lesson_ref
from ui.errors import log
from ui.lesson import data_table, link_to, show_figure
from ui.text import plain

ASSETS = rr.RESULTS.parent
DEFAULT_TEXT = "a:1 b:2 c:3 d:4 e:5 ? b e a"


@st.cache_data(show_spinner=False)
def load_results() -> dict | None:
    """The shipped results, checked against the schema the panel reads (None if absent or stale)."""
    results = rr.load()
    if results is None:
        return None
    try:
        rr.check(results)
    except (KeyError, ValueError) as err:
        log.warning("assets/recall/results.json is not usable: %s", err)  # the server log, not the reader
        return None
    return results


@st.cache_resource(show_spinner="Loading the trained model …")
def load_model(checkpoint: str):
    """One trained model per process, with its fixed colour range per layer for boards and caches."""
    model = RecallModel.load(ASSETS / checkpoint)
    return model, model.meta, memory_colour_ranges(model)


@st.cache_resource(show_spinner=False)
def sweep_picture() -> tuple[go.Figure, list[dict]]:
    """The accuracy sweep and the memory table, built once per process (the results never change)."""
    results = load_results()
    return accuracy_vs_pairs(results), memory_rows(results)


LAYERS = RecallModelConfig().n_layers  # every recall model of the sweep has this many layers


@dataclass(frozen=True)
class Readout:
    """One trained model's answers to one list, with its pictures (built once per checkpoint and text)."""

    result: ReaderRecall  # answers, memories (one per layer), tokens
    memory_bytes: int
    zmax: tuple[float, ...]  # per layer
    confidence: go.Figure
    memory_figures: tuple[go.Figure, ...]


@st.cache_resource(show_spinner=False, max_entries=64)
def read_list(checkpoint: str, text: str) -> Readout:
    """Run the trained model on the reader's list once; reruns and other readers reuse it."""
    parsed = parse_recall_text(text)
    model, _, zmax = load_model(checkpoint)
    result = recall_from_tokens(model, parsed.tokens, parsed.query_positions, parsed.answers)
    figures = []
    for i, memory in enumerate(result.memories):
        label = label_of(memory.kind)
        if memory.state is not None:
            fig = board_figure(memory.state, zmax[i], f"layer {memory.index + 1} ({label}): fixed board")
        else:
            fig = cache_figure(
                memory.keys,
                result.tokens,
                zmax[i],
                f"layer {memory.index + 1} ({label}): key cache, a row per token",
            )
        figures.append(fig)
    confidence = answer_figure(
        [a.key for a in result.answers], [a.expected_probability for a in result.answers]
    )
    return Readout(result, model.memory_bytes(len(parsed.tokens)), zmax, confidence, tuple(figures))


def _random_pairs_text(n_pairs: int, seed: int) -> str:
    rng = random.Random(seed)
    keys = rng.sample([DEFAULT_VOCAB.key_name(i) for i in range(DEFAULT_VOCAB.n_keys)], n_pairs)
    values = rng.sample(range(DEFAULT_VOCAB.n_values), n_pairs)
    asked = rng.sample(keys, n_pairs)
    return " ".join(f"{k}:{v}" for k, v in zip(keys, values, strict=True)) + " ? " + " ".join(asked)


def _fill_random(key: str) -> None:
    n = int(st.session_state[f"{key}_n_random"])
    st.session_state[f"{key}_seed"] = st.session_state.get(f"{key}_seed", 0) + 1
    st.session_state[f"{key}_text"] = _random_pairs_text(n, st.session_state[f"{key}_seed"])


def trained_recall_pointer(mixers: tuple[str, ...], lead: str, versus: tuple[str, str] | None = None) -> None:
    """One sentence of shipped MQAR results for `mixers` (the widest models, most pairs), an optional
    verdict on `versus` = (a, b) read from the seeds' spread, and a link to the full panel."""
    results = load_results()
    if results is None:
        return
    pairs = max(results["sweep"]["pair_counts"])
    width = max(results["sweep"]["widths"])
    parts = [
        f"{label_of(mixer)} {score:.0%}"
        for mixer in mixers
        if (score := rr.quote(results, mixer, width, pairs)) is not None
    ]
    seeds = len(results["sweep"]["seeds"])
    text = (
        f"**{lead}** Small models trained on associative recall (width {width}, {pairs} pairs, "
        f"questions answered right, mean of {seeds} training runs): {', '.join(parts)}."
    )
    if versus is not None:
        a, b = versus
        verdict = rr.compare(results, a, b, width, pairs)
        text += {
            "ahead": f" {label_of(a)} is ahead of {label_of(b)}: its worst run beats the other's best.",
            "behind": f" {label_of(a)} is behind {label_of(b)}: its best run is below the other's worst.",
            "tie": f" {label_of(a)} and {label_of(b)} are level: their runs overlap, so any difference "
            f"here is no bigger than a different random start makes ({seeds} runs each).",
        }[verdict]
    st.markdown(text)
    link_to(
        "collisions",
        f"Trained models: see and question them in {lesson_ref('collisions')}",  # short: fits a phone
    )


def _legend_words(results: dict) -> None:
    """One plain line for the legend's names that later lessons explain, with the lesson that does,
    and what the hybrid is (K3's own mix counted from its config)."""
    mixers = list(dict.fromkeys(c["mixer"] for c in results["cells"]))
    later = [m for m in mixers if m in rule_keys() and m != "linear"]
    by_lesson: dict[str, list[str]] = {}
    for m in later:
        by_lesson.setdefault(mechanism(m).lesson, []).append(label_of(m))
    k3 = SPECS["kimi_k3"]
    words = "; ".join(f"{' and '.join(names)} ({lesson_ref(slug)})" for slug, names in by_lesson.items())
    st.caption(
        "In the legend, softmax attention keeps a cache and linear attention is the board of "
        f"{lesson_ref('linear_attention')}. "
        + (
            f"The other boards are the rules the next lessons build — {words}: they add an erase step, then a fade. "
            if words
            else ""
        )
        + (
            "The hybrid stacks a KDA layer and an attention layer — a two-layer miniature of Kimi K3, which "
            f"has about three KDA layers for each full-attention layer ({k3.num_linear_layers} + "
            f"{k3.num_full_attention_layers} in K3)."
            if "hybrid" in mixers
            else ""
        )
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
            f"At width {width} the {pairs} pairs outnumber a board's {width} rows, so no rule can keep them all "
            f"apart: the board models answer {min(scores):.0%}–{max(scores):.0%} of questions, attention "
            f"{attention:.0%}. Which rule is ahead there moves with the learning rate and the seed."
        )
    width = max(results["sweep"]["widths"])
    hybrid, attention = (
        rr.quote(results, "hybrid", width, pairs),
        rr.quote(results, "attention", width, pairs),
    )
    if hybrid is not None and attention is not None and attention - hybrid > 0.05:
        st.caption(
            f"The hybrid (a KDA layer, then an attention layer) answers {hybrid:.0%} at width {width} with "
            f"{pairs} pairs, below attention's {attention:.0%}: in this "
            "training budget its one attention layer had not learned exact look-up — its loss was still "
            "well above attention's when training stopped (curves below)."
        )


def _training_details(results: dict, key: str) -> None:
    """The evidence behind each point, behind a toggle that starts closed (depth for whoever wants it):
    loss curves and the learning-rate table."""
    if not st.toggle(
        "Show how each model trained (loss curves, learning rates)", value=False, key=f"{key}_curves"
    ):
        return
    widths = results["sweep"]["widths"]
    width = st.radio("Curves for width", widths, horizontal=True, key=f"{key}_curve_width")
    show_figure(curves_picture(width), key=f"{key}_curves_chart")
    st.caption(
        "A *loss curve* shows how wrong the model still is (its loss) as training goes on; lower is better. "
        "One line per seed at each model's chosen learning rate. Loss is measured only where a key is "
        "asked again; the dashed line is the plateau — the loss of pure guessing, where training often sits "
        "flat before it learns: a run that stays near it is still guessing among the "
        f"{DEFAULT_VOCAB.n_values} values, and one that ends above it never learned the task. "
        "Runs stop early once their loss is near zero."
    )
    rows = protocol_rows(results)
    data_table(rows, key=f"{key}_protocol_table", pin=2, width="stretch", height=36 * (len(rows) + 1) + 4)
    st.caption(
        "Each 'lr' column is the mean accuracy (over pair counts and seeds) at that learning rate; "
        "* marks a learning rate where a seed never left the starting plateau — those are "
        "never chosen while another rate learned."
    )


@st.cache_resource(show_spinner=False, max_entries=4)
def curves_picture(width: int) -> go.Figure:
    """The training curves of one width, built once per process (the results never change)."""
    return training_curves(load_results(), width)


def render_trained_recall(key: str) -> None:
    """The whole panel (the caller gives its heading); `key` prefixes every widget key."""
    results = load_results()
    if results is None:
        st.warning(
            "The trained-recall results are missing (assets/recall/results.json). Run `python -m core.train recall`."
        )
        return
    sweep = results["sweep"]
    pairs = sweep["pair_counts"]
    st.markdown(
        f"Each small model ({LAYERS} layers) was **trained** to do one job: read a list of key→value pairs, "
        f"then answer each key again later (the *MQAR* task from the Zoology paper). All models are "
        f"the same except the layer that mixes tokens. Below: the share of questions each answers right "
        f"on new lists it never saw, for {', '.join(map(str, pairs))} pairs, at {len(sweep['widths'])} widths. "
        "The *width* "
        f"is also the size of each fixed board: a width-{sweep['widths'][0]} board is "
        f"{sweep['widths'][0]}×{sweep['widths'][0]} numbers."
    )
    st.caption(
        "How it was trained (the *learning rate* is the size of each small correction training makes to the "
        f"weights; Zoology's protocol, arXiv 2312.04927: sweep the learning rate, keep the best; "
        f"the rates are this course's own): every model at {len(sweep['lrs'])} learning rates "
        f"({', '.join(f'{lr:g}' for lr in sweep['lrs'])}) × {len(sweep['seeds'])} seeds (different "
        "random starts). Each point is the mean of the seeds at that model's best learning rate; the "
        "bar runs from the worst seed to the best."
    )
    accuracy_chart, rows = sweep_picture()
    show_figure(accuracy_chart, key=f"{key}_accuracy_chart")
    _legend_words(results)
    stuck = [c for c in results["cells"] if c["plateau"]]
    for c in stuck:
        chosen = next(row for row in c["lr_table"] if row["lr"] == c["lr"])
        mixed = len(chosen["plateau_seeds"]) < len(chosen["seeds"])
        st.caption(
            f"Honest note: {label_of(c['mixer'])} at width {c['d_model']} — at every learning rate at least one "
            "of its seeds stayed on the starting plateau (the flat stretch of the loss where a model still only "
            "guesses among the values)"
            + (
                ", so its points average a trained and an untrained run: hence the long bars."
                if mixed
                else "."
            )
            + " That says nothing about what the mechanism can hold; its loss curves are under "
            "*Show how each model trained*, below."
        )
    _what_the_sweep_shows(results)
    _training_details(results, key)
    st.markdown(f"**What each model keeps while reading** (float32; lists of {sweep['seq_len']} tokens)")
    data_table(rows, key=f"{key}_memory_table", pin=2, width="stretch", height=36 * (len(rows) + 1) + 4)
    st.caption(
        f"Each model has {LAYERS} layers, so a board model keeps {LAYERS} boards ({LAYERS} width × width grids; the "
        "hybrid one, beside its attention layer's cache), and the "
        "total adds them to the cache (cache per token × tokens) and to the short convolutions' last inputs. "
        "A fixed board stays the same size however long the text. Attention keeps a key and "
        "a value for every token, so its cache grows with the text."
    )

    st.markdown("#### Ask a trained model yourself")
    runs = {(c["mixer"], c["d_model"]): c for c in results["cells"]}
    mixers = list(dict.fromkeys(c["mixer"] for c in results["cells"]))
    left, right = st.columns(2)
    mixer = left.selectbox(
        "Model",
        mixers,
        format_func=label_of,
        key=f"{key}_mixer",
        index=mixers.index("linear") if "linear" in mixers else 0,
    )
    width = right.radio("Width", sweep["widths"], horizontal=True, key=f"{key}_width")
    run = runs.get((mixer, width))
    if run is None or not (ASSETS / run["checkpoint"]).exists():
        st.warning(f"No trained checkpoint for {label_of(mixer)} at width {width}.")
        return

    st.session_state.setdefault(f"{key}_text", DEFAULT_TEXT)
    text = st.text_input(
        "Your pairs, then '?', then the keys to ask for",
        max_chars=600,
        key=f"{key}_text",
        help="Keys are single letters a–z or A–Z (case matters); values are whole numbers "
        f"0–{DEFAULT_VOCAB.n_values - 1}. "
        "Example: a:1 b:2 c:3 ? b a. Write a key twice and the later value is the right answer.",
    )
    fill_cols = st.columns([2, 1], vertical_alignment="bottom")
    fill_cols[0].slider("Pairs for a random list", 1, max(pairs), 8, key=f"{key}_n_random")
    fill_cols[1].button("Fill with random pairs", key=f"{key}_fill", on_click=_fill_random, args=(key,))

    try:
        parsed = parse_recall_text(text)
    except ValueError as err:
        st.error(f"I could not read that: {plain(err)}.")  # the message quotes what the reader typed
        return
    readout = read_list(run["checkpoint"], text)
    result, zmax = readout.result, readout.zmax

    known = [a for a in result.answers if a.expected is not None]
    right_count = sum(a.predicted == a.expected for a in known)
    m1, m2, m3 = st.columns(3)
    m1.metric("pairs written", len(parsed.pairs))
    m2.metric("answers right", f"{right_count} of {len(known)}" if known else "—")
    m3.metric(
        "memory held now",
        format_bytes(readout.memory_bytes),
        help="Fixed boards + this text's cache (attention layers) + the short convolutions' window.",
    )
    data_table(
        [
            {
                "asked": a.key,
                "correct": a.expected if a.expected is not None else "(never written)",
                "model says": a.predicted,
                "confidence": f"{a.probability:.2f}",
                "verdict": "—" if a.expected is None else ("right" if a.predicted == a.expected else "wrong"),
            }
            for a in result.answers
        ],
        key=f"{key}_answers",
    )
    show_figure(readout.confidence, key=f"{key}_confidence")

    st.markdown("**What the model holds after reading your list**")
    cols = st.columns(len(result.memories))
    for col, memory, fig in zip(cols, result.memories, readout.memory_figures, strict=True):
        with col:
            show_figure(fig, key=f"{key}_memory_{memory.index}")
    st.caption(
        "Each layer's colours use one fixed range ("
        + ", ".join(f"layer {i + 1}: ±{z:.2f}" for i, z in enumerate(zmax))
        + "), whatever you type, so a fuller board looks fuller; compare colours within a layer, not across "
        "layers. A board keeps its size; a cache gains a row for every token."
    )
