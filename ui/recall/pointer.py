"""One sentence of shipped MQAR results and a link to the panel, for the lessons that point at it."""

from __future__ import annotations

import streamlit as st

from core.figures.style import label_of
from core.i18n import _
from core.recall import results as rr
from ui.course import lesson_ref
from ui.lesson import link_to
from ui.recall.results import load_results


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
    text = _(
        "**{lead}** Small models trained on associative recall (width {width}, {pairs} pairs, "
        "questions answered right, mean of {seeds} training runs): {scores}."
    ).format(lead=lead, width=width, pairs=pairs, seeds=seeds, scores=_(", ").join(parts))
    if versus is not None:
        a, b = versus
        verdict = rr.compare(results, a, b, width, pairs)
        text += {
            "ahead": _(" {a} is ahead of {b}: its worst run beats the other's best."),
            "behind": _(" {a} is behind {b}: its best run is below the other's worst."),
            "tie": _(
                " {a} and {b} are level: their runs overlap, so any difference "
                "here is no bigger than a different random start makes ({seeds} runs each)."
            ),
        }[verdict].format(a=label_of(a), b=label_of(b), seeds=seeds)
    st.markdown(text)
    link_to(
        "collisions",
        # short: fits a phone
        _("Trained models: see and question them in {lesson}").format(lesson=lesson_ref("collisions")),
    )
