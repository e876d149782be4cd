"""The Download offer a page shows when a release's weights are not here (GPT-2, Qwen3.5).

Nothing downloads on its own. On a private server the page offers a Download button (size first,
then a progress bar); two readers pressing it at once share one download (core/models/downloads.py).
In public mode (COURSE_PUBLIC=1) no reader can start one: the page shows the command that fetches
the weights instead, for the host or for a reader's own machine. With HF_HUB_OFFLINE set it says
that nothing is attempted.
"""

from __future__ import annotations

import streamlit as st

from core.gpu.serving.public import public_mode
from core.i18n import _
from core.models import downloads, fetch


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


def offer_download(key: str, widget_key: str) -> bool:
    """The Download button for release `key` (or the command, or the offline note); True once the
    weights have arrived during this run of the page."""
    if public_command(key):
        return False
    release = fetch.ALL_RELEASES[key]
    if fetch.is_offline():
        st.warning(
            _(
                "This machine is set to work offline (`HF_HUB_OFFLINE`), so no download is attempted. "
                "Fetch the weights on a machine with internet and copy the folder here."
            )
        )
        return False
    job = downloads.running(key)
    if job is None:
        size = fetch.approx_size(release.download_bytes)
        if not st.button(
            _("Download {model} ({size})").format(model=release.label, size=size),
            key=widget_key,
            icon=":material/download:",
        ):
            return False
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
        return False
    bar.progress(1.0, text=_("Done"))
    st.success(_("{model} is here.").format(model=release.label))
    return True
