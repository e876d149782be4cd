"""What a Japanese reader does on each page, as data: the walk `test_page_reads_in_japanese_through_its_widgets`
(tests/app/test_pages.py) takes through its widgets at Engineer depth (everything Story shows and more),
checking after each stretch that no English sentence is left on screen (tests/app/japanese.py).

A walk is a list of moves: `Step(key, n)` presses a Step button n times; `Set(kind, key, value)` sets a
widget (`value` an `Option(i)` to pick the i-th of its options as the page lists them); `Open(*keys)`
switches toggles on (answers, formulas, code); `Check(when)` asserts the page reads Japanese, `when`
naming the state in the failure message. Pages whose walk also checks page-specific facts (GPT-2 and the
KV cache, Collisions, Chunks, the map, What changed, the planner, Your GPU) keep their own tests in
tests/app/test_japanese_<page>.py.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    key: str
    times: int = 1


@dataclass(frozen=True)
class Option:
    index: int


@dataclass(frozen=True)
class Set:
    kind: str  # the AppTest element family: slider, select_slider, selectbox, radio, text_input
    key: str
    value: object


@dataclass(frozen=True)
class Open:
    keys: tuple[str, ...]

    def __init__(self, *keys: str) -> None:
        object.__setattr__(self, "keys", keys)


@dataclass(frozen=True)
class Check:
    when: str


WALKS: dict[str, list] = {
    "primer": [
        Check("first run"),
        Set("slider", "pr_sweet", 0.0),
        Set("slider", "pr_b_dir", 110),  # b at right angles to a
        Set("selectbox", "pr_query", "snow"),
        Set("radio", "pr_row", "sky"),
        Check("arrows moved, another query"),
        Set("selectbox", "pr_pair1", Option(2)),
        Set("radio", "pr_read", "snow"),  # a key that was not written
        Set("slider", "pr_n", 1),
        Open("pr_q1_reveal", "pr_q2_reveal", "pr_f1", "pr_f2", "pr_f3", "pr_f4", "pr_f5", "pr_code"),
        Check("other pairs, one pair on the board, answers, formulas and code open"),
    ],
    "linear_attention": [
        Check("first run"),
        Step("la_t_step", 3),
        Check("after three steps"),
        Set("slider", "la_d", 4),
        Set("slider", "la_n", 16),  # colours past the board's columns; softmax misses keys
        Step("la_t_step"),
        Check("a small board, many pairs"),
        Step("la_t_step", 8),
        Check("a colour without a column of its own"),
        Set("radio", "la_keys", "orthogonal"),
        Set("slider", "la_T", 8),
        Open("la_q1_reveal", "la_q2_reveal", "la_formula", "la_code"),
        Check("orthogonal keys, answers, formula and code open"),
    ],
    "deltanet": [
        Check("first run: the rewrite"),
        Step("dn_t_step", 2),
        Check("the first tokens, nothing to erase yet"),
        Set("radio", "dn_keys", "random"),
        Set("slider", "dn_beta", 0.5),
        Set("slider", "dn_n", 30),
        Check("random keys, half strength, many pairs"),
        Open("dn_q1_reveal", "dn_q2_reveal", "dn_formula", "dn_code"),
        Check("answers, formula and code open"),
    ],
    "forgetting": [
        Check("first run: the token where the boards differ most"),
        Step("fg_t_step", 6),  # through the fact and topic A, onto the topic switch
        Check("stepped onto the topic switch"),
        Set("slider", "fg_alpha_topic", 0.5),  # KDA's topics apart from Gated DeltaNet's α
        Set("radio", "fg_keys", "orthogonal"),
        Check("orthogonal keys, KDA's topic rate apart"),
        Set("slider", "fg_alpha", 1.0),
        Set("slider", "fg_alpha_topic", 1.0),  # no fade anywhere: the maps agree
        Check("no fade at all"),
        Set("radio", "fg_when", "every"),
        Set("slider", "fg_alpha", 0.5),
        Set("slider", "fg_na", 2),
        Set("slider", "fg_nb", 6),
        Step("fg_t_step", 3),
        Check("fading at every token, other stream lengths"),
        Open("fg_q1_reveal", "fg_q2_reveal", "fg_formula", "fg_code"),
        Check("answers, formula and code open"),
    ],
    "kimi_k3": [
        Check("first run: the whole run"),
        Step("k3_step_step", 2),
        Check("the first bytes of the reader's text"),
        Set("text_input", "k3_prompt", "Hi"),
        Step("k3_step_step", 5),  # past the two bytes typed: the model's own writing
        Check("stepping through the model's own writing"),
        Set("text_input", "k3_prompt", "x" * 60),  # longer than mini-K3 reads: cut
        Check("a text that was cut"),
        Open("k3_n1_reveal", "k3_n2_reveal", "k3_n3_reveal", "k3_formula", "k3_code"),
        Check("answers, formula and code open"),
    ],
    "experts": [
        Check("first run"),
        Step("ex_step_step", 3),
        Check("three bytes on"),
        Set("select_slider", "ex_layer", Option(-1)),  # the last MoE layer
        Check("the last MoE layer"),
        Set("text_input", "ex_prompt", "aaaaaaaa"),  # one letter: most experts idle
        Check("one repeated letter"),
        Open("ex_n1_reveal", "ex_n2_reveal", "ex_formula", "ex_code"),
        Check("answers, formula and code open"),
    ],
}


def walk(at, moves: list) -> None:
    """Take `moves` on the page `at` (an AppTest already run), asserting at every `Check`."""
    from tests.app.japanese import no_english, open_toggles

    for move in moves:
        if isinstance(move, Check):
            no_english(at, move.when)
        elif isinstance(move, Step):
            for _ in range(move.times):
                at.button(key=move.key).click().run()
        elif isinstance(move, Open):
            open_toggles(at, *move.keys)
        else:
            widget = getattr(at, move.kind)(key=move.key)
            value = list(widget.options)[move.value.index] if isinstance(move.value, Option) else move.value
            widget.set_value(value).run()
