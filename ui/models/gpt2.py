"""The GPT-2 of "GPT-2" and "KV cache": the shipped tiny byte model, or released weights when here.

The reader picks with one switch (ui/models/switch.py); each model is loaded once per process
(`st.cache_resource`). Released weights are found on disk without any network call
(core/models/fetch.py); when GPT-2 small is missing the switch still offers it, and picking it gives
the course's one Download offer (ui/models/offer.py). A folder in COURSE_GPT2_PATH is offered too
(how the tests point the pages at a tiny random checkpoint).
Also the prompt + sampling widget group both lessons share.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from core.figures.figure_dict import as_dict
from core.generation import Sampling
from core.i18n import N_, _, language
from core.models import fetch
from core.models.gpt2 import GPT2
from core.models.gpt2_cache import CacheSize, cache_size
from core.models.hf_gpt2 import LoadedGPT2, catalog_spec, load_gpt2
from core.models.hf_tokenizer import BPETokenizer, ByteTokenizer, CheckpointError
from core.units import format_bytes
from ui.charts import ReadyChart, ready_chart, show_figure
from ui.depth import engineer
from ui.lesson import prompt_input
from ui.models.offer import how_to_get
from ui.models.switch import model_switch

TINY = "tiny"
MISSING = "missing:gpt2"  # the switch's entry for GPT-2 small when its weights are not here


@dataclass(frozen=True)
class RunSettings:
    """What a run depends on, the key it is computed and cached under (`run_key` makes it)."""

    model: str  # LiveGPT2.key: TINY or the checkpoint folder
    prompt: tuple[int, ...]  # the prompt's token ids, cut to the context window
    new_tokens: int
    temperature: float
    top_k: int  # 0 = all
    seed: int

    @property
    def sampling(self) -> Sampling:
        return Sampling(temperature=self.temperature, top_k=self.top_k or None, seed=self.seed)


@dataclass(frozen=True)
class LiveGPT2:
    """The model a lesson runs, with its tokenizer and how to run it."""

    key: str  # TINY or the checkpoint folder (the cache key of everything computed from it)
    label: str
    model: GPT2
    tokenizer: ByteTokenizer | BPETokenizer
    real: bool

    @property
    def unit(self) -> str:
        """ "byte" or "token", the English key figures and checks read (`unit_word` is what a reader sees)."""
        return self.tokenizer.unit

    @property
    def unit_word(self) -> str:
        """The unit in the reader's language: "byte" / "バイト"."""
        return _(self.tokenizer.unit)

    @property
    def run_options(self) -> dict:
        """run_generation options: the tiny model runs on one thread; a released model leaves
        torch's thread count as the process set it (the app sets 1 thread per server process at
        start-up, core/threads.py). Each step is timed once: a slider move is answered in one run
        of the model, not three, and the page shows every step's own time beside the running
        median, so the spread a busy machine adds is seen rather than hidden by a fastest-of-k."""
        return {"threads": None if self.real else 1, "timing_repeats": 1}

    def cache_size(self) -> CacheSize:
        return cache_size(self.model, catalog_spec(self.model.config) if self.real else None)


TINY_LABEL = N_("tiny byte model (shipped)")


_LOADED: set[str] = set()  # what this process has loaded: no spinner for it again


@st.cache_resource(show_spinner=False)
def _tiny_gpt2() -> GPT2:
    return GPT2.load()


@st.cache_resource(show_spinner=False, max_entries=2)
def _released_gpt2(folder: str) -> LoadedGPT2:
    return load_gpt2(folder)


def _loaded(key: str, load, words: str):
    """`load()` under a spinner in the reader's language the first time only: a later call is a cache
    hit, and may run inside a cached computation, where an element would be recorded and replayed."""
    if key in _LOADED:
        return load()
    with st.spinner(words):
        model = load()
    _LOADED.add(key)
    return model


def tiny_gpt2() -> GPT2:
    """The shipped tiny GPT-2, loaded once per process."""
    return _loaded(TINY, _tiny_gpt2, _("Loading the tiny GPT-2…"))


def released_gpt2(folder: str) -> LoadedGPT2:
    """A released checkpoint (raises CheckpointError, which is not cached, for a bad folder)."""
    return _loaded(folder, lambda: _released_gpt2(folder), _("Loading GPT-2 weights…"))


@st.cache_data(ttl=30, show_spinner=False)
def _found_checkpoints(lang: str) -> list[fetch.Found]:
    return fetch.local_checkpoints()


def found_checkpoints() -> list[fetch.Found]:
    """Checkpoints on this machine (no network); re-scanned every 30 s and after a download (their
    labels are words, so each language keeps its own list)."""
    return _found_checkpoints(language())


found_checkpoints.clear = _found_checkpoints.clear  # after a download: scan again


def live_model(key: str) -> LiveGPT2:
    """The model for a key from `choose_model` (what cached computations are keyed by)."""
    if key == TINY:
        return LiveGPT2(TINY, _(TINY_LABEL), tiny_gpt2(), ByteTokenizer(), real=False)
    loaded = released_gpt2(key)
    return LiveGPT2(key, loaded.name, loaded.model, loaded.tokenizer, real=True)


def _tiny_or_stop() -> LiveGPT2:
    try:
        return live_model(TINY)
    except FileNotFoundError:
        st.error(_("The tiny GPT-2 checkpoint is missing. Train it with `python -m core.train gpt2`."))
        st.stop()


def choose_model(prefix: str) -> LiveGPT2:
    """The model switch; returns the chosen model, or the tiny one with a note when it cannot run."""
    options = {TINY: _(TINY_LABEL)}
    found = found_checkpoints()
    options |= {str(f.folder): f.label for f in found}
    if not any(f.key == "gpt2" for f in found):
        options[MISSING] = _("GPT-2 small, real weights (not here yet)")
    choice = model_switch(
        prefix,
        _("GPT-2 to run"),
        options,
        help=_(
            "The tiny model ships with the course and reads bytes. The released GPT-2 (OpenAI, 2019) "
            "reads BPE tokens; its weights come from huggingface.co once, then stay on this machine."
        ),
    )
    if choice == TINY:
        return _tiny_or_stop()
    if choice == MISSING:
        how_to_get(
            "gpt2",
            prefix,
            found_checkpoints.clear,
            fallback=_("the tiny byte model that ships with the course"),
        )
        return _tiny_or_stop()
    try:
        live = live_model(choice)
    except CheckpointError as error:
        st.error(
            _("This checkpoint cannot be used: {error}. The page runs the tiny byte model instead.").format(
                error=error
            )
        )
        return _tiny_or_stop()
    return LiveGPT2(live.key, options[choice], live.model, live.tokenizer, real=True)


def generation_settings(prefix: str, default_prompt: str, live: LiveGPT2) -> RunSettings:
    """The reader's text (cut to the context window, with a note) and the sampling controls."""
    text = prompt_input(f"{prefix}_prompt", default_prompt)
    unit = live.unit_word
    with st.expander(_("Generation settings"), icon=":material/tune:"):
        c1, c2, c3, c4 = st.columns(4)
        # A released model is ~150× the tiny one's work per token: a shorter default run, own key.
        n_key, n_default = (f"{prefix}_n_real", 40) if live.real else (f"{prefix}_n", 120)
        n_steps = c1.slider(_("New {unit}s to write").format(unit=unit), 10, 200, n_default, 10, key=n_key)
        temperature = c2.slider(
            _("Temperature"),
            0.0,
            1.5,
            0.0,
            0.1,
            key=f"{prefix}_temp",
            help=_(
                "0 = always take the likeliest {unit} (greedy). Higher = bolder, more random choices."
            ).format(unit=unit),
        )
        top_k = c3.slider(
            _("Top-k (0 = all)"),
            0,
            64,
            0,
            1,
            key=f"{prefix}_topk",
            help=_("Draw only among the k likeliest {unit}s. Ignored when temperature is 0.").format(
                unit=unit
            ),
        )
        seed = c4.number_input(
            _("Seed"), 0, 9999, 0, key=f"{prefix}_seed", help=_("Same seed → same random draws.")
        )
    prompt = live.tokenizer.prepare(text, live.model.config.block_size)
    if prompt.was_cut:
        st.warning(prompt.note())
    return run_key(live.key, tuple(prompt.ids), int(n_steps), float(temperature), int(top_k), int(seed))


def run_key(
    model: str, prompt: tuple[int, ...], n: int, temperature: float, top_k: int, seed: int
) -> RunSettings:
    """The settings a run depends on, as the key it is computed and cached under: at temperature 0
    the model always takes its likeliest token (`core.generation.choose_token`), so top-k and the
    seed change nothing and are keyed as 0 — moving them then reuses the run already made."""
    if temperature == 0:
        top_k, seed = 0, 0
    return RunSettings(model, prompt, n, temperature, top_k, seed)


def describe_real(live: LiveGPT2) -> None:
    """The paragraph that introduces a checkpoint (the GPT-2 page shows it instead of the tiny one's). It
    says 'weights from a checkpoint folder', not 'released', since COURSE_GPT2_PATH may name any."""
    cfg = live.model.config
    st.markdown(
        _(
            "Below is **{label}**: GPT-2 weights from a checkpoint folder (the saved files of a trained model), "
            "loaded into this course's own GPT-2 code, the same code as the tiny model: {layers} "
            "*blocks* (repeated units: in each, every token looks back at the earlier ones, then a small network "
            "reworks what it found), {params:,} numbers (*parameters*). It reads **tokens** from a byte-level "
            "BPE vocabulary of {vocab:,}: a common English word is one token, a rarer word "
            "several, and an emoji or a Japanese character may be split into pieces of its bytes. It can look "
            "at most {window} tokens back: that is its *context window*. When the text fills it, "
            "generation simply stops (no sliding). {where}"
        ).format(
            label=live.label,
            layers=cfg.n_layer,
            params=live.model.num_params(),
            vocab=live.tokenizer.vocab_size,
            window=cfg.block_size,
            where=_where_it_runs(live),
        )
    )
    if engineer():
        st.caption(
            _("The folder is in Hugging Face's format; the code that runs it is `core/models/gpt2.py`.")
        )


def _where_it_runs(live: LiveGPT2) -> str:
    """Where the steps are computed, as the app really does it: the server sets torch to one thread
    per process at start-up (core/threads.py), so a reader's run gets one core, not all of them."""
    if live.model.num_params() < 10 * tiny_gpt2().num_params():
        return _("It runs on one thread of this server's processor (the app gives each server process one).")
    return _(
        "It runs on one thread of this server's processor (the app gives each server process one), so each "
        "step takes far longer than the tiny model's."
    )


def show_tokens(live: LiveGPT2, ids: list[int], limit: int = 120) -> None:
    """A released model's text as the tokens it reads (the byte model's tokens are its letters)."""
    if not live.real:
        return
    shown = ids[-limit:]
    chips = " ".join(f"`{live.tokenizer.label(i).replace('`', 'ˋ')}`" for i in shown)
    more = _("… {n} earlier tokens, then ").format(n=len(ids) - limit) if len(ids) > limit else ""
    if _split_bytes(live, shown):
        said = _(
            "As tokens ({n}; ␣ = space, ⏎ = new line, xE3 = one byte of a character split across tokens):"
        )
    else:
        said = _("As tokens ({n}; ␣ = space, ⏎ = new line):")
    st.caption(f"{said.format(n=len(ids))} {more}{chips}")


def _split_bytes(live: LiveGPT2, ids: list[int]) -> bool:
    """Whether any of these tokens is a piece of a character (labelled in hex, e.g. xE3), so the
    caption explains that notation only when the reader sees it."""
    return any(_is_piece(live, i) for i in ids)


def _is_piece(live: LiveGPT2, token: int) -> bool:
    """Whether a token's bytes are only part of a character (they are no UTF-8 text on their own)."""
    try:
        live.tokenizer.token_bytes(token).decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def show_top_next(live: LiveGPT2, top: list[tuple[int, float]], key: str) -> None:
    """The likeliest next tokens at one step, as the model scored them (before temperature / top-k)."""
    st.markdown(
        _("**What the model expected next** — its {n} likeliest {unit}s at this step").format(
            n=len(top), unit=live.unit_word
        )
    )
    show_figure(_top_next(live.key, tuple(map(tuple, top)), language(), _label=live.tokenizer.label), key=key)
    pieces = [live.tokenizer.label(token) for token, _p in top if _is_piece(live, token)]
    # one slot whether or not the note shows: an element that comes and goes would move every
    # element after it to a new place on the page, and the browser redraws a moved chart from scratch
    note = st.empty()
    if live.unit == "byte" and pieces:
        note.caption(
            _(
                "{piece} is a byte written in hex: it has no letter of its own, being one piece of a character "
                "that takes several bytes (é, 猫, an emoji). The model writes such characters one piece at a time."
            ).format(piece=pieces[0])
        )


@st.cache_resource(max_entries=1024, show_spinner=False)
def _top_next(model_key: str, top: tuple[tuple[int, float], ...], lang: str, _label) -> ReadyChart:
    """One step's top-next chart, shared read-only: the chart of its size patched with this step's bars
    (its axis title is words: one chart per language)."""
    from core.figures.generation import top_next_step

    return ready_chart(top_next_step(_top_next_base(len(top), lang), list(top), _label))


@st.cache_resource(max_entries=16, show_spinner=False)
def _top_next_base(n: int, lang: str) -> dict:
    """A validated top-next chart with `n` bars, as its dict, whose bars each step replaces."""
    from core.figures.generation import top_next_figure

    return as_dict(top_next_figure([(0, 0.0)] * n))


def show_cache_size(live: LiveGPT2) -> None:
    """The live cache's bytes per token beside the catalog's figure for the same model (core/specs)."""
    size = live.cache_size()
    text = _(
        "Live cache size, from the model: **{size} per {unit}** in {bits}-bit numbers, {size_16bit} if stored "
        "in 16-bit."
    ).format(
        size=format_bytes(size.per_token),
        unit=live.unit_word,
        bits=8 * size.element_bytes,
        size_16bit=format_bytes(size.per_token_16bit),
    )
    if size.spec_16bit is None:
        st.caption(text)
        return
    if size.matches_spec:
        verdict = _("The catalog row for {model} (`core/specs`, 16-bit) says {size}: the same.")
    else:
        verdict = _(
            "The catalog row for {model} (`core/specs`, 16-bit) says {size}: **different** — check the loader."
        )
    st.caption(f"{text} {verdict.format(model=size.spec_name, size=format_bytes(size.spec_16bit))}")


def say_if_the_window_filled(run, live: LiveGPT2) -> None:
    """The note when a run stopped because the text filled the model's context window (no sliding)."""
    if run.stopped_at_window:
        st.info(
            _(
                "The text fills the {window}-{unit} context window after {n} new {unit}s, so "
                "generation **stops** there (it does not slide the window)."
            ).format(window=live.model.config.block_size, n=len(run.traces), unit=live.unit_word)
        )
