"""Forgetting: fade the board — one rate (Gated DeltaNet) or one per channel (KDA)."""

from __future__ import annotations

import streamlit as st

from core import board as bd
from core.figures import board as fb
from core.figures import board_charts as fbc
from core.i18n import N_, _, language, ngettext, pgettext
from core.ops import kda
from core.ops.kda import gate_bounds
from core.specs import SPECS
from ui.board_controls import key_choice
from ui.charts import ReadyChart, ready_chart, show_figure
from ui.deeper import go_deeper_forgetting
from ui.depth import engineer, engineer_section
from ui.glossary import new_words
from ui.lesson import code, formula, lesson_header, next_lesson, notice, problem, still_missing
from ui.primer_link import primer_pointer
from ui.recall.pointer import trained_recall_pointer
from ui.stepped import step_controls

K3 = SPECS["kimi_k3"]
D, KEEP, D_V = 8, 2, 16  # key channels, of which the first KEEP hold the long-lived fact; value size
WHEN = {"switch": N_("only at the topic switch"), "every": N_("at every token")}
RULES = ("delta", "gated_delta", "kda")
TOPICS = (N_("the fact"), N_("topic A"), N_("topic B"))  # the words of TopicSwitch.topic_of, shown via _()


def fades(
    ts: bd.TopicSwitch, when: str, alpha: float, alpha_topic: float, alpha_fact: float
) -> dict[str, bd.Fade | None]:
    """Each rule's fade for these settings: none, one rate, or the fact's and the topics' rates."""
    at = (ts.switch,) if when == "switch" else None
    return {
        "delta": None,
        "gated_delta": bd.Fade(rate=alpha, at=at),
        "kda": bd.Fade(channels=ts.channel_rates(fact=alpha_fact, topic=alpha_topic), at=at),
    }


@st.cache_data(show_spinner=False)
def runs(
    n_a: int, n_b: int, when: str, alpha: float, alpha_topic: float, alpha_fact: float, keys: str
) -> tuple[bd.TopicSwitch, dict[str, bd.BoardRun]]:
    ts = bd.topic_switch(D, KEEP, n_a, n_b)
    fade = fades(ts, when, alpha, alpha_topic, alpha_fact)
    out = {
        rule: bd.write_stream(ts.pairs, rule, d=D, d_v=D_V, keys=keys, groups=ts.groups, fade=fade[rule])
        for rule in RULES
    }
    return ts, out


Settings = tuple[int, int, str, float, float, float, str]  # runs()'s arguments, in order


@st.cache_resource(show_spinner=False, max_entries=256)
def overview(settings: Settings, lang: str) -> dict:
    """Every picture and number outside the stepper (but the Engineer's fill maps, `fill_view`), built once
    per setting and language (reruns reuse them; `lang` keys the cache, since the figures' words are in it)."""
    when, alpha, alpha_topic, alpha_fact = settings[2:6]
    ts, rr = runs(*settings)
    fade = fades(ts, when, alpha, alpha_topic, alpha_fact)
    rates = fbc.channel_rates_figure(
        {rule: fade[rule].alphas(D) for rule in ("gated_delta", "kda")},
        KEEP,
        title=_("fade rate per key channel at the switch token")
        if when == "switch"
        else _("fade rate per key channel per token"),
    )
    groups = {_("the fact (name)"): ts.fact, _("topic A (old)"): ts.topic_a, _("topic B (new)"): ts.topic_b}
    recalls = {rule: run.recall() for rule, run in rr.items()}
    strengths = {
        rule: [rec.mean_strength(names) for names in groups.values()] for rule, rec in recalls.items()
    }
    err = {rule: rec.mean_error(ts.topic_b) for rule, rec in recalls.items()}
    opening = bd.most_different_step(rr, first=ts.switch + 1)  # the stepper's view before any Step
    strength = fbc.strength_figure(
        list(groups), strengths, title=_("how much of each value the key still returns")
    )
    return {
        "ts": ts,
        "rates": ready_chart(rates),
        "strength": ready_chart(strength),
        "strengths": strengths,
        "err": err,
        "opening": opening,
        "gaps": bd.board_gaps(rr, opening),
        "limit": fb.color_limit(*(r.new for r in rr.values())),
    }


@st.cache_resource(show_spinner=False, max_entries=256)
def fill_view(settings: Settings, lang: str) -> dict:
    """What each channel holds over time, per rule, and the channels where the two maps differ: built once
    per setting and language, and only at Engineer depth (Story does not draw these maps)."""
    ts, rr = runs(*settings)
    fill_g, fill_k = bd.channel_fill(rr["gated_delta"]), bd.channel_fill(rr["kda"])
    zmax = fb.color_limit(fill_g, fill_k, bd.channel_fill(rr["delta"]))
    return {
        "fill_gated": ready_chart(
            fbc.channel_fill_figure(fill_g, zmax, ts.switch, title=_("Gated DeltaNet: one rate for all"))
        ),
        "fill_kda": ready_chart(
            fbc.channel_fill_figure(fill_k, zmax, ts.switch, title=_("KDA: fact kept, topics fade"))
        ),
        # channels the maps disagree on
        "differing": [c for c in range(D) if abs(fill_g[:, c] - fill_k[:, c]).max() > 1e-3],
    }


@st.cache_resource(show_spinner=False, max_entries=1024)
def boards_at(settings: Settings, t: int, lang: str) -> ReadyChart:
    """The three boards after t tokens, built once per setting, step and language (Step/Back only index)."""
    rr = runs(*settings)[1]
    figure = fb.update_parts_figure(
        {
            _("DeltaNet (no fade)"): rr["delta"].board(t),
            "Gated DeltaNet": rr["gated_delta"].board(t),
            "KDA": rr["kda"].board(t),
        },
        overview(settings, lang)["limit"],
        value_names=rr["delta"].value_names,
        title=ngettext("the boards after {n:,} token", "the boards after {n:,} tokens", t).format(n=t),
    )
    return ready_chart(figure)


lesson_header("forgetting")
new_words("gate", here="forgetting")
problem(
    _(
        "DeltaNet fixes entries one key at a time. When the conversation changes topic completely, "
        "everything about the old topic stays on the board until each of its keys happens to be "
        "rewritten — stale answers linger, and they take up room the new topic needs."
    )
)
st.markdown(
    _(
        "The fix is a **fade**: before each write, multiply the board by a number α between 0 and 1 "
        "(the *gate*). α = 1 keeps everything; α = 0.5 halves every entry. **Gated DeltaNet** has one α "
        "for the whole board. **Kimi Delta Attention (KDA)**, from Kimi Linear, has one α per **key "
        "channel** (board row), so it can keep some rows and clear others. In a trained model the gate "
        "is computed from each token; here you set it by hand."
    )
)
primer_pointer("matrices")
st.markdown(
    _(
        "The stream: a fact worth keeping (**name → Ada**, whose key uses only channels 0–{last_fact}; here "
        "mostly channel 0), then topic **A** (fruit → colour), then topic **B** (city → country); both "
        "topics use channels {first_topic}–{last}."
    ).format(last_fact=KEEP - 1, first_topic=KEEP, last=D - 1)
)

c1, c2, c3 = st.columns(3)
n_a = c1.slider(_("topic A pairs"), 1, 6, 4, key="fg_na")
n_b = c2.slider(_("topic B pairs"), 1, 6, 4, key="fg_nb")
when = c3.radio(_("the gate fades"), list(WHEN), format_func=lambda w: _(WHEN[w]), key="fg_when")
c1, c2, c3 = st.columns(3)
alpha = c1.slider(_("Gated DeltaNet: α (all channels)"), 0.05, 1.0, 0.1, 0.05, key="fg_alpha")
alpha_topic = c2.slider(_("KDA: α of topic channels"), 0.05, 1.0, 0.1, 0.05, key="fg_alpha_topic")
alpha_fact = c3.slider(_("KDA: α of fact channels"), 0.05, 1.0, 1.0, 0.05, key="fg_alpha_fact")
KEY_KINDS = {"random": N_("random"), "orthogonal": N_("orthogonal")}
keys = key_choice(
    "fg_keys", labels=KEY_KINDS, help=_("orthogonal: each key gets its own channel while channels last")
)
settings: Settings = (n_a, n_b, when, float(alpha), float(alpha_topic), float(alpha_fact), keys)
view = overview(settings, language())
ts: bd.TopicSwitch = view["ts"]

st.header(_("1 · Which channels keep, which fade"))
show_figure(view["rates"], key="fg_rates")
st.caption(
    _(
        "One bar per board row (key channel): 1 = kept whole, near 0 = wiped. Gated DeltaNet's bars are all "
        "alike; KDA's differ from row to row."
    )
)

st.header(_("2 · The three boards, token by token"))


@st.fragment
def boards_stepper(ts: bd.TopicSwitch, settings: Settings, when: str) -> None:
    """Step controls and the stepped picture: a Step click reruns only this part. Before the first Step
    it shows the token after the topic switch where the three boards differ most (computed per setting)."""
    view = overview(settings, language())
    opening = view["opening"]
    t = step_controls(
        "fg_t",
        len(ts.pairs),
        unit=_("token"),
        before_start=_("token {n}, after the switch").format(n=opening),
    )
    if t == 0:
        t = opening
        gaps = view["gaps"]
        names = {"delta": "DeltaNet", "gated_delta": "Gated DeltaNet", "kda": "KDA"}
        st.markdown(
            _(
                "Token {t} is where, after the topic switch, the three boards differ most. Press **Step** to "
                "replay the stream from token 1."
            ).format(t=t)
        )
        if engineer():
            st.markdown(
                _(
                    "How far apart they are (the size of the difference of two boards; 0 = the same): {gaps}."
                ).format(
                    gaps=pgettext("between board gaps", "; ").join(
                        f"{names[a]} – {names[b]} {gap:.2f}" for (a, b), gap in gaps.items()
                    ),
                )
            )
    if t:
        k_name, v_name = ts.pairs[t - 1]
        topic = ts.topic_of(k_name)
        at_switch = t - 1 == ts.switch and when == "switch"
        line = (
            _("Token {t}: **{key} → {value}** ({topic}) — **the topic switch**: the gates fade here.")
            if at_switch
            else _("Token {t}: **{key} → {value}** ({topic})")
        )
        st.markdown(line.format(t=t, key=k_name, value=v_name, topic=_(topic)))
    show_figure(boards_at(settings, t, language()), key="fg_boards")
    st.caption(
        _(
            "One board per rule: a row per key channel, a column per value. Red = positive, blue = negative, "
            "white = empty."
        )
    )


boards_stepper(ts, settings, when)


def fill_maps(view: dict) -> None:
    """What each channel holds over time, per rule (Engineer: a second picture of section 1's idea)."""
    show_figure(view["fill_gated"], key="fg_fill_gated")
    show_figure(view["fill_kda"], key="fg_fill_kda")
    differing = view["differing"]
    fact_channels = f"0–{KEEP - 1}"
    channels = bd.join_names([str(c) for c in differing])
    if not differing:
        fill_words = _("With these settings the two maps are the same in every channel.")
    elif all(c < KEEP for c in differing):
        fill_words = ngettext(
            "With these settings the two maps differ in channel {channels} only — the fact's channels "
            "({fact}; its key is mostly channel 0): both rules fade the topic channels at the same rate here. "
            "Set KDA's topic α apart from Gated DeltaNet's α to see those channels part too.",
            "With these settings the two maps differ in channels {channels} only — the fact's channels "
            "({fact}; its key is mostly channel 0): both rules fade the topic channels at the same rate here. "
            "Set KDA's topic α apart from Gated DeltaNet's α to see those channels part too.",
            len(differing),
        ).format(channels=channels, fact=fact_channels)
    else:
        fill_words = ngettext(
            "With these settings the two maps differ in channel {channels}.",
            "With these settings the two maps differ in channels {channels}.",
            len(differing),
        ).format(channels=channels)
    st.caption(
        _(
            "Colour = how much a board row holds (the length of the row). Column 0 is the empty board. {more}"
        ).format(more=fill_words)
    )


if engineer_section(_("What each channel holds over time")):
    fill_maps(fill_view(settings, language()))

st.header(_("3 · After the stream: what is still there?"))
show_figure(view["strength"], key="fg_strength")
strengths, err = view["strengths"], view["err"]
st.caption(
    _(
        "Bar height = how much of each value its key still returns at the end (1 = all of it). DeltaNet still "
        "answers topic-A questions ({stale:.2f}) — stale facts from a topic that is over."
    ).format(stale=strengths["delta"][1])
)
if engineer():
    st.caption(
        _(
            "A bar shows only the share of the right value; the readback also carries what other keys leak in. "
            "Its distance from the right value on topic B, which counts both: DeltaNet {delta:.2f}, Gated "
            "DeltaNet {gated:.2f}, KDA {kda:.2f} (0 = exact)."
        ).format(delta=err["delta"], gated=err["gated_delta"], kda=err["kda"])
    )
    trained_recall_pointer(
        ("delta", "gated_delta", "kda"),
        _("Does learned forgetting help recall? On one list of pairs there is nothing stale to forget."),
        versus=("kda", "delta"),
    )

notice(
    _("Set the gate to fade at every token. What happens to topic B's first pairs?"),
    _(
        "They fade too: a fade that never stops eats the new topic as well as the old one. That is why "
        "the gate is computed from each token — a trained model fades hard where the text changes and "
        "hardly at all inside a topic."
    ),
    key="fg_q1",
)
notice(
    _("Gated DeltaNet with α = 0.1: does the name survive the topic switch?"),
    _(
        "Barely: one rate means the fact fades with topic A (to about 0.1 of its strength). KDA can give the "
        "fact's channels α = 1 and keep it whole while it clears the topic channels."
    ),
    key="fg_q2",
)
formula(
    r"\text{Gated DeltaNet: } S_t = \alpha_t\,(I-\beta_t k_t k_t^\top)\,S_{t-1} + \beta_t k_t v_t^\top"
    r"\qquad \text{KDA: } S_t = (I-\beta_t k_t k_t^\top)\,\mathrm{Diag}(\alpha_t)\,S_{t-1} + \beta_t k_t v_t^\top",
    caption=_(
        "α_t ∈ (0,1) is one number per head for Gated DeltaNet (arXiv 2412.06464) and a vector, one "
        "entry per key channel, for KDA (Kimi Linear, arXiv 2510.26692). Kimi K3 bounds the per-step fade "
        "at e^−5 ≈ {keep:.4f} (its config.json: gate_lower_bound −5.0)."
    ).format(keep=gate_bounds()["min_keep_per_step"]),
    key="fg_formula",
)
code(kda.step, bd.Fade.log_gates, key="fg_code")
go_deeper_forgetting()
still_missing(
    _(
        "A board that forgets well is still a fixed-size board: some facts must be looked up exactly, "
        "however long ago they were written. Kimi K3 mixes about three layers of such boards for each "
        "full-attention layer that still remembers everything ({kda} KDA + {full} full-attention layers of "
        "its {layers})."
    ).format(kda=K3.num_linear_layers, full=K3.num_full_attention_layers, layers=K3.num_layers)
)
next_lesson("forgetting")
