"""The Step controls say what the picture shows: a page that shows its whole run before the first
Step says so (not "byte 0 of 53" above byte 53), Step then starts at 1, Reset comes back."""

from __future__ import annotations

import pytest

from tests.app.driver import assert_clean, fresh, step_status

WHOLE_RUN_FIRST = [  # (page, Step controls' key, unit, what it shows before the first Step)
    ("kimi_k3", "k3_step", "byte", "the whole run"),  # the shipped mini-K3 (a missing one fails to load)
    ("gpt2", "gpt2_t", "byte", "the finished run"),
    ("kv_cache", "kv_t", "byte", "the finished run"),
    ("deltanet", "dn_t", "token", "the last token"),
    ("forgetting", "fg_t", "token", "token 6, after the switch"),  # where its boards differ most
]


@pytest.mark.parametrize(("page", "key", "unit", "shown"), WHOLE_RUN_FIRST)
def test_before_the_first_step_the_status_names_what_is_shown(page, key, unit, shown):
    at = fresh(page, timeout=300)
    status = step_status(at)
    prefix = f"**{shown}** — Step replays from {unit} 1 of "
    assert status.startswith(prefix), status
    total = int(status.removeprefix(prefix))
    at.button(key=f"{key}_step").click().run()
    assert_clean(at, "first Step")
    assert step_status(at) == f"**{unit} 1 of {total}**"
    at.button(key=f"{key}_reset").click().run()
    assert step_status(at).startswith(prefix)


@pytest.mark.parametrize(("page", "key"), [("linear_attention", "la_t")])
def test_a_page_that_starts_empty_counts_from_zero(page, key):
    at = fresh(page)
    status = step_status(at)
    assert status.startswith("**token 0 of "), status
    at.button(key=f"{key}_step").click().run()
    assert step_status(at).startswith("**token 1 of ")
