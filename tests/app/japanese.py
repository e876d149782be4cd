"""Read a page rendered in Japanese and list the English sentences still on screen.

Everything the reader sees is scanned (text, widget labels, help and options, expanders, tables'
headers, chart titles, axes, legends, annotations, tick labels and hover text, the chart words);
code, formulas, links' targets and Material icon names are not text, nor is data the page quotes:
the reader's own text in an input box, and text inside 「」 (what the reader typed, what a model
wrote, a sample from the English training text). Three or more English words in a row count as an
English sentence, unless they are a name on the allow-list: model and method names, cited titles,
units and code a Japanese page shows as they are (`ALLOWED`, plus one name per line in
`tests/app/english_names/*.txt`).

Tables, data frames and charts are held to more (issue 41): their cells, headers, legends, ticks and
hover text are short ('tokens/s', 'batch 64', '180 W / 150 W cap'), so there a single English word in
lower case is already English on the page (`english_words_in`), unless it is a unit or a name the
data keeps as it is (`DATA_WORDS`).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app.driver import ROOT, assert_clean, element_strings, layout_words, page_path
from ui import live_chart

# Names kept in English on a Japanese page (Japanese ML writing keeps them so). Only names, titles,
# units and code: never a sentence.
ALLOWED = (
    "Kimi Delta Attention",
    "Gated DeltaNet",
    "Attention Residuals",
    "Mixture of Experts",
    "Multi-head Latent Attention",
    "Multi-Head Latent Attention",
    "Grouped-Query Attention",
    "Gated Delta Networks",
    "Transformers are RNNs",
    "Attention Is All You Need",
    "Language Models are Unsupervised Multitask Learners",
    "Kimi Linear",
    "Qwen3.5 0.8B",
    "GPT-2 small",
    "flash-linear-attention",
    "Hugging Face",
    "NVIDIA H200",
    "NVIDIA GeForce RTX",
    "Noto Sans CJK",
)

ALLOWED += tuple(
    line.strip()
    for path in sorted((Path(__file__).parent / "english_names").glob("*.txt"))
    for line in path.read_text(encoding="utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)
ALLOWED = tuple(sorted(set(ALLOWED), key=len, reverse=True))  # longest first: a name inside a name

_QUOTED = re.compile(r"「[^」]*」")  # data the page quotes: reader text, model output, training samples
_CODE = re.compile(r"`[^`]*`")  # inline code
_LATEX = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
_LINK_TARGET = re.compile(r"\]\([^)]*\)")  # markdown link target (the label stays)
_ICON = re.compile(r":material/[a-z0-9_]+:")
_URL = re.compile(r"https?://\S+")
_HOVER_FIELD = re.compile(r"%\{[^}]*\}|<extra>.*?</extra>|<[^>]+>")
# three or more English words in a row; a word has two letters or more ("K K A", a layer map's letter
# codes, and "C, C, d", a formula's symbols, are not sentences)
ENGLISH = re.compile(r"[A-Za-z][A-Za-z'’-]+(?:[ ,;:]+[A-Za-z][A-Za-z'’-]+){2,}")


# In tables and charts: a lower-case English word standing alone (not part of a file name, a code name
# or a model name: `config.json`, `num_ctx`, `llama-bench`, `q8_0` are not words here).
DATA_WORD = re.compile(r"(?<![\w.\-])[a-z]{2,}(?![\w.\-])")
DATA_WORDS = frozenset(
    line.strip()
    for line in (Path(__file__).parent / "english_names" / "data_words.txt")
    .read_text(encoding="utf-8")
    .splitlines()
    if line.strip() and not line.startswith("#")
)


def chart_text(spec: dict) -> list[str]:
    """Every word a plotly figure can show: titles, axis titles, tick labels, legend names,
    annotations, hover templates and hover text."""
    words = layout_words(spec)
    for trace in spec.get("data", ()):
        words.append(str(trace.get("name", "") or ""))
        words.append(str(trace.get("hovertemplate", "") or ""))
        for field in ("text", "hovertext", "customdata"):
            value = trace.get(field)
            if isinstance(value, str):
                words.append(value)
            elif isinstance(value, list):
                words += [str(v) for v in _flatten(value) if isinstance(v, str)]
        for axis in ("x", "y"):
            values = trace.get(axis)
            if isinstance(values, list):
                words += [v for v in _flatten(values) if isinstance(v, str)]
    return [w for w in words if w]


def _flatten(values):
    for v in values:
        if isinstance(v, list | tuple):
            yield from _flatten(v)
        else:
            yield v


def shown_text(node) -> list[str]:
    """All the text of an AppTest node and its children, in page order (nothing left out)."""
    children = getattr(node, "children", None)
    if children is not None:
        label = getattr(node, "label", "") or ""
        texts = [label] if isinstance(label, str) and label else []
        for key in sorted(children):
            texts += shown_text(children[key])
        return texts
    kind = getattr(node, "type", "")
    if kind in {"code", "latex"}:
        return []
    if kind == "bidi_component" and node.proto.component_name == live_chart.COMPONENT:
        return chart_text(live_chart.figure_of(node.proto))
    if kind in {"arrow_data_frame", "table"}:
        try:
            frame = node.value
            return [str(c) for c in frame.columns] + [
                str(v) for v in frame.to_numpy().ravel().tolist() if isinstance(v, str)
            ]
        except Exception:
            return []
    texts = []
    attrs = ("value", "label", "help", "body", "placeholder", "caption")
    if kind in {"text_input", "text_area"}:
        attrs = attrs[1:]  # its value is the reader's own text
    elif kind in {"radio", "selectbox", "multiselect", "select_slider", "button_group"}:
        attrs = attrs[1:]  # its value is a code; the options the reader sees are read below
    return texts + element_strings(node, attrs)


def english_in(text: str) -> list[str]:
    """The English sentences in one piece of shown text (after code, formulas, links' targets,
    icons, hover fields and allowed names are taken out)."""
    for pattern in (_QUOTED, _CODE, _LATEX, _LINK_TARGET, _ICON, _URL, _HOVER_FIELD):
        text = pattern.sub(" ", text)
    for name in ALLOWED:
        text = text.replace(name, " ")
    return [m.group(0) for m in ENGLISH.finditer(text)]


def english_words_in(text: str) -> list[str]:
    """The English words in one piece of a table, data frame or chart (after what `english_in` takes
    out): any lower-case word that is not a unit or a name kept as it is."""
    for pattern in (_QUOTED, _CODE, _LATEX, _LINK_TARGET, _ICON, _URL, _HOVER_FIELD):
        text = pattern.sub(" ", text)
    for name in ALLOWED:
        text = text.replace(name, " ")
    return [w for w in DATA_WORD.findall(text) if w not in DATA_WORDS]


def data_text(node) -> list[str]:
    """The text of every table, data frame and chart under an AppTest node: headers, cells, titles,
    axes, ticks, legends, annotations and hover text."""
    children = getattr(node, "children", None)
    if children is not None:
        return [text for key in sorted(children) for text in data_text(children[key])]
    kind = getattr(node, "type", "")
    if kind in {"arrow_data_frame", "table"} or (
        kind == "bidi_component" and node.proto.component_name == live_chart.COMPONENT
    ):
        return shown_text(node)
    return []


def english_left(at: AppTest) -> list[str]:
    """Every English sentence on a rendered page (main area and sidebar), and every English word in its
    tables, data frames and charts, each once."""
    found: list[str] = []
    for root in (at.main, at.sidebar):
        for text in shown_text(root):
            for sentence in english_in(text):
                if sentence not in found:
                    found.append(sentence)
        for text in data_text(root):
            for word in english_words_in(text):
                shown = f"{word} (in {text[:60]!r})"
                if shown not in found:
                    found.append(shown)
    return found


def japanese(page: str, timeout: float = 120) -> AppTest:
    """Run a page (a lesson slug, or a file from the repository root) once in Japanese, as the link
    `?lang=ja` opens it; fail on any exception."""
    from ui.course import LESSONS

    path = page_path(page) if page in {item.slug for item in LESSONS} else str(ROOT / page)
    at = AppTest.from_file(path, default_timeout=timeout)
    at.query_params["lang"] = "ja"
    at.run()
    assert_clean(at, f"first run of {page} in Japanese")
    return at


KANA_OR_KANJI = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")

# The catalog's typography and number rules (locale/ja/terms.toml: ratios as 倍, full-width punctuation
# beside Japanese, 京 past 10,000兆), read again on the page, where numbers and names are filled in.
TYPOGRAPHY = tuple(
    (rule["name"], re.compile(rule["regex"]))
    for rule in tomllib.loads((ROOT / "locale" / "ja" / "terms.toml").read_text(encoding="utf-8"))["pattern"]
)


def typography_left(at: AppTest) -> list[str]:
    """Every place a rendered page breaks a typography or number rule of the term table (code, quoted
    data, links' targets and hover fields left out), each once as 'rule: …text…'."""
    found: list[str] = []
    for root in (at.main, at.sidebar):
        for text in shown_text(root):
            for pattern in (_QUOTED, _CODE, _LATEX, _LINK_TARGET, _ICON, _URL, _HOVER_FIELD):
                text = pattern.sub(" ", text)
            for name, regex in TYPOGRAPHY:
                for m in regex.finditer(text):
                    shown = f"{name}: …{text[max(0, m.start() - 25) : m.end() + 15]}…"
                    if shown not in found:
                        found.append(shown)
    return found


def japanese_words(text: str) -> bool:
    """Whether `text` has Japanese in it (kana or kanji)."""
    return bool(KANA_OR_KANJI.search(text or ""))


def no_english(at: AppTest, when: str) -> None:
    """The page ran with no exception and shows no English sentence (`when` names the state)."""
    assert_clean(at, when)
    left = english_left(at)
    assert left == [], f"{when}: English left on screen: {left[:12]}"


def reads_japanese(at: AppTest, when: str) -> None:
    """`no_english`, and the term table's typography and number rules hold on the page (`typography_left`)."""
    no_english(at, when)
    wrong = typography_left(at)
    assert wrong == [], f"{when}: typography: {wrong[:12]}"


def open_toggles(at: AppTest, *toggles: str) -> None:
    """Switch each toggle (by key) on, one rerun each: answers, formulas and code shown."""
    for key in toggles:
        at.toggle(key=key).set_value(True).run()
