"""Ask a trained recall model yourself: the reader's pairs (or random ones), its answers, and what it holds."""

from __future__ import annotations

import random

import streamlit as st

from core.figures.style import label_of
from core.i18n import _
from core.recall.task import DEFAULT_VOCAB, parse_recall_text
from core.units import format_bytes
from ui.charts import data_table, show_figure
from ui.recall.readout import ASSETS, read_list
from ui.text import plain

DEFAULT_TEXT = "a:1 b:2 c:3 d:4 e:5 ? b e a"


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


def render_ask(results: dict, key: str) -> None:
    """Pick a trained model, type a list, see its answers and its memories; `key` prefixes widget keys."""
    sweep = results["sweep"]
    pairs = sweep["pair_counts"]
    st.markdown(_("#### Ask a trained model yourself"))
    runs = {(c["mixer"], c["d_model"]): c for c in results["cells"]}
    mixers = list(dict.fromkeys(c["mixer"] for c in results["cells"]))
    left, right = st.columns(2)
    mixer = left.selectbox(
        _("Model"),
        mixers,
        format_func=label_of,
        key=f"{key}_mixer",
        index=mixers.index("linear") if "linear" in mixers else 0,
    )
    width = right.radio(_("Width"), sweep["widths"], horizontal=True, key=f"{key}_width")
    run = runs.get((mixer, width))
    if run is None or not (ASSETS / run["checkpoint"]).exists():
        st.warning(
            _("No trained checkpoint for {model} at width {width}.").format(
                model=label_of(mixer), width=width
            )
        )
        return

    st.session_state.setdefault(f"{key}_text", DEFAULT_TEXT)
    text = st.text_input(
        _("Your pairs, then '?', then the keys to ask for"),
        max_chars=600,
        key=f"{key}_text",
        help=_(
            "Keys are single letters a–z or A–Z (case matters); values are whole numbers "
            "0–{largest}. "
            "Example: a:1 b:2 c:3 ? b a. Write a key twice and the later value is the right answer."
        ).format(largest=DEFAULT_VOCAB.n_values - 1),
    )
    fill_cols = st.columns([2, 1], vertical_alignment="bottom")
    fill_cols[0].slider(_("Pairs for a random list"), 1, max(pairs), 8, key=f"{key}_n_random")
    fill_cols[1].button(_("Fill with random pairs"), key=f"{key}_fill", on_click=_fill_random, args=(key,))

    try:
        parsed = parse_recall_text(text)
    except ValueError as err:
        # the message quotes what the reader typed
        st.error(_("I could not read that: {reason}.").format(reason=plain(err)))
        return
    with st.spinner(_("Loading the trained model …")):
        readout = read_list(run["checkpoint"], text)
    result, zmax = readout.result, readout.zmax

    known = [a for a in result.answers if a.expected is not None]
    right_count = sum(a.predicted == a.expected for a in known)
    m1, m2, m3 = st.columns(3)
    m1.metric(_("pairs written"), len(parsed.pairs))
    m2.metric(
        _("answers right"),
        _("{right} of {total}").format(right=right_count, total=len(known)) if known else "—",
    )
    m3.metric(
        _("memory held now"),
        format_bytes(readout.memory_bytes),
        help=_("Fixed boards + this text's cache (attention layers) + the short convolutions' window."),
    )
    data_table(
        [
            {
                _("asked"): a.key,
                _("correct"): a.expected if a.expected is not None else _("(never written)"),
                _("model says"): a.predicted,
                _("confidence"): f"{a.probability:.2f}",
                _("verdict"): "—"
                if a.expected is None
                else (_("right") if a.predicted == a.expected else _("wrong")),
            }
            for a in result.answers
        ],
        key=f"{key}_answers",
    )
    show_figure(readout.confidence, key=f"{key}_confidence")

    st.markdown(_("**What the model holds after reading your list**"))
    cols = st.columns(len(result.memories))
    for col, memory, fig in zip(cols, result.memories, readout.memory_figures, strict=True):
        with col:
            show_figure(fig, key=f"{key}_memory_{memory.index}")
    st.caption(
        _(
            "Each layer's colours use one fixed range ({ranges}), whatever you type, so a fuller board looks "
            "fuller; compare colours within a layer, not across layers. A board keeps its size; a cache gains "
            "a row for every token."
        ).format(
            ranges=_(", ").join(
                _("layer {layer}: ±{z:.2f}").format(layer=i + 1, z=z) for i, z in enumerate(zmax)
            )
        )
    )
