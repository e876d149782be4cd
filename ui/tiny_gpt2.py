"""The tiny GPT-2 shared by the GPT-2 and KV-cache lessons: loaded once per process, and the reader's
prompt + sampling settings as one widget group (so both lessons offer the same controls)."""

from __future__ import annotations

import streamlit as st

from core.models.gpt2 import GPT2
from core.tokenizer import prepare_prompt
from ui.lesson import prompt_input

Settings = tuple[tuple[int, ...], int, float, int, int]  # prompt ids, new bytes, temperature, top-k, seed


@st.cache_resource(show_spinner="Loading the tiny GPT-2…")
def tiny_gpt2() -> GPT2:
    return GPT2.load()


def tiny_gpt2_or_stop() -> GPT2:
    """The model, or a clear message and an early stop when the checkpoint is missing."""
    try:
        return tiny_gpt2()
    except FileNotFoundError:
        st.error("The tiny GPT-2 checkpoint is missing. Train it with `python -m core.train gpt2`.")
        st.stop()


def generation_settings(prefix: str, default_prompt: str, block_size: int) -> Settings:
    """The reader's text (cut to the context window, with a note) and the sampling controls."""
    text = prompt_input(f"{prefix}_prompt", default_prompt)
    with st.expander("Generation settings", icon=":material/tune:"):
        c1, c2, c3, c4 = st.columns(4)
        n_steps = c1.slider("New bytes to write", 10, 200, 120, 10, key=f"{prefix}_n")
        temperature = c2.slider(
            "Temperature",
            0.0,
            1.5,
            0.0,
            0.1,
            key=f"{prefix}_temp",
            help="0 = always take the likeliest byte (greedy). Higher = bolder, more random choices.",
        )
        top_k = c3.slider(
            "Top-k (0 = all 256)",
            0,
            64,
            0,
            1,
            key=f"{prefix}_topk",
            help="Draw only among the k likeliest bytes. Ignored when temperature is 0.",
        )
        seed = c4.number_input(
            "Seed", 0, 9999, 0, key=f"{prefix}_seed", help="Same seed → same random draws."
        )
    prompt = prepare_prompt(text, block_size)
    if prompt.was_cut:
        st.warning(prompt.note())
    return (tuple(prompt.ids), int(n_steps), float(temperature), int(top_k), int(seed))
