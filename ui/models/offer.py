"""How a page offers a released model whose weights are not here (GPT-2, Qwen3.5, the next one).

Nothing downloads on its own. On a private server the page offers a Download button (size first,
then a progress bar); two readers pressing it at once share one download (core/models/downloads.py).
In public mode (COURSE_PUBLIC=1) no reader can start one: the page shows the command that fetches
the weights instead, for the host or for a reader's own machine. With HF_HUB_OFFLINE set it says
that nothing is attempted.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import streamlit as st

from core.i18n import _
from core.models import downloads, fetch
from core.public import public_mode
from ui.depth import engineer
from ui.models.switch import remember_arrival


def public_command(key: str) -> bool:
    """In public mode, the command that fetches `key` in place of a button (True: shown, stop here)."""
    if not public_mode():
        return False
    release = fetch.ALL_RELEASES[key]
    st.info(
        _(
            "This course runs on a shared server, so no reader can start a download here. The host can fetch "
            "{model} ({size}) on the server with the command below, and so can you on your own machine, where "
            "the course then finds it by itself."
        ).format(model=release.label, size=fetch.approx_size(release.download_bytes)),
        icon=":material/terminal:",
    )
    st.code(fetch.fetch_command(key), language="bash")
    return True


def how_to_get(key: str, prefix: str, rescan: Callable[[], None], fallback: str | None = None) -> None:
    """Release `key` is not here: one box saying what the page runs meanwhile (when `fallback` names
    it; a page whose text already says so passes None) and, at Engineer depth, the files and the ways
    in; then the Download offer. Once the weights arrive: scan the disk again, have the page's switch
    pick them (ui/models/switch.py) and run the page again."""
    release = fetch.ALL_RELEASES[key]
    said = []
    if fallback is not None:
        said.append(
            _(
                "The released weights of {model} ({size}) are not on this machine yet. Until they are, this "
                "page runs {fallback}."
            ).format(model=release.label, size=fetch.approx_size(release.download_bytes), fallback=fallback)
        )
    if engineer():
        said.append(released_instructions(key))
    if said:
        st.info(" ".join(said), icon=":material/download:")
    folder = offer_download(key, f"{prefix}_download")
    if folder is not None:
        rescan()
        remember_arrival(prefix, str(folder), release.label)
        st.rerun()


def released_instructions(key: str) -> str:
    """The release's size and files, where they come from, and the ways to get it (a terminal command,
    a folder named by its environment variable)."""
    release = fetch.ALL_RELEASES[key]
    fetch_it = (
        _(
            "Fetch it in a terminal with `{command}`, or point the environment variable `{variable}` at a folder "
            "that holds those files."
        )
        if public_mode()
        else _(
            "Fetch it here, or in a terminal with `{command}`, or point the environment variable `{variable}` at "
            "a folder that holds those files."
        )
    ).format(command=fetch.fetch_command(key), variable=release.env_folder)
    return _(
        "{release} is {size}: `config.json`, `tokenizer.json` and `model.safetensors` from huggingface.co/{repo}. "
        "{fetch_it} Nothing is downloaded until you ask."
    ).format(
        release=release.label,
        size=fetch.approx_size(release.download_bytes),
        repo=release.repo_id,
        fetch_it=fetch_it,
    )


def offer_download(key: str, widget_key: str) -> Path | None:
    """The Download button for release `key` (or the command, or the offline note); the folder once
    the weights have arrived during this run of the page, else None."""
    if public_command(key):
        return None
    release = fetch.ALL_RELEASES[key]
    if fetch.is_offline():
        st.warning(
            _(
                "This machine is set to work offline (`HF_HUB_OFFLINE`), so no download is attempted. "
                "Fetch the weights on a machine with internet and copy the folder here."
            )
        )
        return None
    job = downloads.running(key)
    if job is None:
        size = fetch.approx_size(release.download_bytes)
        if not st.button(
            _("Download {model} ({size})").format(model=release.label, size=size),
            key=widget_key,
            icon=":material/download:",
        ):
            return None
        job, _started = downloads.start(key, fetch.download)
    else:
        st.caption(
            _("A download of {model} is already running on this server; here is its progress.").format(
                model=release.label
            )
        )
    bar = st.progress(0.0, text=_("Starting the download…"))
    while not job.wait(0.25):
        if job.total:
            bar.progress(
                job.fraction,
                text=_("{file}: {done:,.0f} of {total:,.0f} MB").format(
                    file=job.file, done=job.done / 1e6, total=job.total / 1e6
                ),
            )
    if job.error:
        st.error(job.error)
        return None
    bar.progress(1.0, text=_("Done"))
    return job.folder
