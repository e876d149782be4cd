"""The Qwen3.5 of the A real hybrid lesson: found on disk, loaded once, run once per text.

The page always has a model: the shipped miniature (assets/qwen35_mini/, core/models/qwen35_mini.py),
built exactly like Qwen3.5 and trained here; a released Qwen3.5 found on this machine takes its place
as the default, the miniature staying one click away. Released weights are looked for without any
network call (core/models/fetch.py): a folder named by
COURSE_QWEN35_PATH (how the tests point the page at a tiny random checkpoint) and every Qwen3.5
release in the reader's Hugging Face cache. A model is loaded once per process per folder and
dtype (`st.cache_resource`, two at most). A run over a reader's text steps the model token by token
on the server's CPU, so it is bounded (a cap on prompt and new tokens), shows its progress, and is
kept for the few latest texts (`RUNS`), shared by every reader.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import streamlit as st
import torch

from core.i18n import _
from core.models import fetch
from core.models import qwen35_trace as real_hybrid
from core.models.hf_tokenizer import CheckpointError
from core.models.qwen35 import LoadedQwen35, load_qwen35
from core.models.qwen35_mini import CHECKPOINT as MINIATURE
from core.models.qwen35_mini import load_miniature
from ui.models.offer import how_to_get
from ui.models.switch import model_switch

RELEASE = "qwen3.5-0.8b"
DTYPE = "float32"  # logits as transformers' to 1e-4; in memory up to twice the bf16 download
RUNS = 4  # runs kept (each holds one layer's boards for every token: about 1 MB a token for the 0.8B)
_runs: OrderedDict[tuple, real_hybrid.HybridRun] = OrderedDict()
_runs_lock = threading.Lock()


@st.cache_data(ttl=30, show_spinner=False)
def found_checkpoints() -> list[fetch.Found]:
    """Qwen3.5 folders on this machine (no network); re-scanned every 30 s and after a download."""
    return fetch.local_qwen35()


@st.cache_resource(show_spinner=False, max_entries=2)
def released_qwen35(folder: str, dtype: str = DTYPE) -> LoadedQwen35:
    """A Qwen3.5 folder in the course's module (raises CheckpointError, which is not cached)."""
    return load_qwen35(folder, getattr(torch, dtype))


@st.cache_resource(show_spinner=False)
def miniature() -> LoadedQwen35:
    """The shipped miniature, loaded once per process (1.7 MB of fp32 weights)."""
    return load_miniature()


def is_miniature(loaded: LoadedQwen35) -> bool:
    return loaded.folder == MINIATURE


def choose_checkpoint(prefix: str) -> LoadedQwen35 | None:
    """The model this page runs: a released Qwen3.5 found here first, else the shipped miniature; with
    no release here, the Download offer. None (after saying why) only when a chosen folder is broken."""
    found = found_checkpoints()
    if not found:
        how_to_get(RELEASE, prefix, found_checkpoints.clear)  # the page says the miniature runs
        return miniature()
    options = {str(f.folder): f.label for f in found} | {str(MINIATURE): _("the miniature, trained here")}
    choice = model_switch(
        prefix,
        _("Qwen3.5 to run"),
        options,
        help=_(
            "Released weights (Qwen team, 2026) from huggingface.co, or a folder named by {variable}. They run "
            "in this course's own Qwen3.5 code (core/models/qwen35.py), as the miniature does."
        ).format(variable=fetch.ENV_QWEN35),
    )
    if choice == str(MINIATURE):
        return miniature()
    try:
        with st.spinner(_("Loading Qwen3.5 weights…")):
            return released_qwen35(choice)
    except CheckpointError as error:
        st.error(_("This checkpoint cannot be used: {error}.").format(error=error))
        return None


def hybrid_run(
    loaded: LoadedQwen35, ids: tuple[int, ...], new_tokens: int, layer: int
) -> real_hybrid.HybridRun:
    """The run over a text, made once (with a progress bar) and kept for the RUNS latest texts."""
    key = (str(loaded.folder), str(loaded.model.dtype()), ids, new_tokens, layer)
    with _runs_lock:
        if key in _runs:
            _runs.move_to_end(key)
            return _runs[key]
    total = len(ids) + new_tokens
    reading = _("The model is reading your text, one token at a time: {done} of {total}")
    bar = st.progress(0.0, text=reading.format(done=0, total=total))

    def report(done: int, of: int) -> None:
        bar.progress(done / of, text=reading.format(done=done, total=of))

    run = real_hybrid.run_hybrid(loaded.model, list(ids), new_tokens, layer, report)
    bar.empty()
    with _runs_lock:
        _runs[key] = run
        while len(_runs) > RUNS:
            _runs.popitem(last=False)
    return run
