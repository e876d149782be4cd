"""Trained recall: the shipped MQAR sweep, and one trained model answering the reader's own pairs.

The collisions lesson shows it in full; the DeltaNet and forgetting lessons link to it. Everything drawn comes from
assets/recall/ (results.json and the checkpoints written by `python -m core.train recall`).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

from core.figures.recall import (
    accuracy_vs_pairs,
    answer_figure,
    board_figure,
    cache_figure,
    memory_rows,
)
from core.figures.style import label_of
from core.models.recall_models import ReaderRecall, RecallModel, memory_colour_range, recall_from_tokens
from core.recall import DEFAULT_VOCAB, parse_recall_text
from core.units import format_bytes
from ui.course import lesson_ref
from ui.lesson import link_to, show_figure

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "recall"
DEFAULT_TEXT = "a:1 b:2 c:3 d:4 e:5 ? b e a"
STUCK_BELOW = 0.25  # accuracy at the fewest pairs under which a run is called untrained


@st.cache_data(show_spinner=False)
def load_results() -> dict | None:
    path = ASSETS / "results.json"
    return json.loads(path.read_text()) if path.exists() else None


@st.cache_resource(show_spinner="Loading the trained model …")
def load_model(checkpoint: str):
    """One trained model per process, with its fixed colour range for boards and caches."""
    model = RecallModel.load(ASSETS / checkpoint)
    return model, model.meta, memory_colour_range(model)


@st.cache_resource(show_spinner=False)
def sweep_picture() -> tuple[go.Figure, list[dict]]:
    """The accuracy sweep and the memory table, built once per process (the results never change)."""
    results = load_results()
    return accuracy_vs_pairs(results), memory_rows(results)


@dataclass(frozen=True)
class Readout:
    """One trained model's answers to one list, with its pictures (built once per checkpoint and text)."""

    result: ReaderRecall  # answers, memories (one per layer), tokens
    memory_bytes: int
    zmax: float
    confidence: go.Figure
    memory_figures: tuple[go.Figure, ...]


@st.cache_resource(show_spinner=False, max_entries=64)
def read_list(checkpoint: str, text: str) -> Readout:
    """Run the trained model on the reader's list once; reruns and other readers reuse it."""
    parsed = parse_recall_text(text)
    model, _, zmax = load_model(checkpoint)
    result = recall_from_tokens(model, parsed.tokens, parsed.query_positions, parsed.answers)
    figures = []
    for memory in result.memories:
        label = label_of(memory.kind)
        if memory.state is not None:
            fig = board_figure(memory.state, zmax, f"layer {memory.index + 1} ({label}): fixed board")
        else:
            fig = cache_figure(
                memory.keys,
                result.tokens,
                zmax,
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


def trained_recall_pointer(mixers: tuple[str, ...], lead: str) -> None:
    """One sentence of shipped MQAR results for `mixers`, and a link to the full panel (collisions lesson)."""
    results = load_results()
    if results is None:
        return
    pairs = max(results["sweep"]["pair_counts"])
    width = min(results["sweep"]["widths"])
    scores = {
        (run["mixer"], run["d_model"]): run["accuracy"][str(pairs)]
        for run in results["runs"]
        if run["mixer"] in mixers
    }
    parts = [
        f"{label_of(mixer)} {scores[(mixer, width)]:.0%}" for mixer in mixers if (mixer, width) in scores
    ]
    st.markdown(
        f"**{lead}** Small models trained on associative recall (width {width}, {pairs} pairs, "
        f"questions answered right): {', '.join(parts)}."
    )
    link_to(
        "collisions",
        f"Trained models: see and question them in {lesson_ref('collisions')}",  # short: fits a phone
    )


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
        f"Each small model (two layers) was **trained** to do one job: read a list of key→value pairs, "
        f"then answer each key again later (the *MQAR* task from the Zoology paper). All models are "
        f"the same except the layer that mixes tokens. Below: the share of questions each answers right "
        f"on new lists it never saw, for {', '.join(map(str, pairs))} pairs, at two widths. The *width* "
        f"is also the size of each fixed board: a width-{sweep['widths'][0]} board is "
        f"{sweep['widths'][0]}×{sweep['widths'][0]} numbers."
    )
    accuracy_chart, rows = sweep_picture()
    show_figure(accuracy_chart, key=f"{key}_accuracy_chart")
    stuck = [r for r in results["runs"] if r["accuracy"][str(min(pairs))] < STUCK_BELOW]
    if stuck:
        names = ", ".join(f"{label_of(r['mixer'])} at width {r['d_model']}" for r in stuck)
        st.caption(
            f"Honest note: {names} never got going in the shared training budget (below "
            f"{STUCK_BELOW:.0%} right even with {min(pairs)} pairs): they stayed on the starting "
            "plateau, which says nothing about what the mechanism can hold. See assets/recall/MODEL_CARD.md."
        )
    st.markdown(f"**What each model keeps while reading** (float32; lists of {sweep['seq_len']} tokens)")
    st.dataframe(
        rows, hide_index=True, key=f"{key}_memory_table", width="stretch", height=36 * (len(rows) + 1) + 4
    )
    st.caption(
        "Each model has two layers, so a board model keeps two boards (two width × width grids), and the "
        "total adds them to the cache (cache per token × tokens) and to the short convolutions' last inputs. "
        "A fixed board stays the same size however long the text. Attention keeps a key and "
        "a value for every token, so its cache grows with the text."
    )

    st.markdown("#### Ask a trained model yourself")
    runs = {(r["mixer"], r["d_model"]): r for r in results["runs"]}
    mixers = list(dict.fromkeys(r["mixer"] for r in results["runs"]))
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
        help="Keys are single letters a–z or A–Z (case matters); values are whole numbers 0–99. "
        "Example: a:1 b:2 c:3 ? b a. Write a key twice and the later value is the right answer.",
    )
    fill_cols = st.columns([2, 1], vertical_alignment="bottom")
    fill_cols[0].slider("Pairs for a random list", 1, max(pairs), 8, key=f"{key}_n_random")
    fill_cols[1].button("Fill with random pairs", key=f"{key}_fill", on_click=_fill_random, args=(key,))

    try:
        parsed = parse_recall_text(text)
    except ValueError as err:
        st.error(f"I could not read that: {err}.")
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
    st.dataframe(
        [
            {
                "asked": a.key,
                "right answer": a.expected if a.expected is not None else "(never written)",
                "model says": a.predicted,
                "model's confidence": f"{a.probability:.2f}",
                "verdict": "—" if a.expected is None else ("right" if a.predicted == a.expected else "wrong"),
            }
            for a in result.answers
        ],
        hide_index=True,
        key=f"{key}_answers",
    )
    show_figure(readout.confidence, key=f"{key}_confidence")

    st.markdown("**What the model holds after reading your list**")
    cols = st.columns(len(result.memories))
    for col, memory, fig in zip(cols, result.memories, readout.memory_figures, strict=True):
        with col:
            show_figure(fig, key=f"{key}_memory_{memory.index}")
    st.caption(
        f"Colours use one fixed range for this model (±{zmax:.2f}), whatever you type, so a fuller board "
        "looks fuller. A board keeps its size; a cache gains a row for every token."
    )
