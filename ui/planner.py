"""The planner page's widgets: the first view (a model and a card), the expert settings, the shareable link,
and the one-line captions of its two Story pictures.

Every input lives in `st.session_state` under a `plan_*` key. On a session's first run the query
parameters (a shared link) fill those keys before the widgets are drawn; after every run the
current inputs are written back to the URL, so copying the address shares the whole plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import streamlit as st

from core.i18n import DEFAULT, N_, _, language, pgettext
from core.plan import CACHE_FORMATS, CARDS, STATE_FORMATS, WEIGHT_FORMATS, PlanInputs
from core.plan.config import MAX_CONFIG_BYTES, SHIPPED_CONFIGS
from core.plan.export import from_query, pack_config, to_query, unpack_config
from core.plan.headline import sentences
from core.plan.memory import LAYOUTS
from core.plan.plan import Plan
from core.units import format_context
from ui.depth import ENGINEER, engineer

# the radio's values (kept in the session, compared by tests) and what the reader sees of each
SOURCE_LABELS = {
    "list": N_("From the list"),
    "Paste config.json": N_("Paste config.json"),
    "Upload config.json": N_("Upload config.json"),
}
SOURCES = tuple(SOURCE_LABELS)
CONTEXTS = tuple(2**n for n in range(10, 21))
DEFAULT_SHIPPED = "llama3_1_8b"


def shipped() -> dict[str, str]:
    """Name → file stem of the configs in assets/configs (name from their `_name_or_path`)."""
    import json

    names = {}
    for path in sorted(SHIPPED_CONFIGS.glob("*.json")):
        try:
            names[path.stem] = str(json.loads(path.read_text())["_name_or_path"])
        except (ValueError, KeyError):
            names[path.stem] = path.stem
    return names


@dataclass(frozen=True)
class ConfigChoice:
    """The config text the reader chose (None: nothing usable yet) and how to put it in a link."""

    text: str | bytes | None
    link: dict[str, str]
    problem: str | None = None


def restore_from_link() -> None:
    """When the widgets hold nothing yet: fill the widgets' state from the URL's query parameters (bad values are ignored)."""
    if "plan_context" in st.session_state:
        return  # the widgets hold the inputs already (the URL mirrors them after every run)
    params = {k: st.query_params.get(k) for k in st.query_params.keys()}
    inputs = from_query(params)
    state = st.session_state
    state["plan_context"], state["plan_batch"] = inputs.context, inputs.batch
    state["plan_weights"], state["plan_cache"] = inputs.weight_format, inputs.cache_format
    state["plan_share"], state["plan_gpus"] = inputs.memory_share, inputs.gpus
    state["plan_card"], state["plan_layout"] = inputs.card, inputs.layout
    state["plan_state"] = inputs.state_format
    name, packed = params.get("config"), params.get("configz")
    if isinstance(name, str) and name in shipped():
        state["plan_source"], state["plan_shipped"] = SOURCES[0], name
    elif isinstance(packed, str) and (text := unpack_config(packed)) is not None:
        state["plan_source"], state["plan_paste"] = SOURCES[1], text


def first_view() -> tuple[ConfigChoice, str]:
    """What a beginner picks: a model (from the list, or a config.json of their own) and a card.
    Returns the chosen config and the card's key."""
    source = st.radio(
        _("Model"), SOURCES, horizontal=True, format_func=lambda s: _(SOURCE_LABELS[s]), key="plan_source"
    )
    left, right = st.columns(2)
    with right:
        card = st.selectbox(_("Card"), list(CARDS), format_func=lambda k: CARDS[k].name, key="plan_card")
    with left:
        choice = config_choice(source)
    return choice, card


def config_choice(source: str) -> ConfigChoice:
    """The widget for the chosen source; returns the chosen config text (size-checked)."""
    if source == SOURCES[0]:
        names = shipped()
        keys = list(names)
        if st.session_state.get("plan_shipped") not in keys:
            st.session_state["plan_shipped"] = DEFAULT_SHIPPED if DEFAULT_SHIPPED in keys else keys[0]
        key = st.selectbox(_("Model from the list"), keys, format_func=names.get, key="plan_shipped")
        return ConfigChoice((SHIPPED_CONFIGS / f"{key}.json").read_text(), {"config": key})
    if source == SOURCES[1]:
        text = st.text_area(
            _("Paste a config.json"),
            key="plan_paste",
            height=200,
            placeholder='{"model_type": "llama", "hidden_size": 4096, …}',
        )
        if not text.strip():
            return ConfigChoice(None, {}, _("Paste a model's config.json above."))
        packed = pack_config(text) if len(text) <= MAX_CONFIG_BYTES else None
        return ConfigChoice(text, {"configz": packed} if packed else {})
    upload = st.file_uploader(
        _("Upload a config.json (at most {kb:,} kB)").format(kb=MAX_CONFIG_BYTES // 1000),
        type=["json"],
        key="plan_upload",
    )
    if upload is None:
        return ConfigChoice(None, {}, _("Upload a model's config.json above."))
    if upload.size > MAX_CONFIG_BYTES:
        return ConfigChoice(
            None, {}, _("{n:,} bytes is too large for a config.json (a few kB).").format(n=upload.size)
        )
    data = upload.getvalue()
    packed = pack_config(data.decode("utf-8", errors="replace"))
    return ConfigChoice(data, {"configz": packed} if packed else {})


def serving_inputs(card: str) -> PlanInputs:
    """The expert settings (drawn inside "More settings"): context, batch, formats (weights, cache, fixed
    state), memory share, GPUs and cache layout; `card` comes from the first view."""
    state = st.session_state
    default = PlanInputs()
    options = sorted(set(CONTEXTS) | {int(state.get("plan_context", default.context))})
    left, right = st.columns(2)
    with left:
        context = st.select_slider(
            _("Context length (tokens per sequence)"),
            options=options,
            format_func=format_context,
            key="plan_context",
        )
        batch = st.number_input(
            _("Concurrent sequences (batch)"), min_value=1, max_value=1_000_000, step=1, key="plan_batch"
        )
        weights = _format_box(_("Weight format"), WEIGHT_FORMATS, "plan_weights")
        cache = _format_box(_("KV-cache format"), CACHE_FORMATS, "plan_cache")
        fixed_state = _format_box(
            _("Fixed-state format"),
            STATE_FORMATS,
            "plan_state",
            help=_(
                "The number format of the board (one head's d_k×d_v matrix) that each Gated DeltaNet or KDA "
                "layer keeps per sequence. The first choice reads the config's own mamba_ssm_dtype (Qwen3.5's "
                "configs say float32), FP32 where the config says nothing. fla and transformers keep it in FP32, "
                "as vLLM does for KDA; vLLM keeps Gated DeltaNet's (Qwen3-Next) in the model's BF16 unless "
                "--mamba-ssm-cache-dtype float32 is given. It matters only for hybrid models."
            ),
        )
    with right:
        gpus = st.number_input(
            _("GPUs (tensor parallel)"), min_value=1, max_value=1024, step=1, key="plan_gpus"
        )
        share = st.slider(
            _("Usable share of memory"),
            min_value=0.05,
            max_value=1.0,
            step=0.01,
            key="plan_share",
            help=_(
                "How much of the card's memory the model may take; the serving engine vLLM calls this "
                "gpu_memory_utilization (0.9 unless set)."
            ),
        )
        layouts = pgettext("between the layouts' descriptions", "; ").join(
            _("{label}: {value}").format(
                label=_(item.name), value=re.split(r": |：", _(item.label), maxsplit=1)[-1]
            )
            for item in LAYOUTS.values()
        )
        layout = st.selectbox(
            _("Cache layout"),
            list(LAYOUTS),
            format_func=lambda k: _(LAYOUTS[k].name),
            key="plan_layout",
            help=_(
                "What each way of running the model keeps per token: {layouts}. It matters only for models "
                "with MLA, sliding windows or short convolutions."
            ).format(layouts=layouts),
        )
    return PlanInputs(
        int(context), int(batch), weights, cache, float(share), int(gpus), card, layout, fixed_state
    )


def _format_box(label: str, formats: dict, key: str, help: str | None = None) -> str:
    """A number-format picker: the formats' keys, shown by their labels."""
    return st.selectbox(label, list(formats), format_func=lambda k: _(formats[k].label), key=key, help=help)


def write_link(inputs: PlanInputs, choice: ConfigChoice) -> str:
    """Put the inputs (and the config, when it fits in a link) in the URL, with the reader's language
    when it is not English, so the link opens the plan as it was read; returns the query string. The
    address also keeps `?depth=engineer` (ui/depth.py; `from_dict` would drop it), while the returned
    link, which the page shows, is the same at both depths: it shares the plan, not the reader's depth."""
    params = {**to_query(inputs), **choice.link}
    if language() != DEFAULT:
        params["lang"] = language()
    try:
        st.query_params.from_dict({**params, **({"depth": ENGINEER} if engineer() else {})})
    except Exception:  # noqa: BLE001 — a URL that cannot be written is not worth failing the page
        pass
    from urllib.parse import urlencode

    return "?" + urlencode(params)


def memory_caption(p: Plan) -> str:
    """The bar's one-line caption: what each colour is (only the parts the bar has) and the red mark."""
    parts = [_("dark grey = the weights"), _("light grey = room the software needs while it runs")]
    if p.kv:
        parts.append(_("blue = the cache, which grows with the conversation"))
    if p.state:
        parts.append(_("purple = the fixed state, the same size at any length"))
    return _(
        "In the bar, {parts}. The red mark is the memory you can use: the bar must end before it."
    ).format(parts=pgettext("between the bar's colours", ", ").join(parts))


def speed_caption(plans: list[Plan], figure) -> str:
    """The speed chart's one-line caption: whether the line falls (computed from the sweep), what one tick to
    the right means (read off the figure's own ticks), and the marks the chart has."""
    speeds = [p.decode_tokens_per_s for p in plans if p.decode_tokens_per_s is not None]
    falls = len(speeds) > 1 and speeds[-1] < 0.9 * speeds[0]
    words = [
        _(
            "The blue line is the fastest this setting can write at each conversation length: it falls because "
            "every step reads the whole cache, which grows with the conversation."
        )
        if falls
        else _(
            "The blue line is the fastest this setting can write at each conversation length: it stays almost "
            "flat, because what a step reads hardly grows with the conversation."
        )
    ]
    ticks = list(figure.layout.xaxis.tickvals or [])
    if figure.layout.xaxis.type == "log" and len(ticks) > 1:
        words.append(_("Each tick to the right is {ratio:g}× longer.").format(ratio=ticks[1] / ticks[0]))
    names = {trace.name for trace in figure.data}
    trained = plans[0].trained_context
    if trained and _("trained for {trained:,} tokens").format(trained=trained) in names:
        words.append(_("The red dashed line marks the length the model was trained for."))
    if _("does not fit") in names:
        words.append(_("Red crosses: lengths that do not fit."))
    return sentences(words)
