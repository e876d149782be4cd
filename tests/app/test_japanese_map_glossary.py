"""The map, What changed and the glossary in Japanese, driven through their widgets: every state a
reader can reach (precision, context length, model width, answers, formulas and code opened, a
glossary search) renders with no exception and no English sentence left (tests/app/japanese.py),
the tables' headers and cells read Japanese, and the charts' titles, axes and legends are Japanese.
The glossary keeps its English records (what the first-use tests match) and shows each Japanese name
with its English once in parentheses."""

from __future__ import annotations

import pytest

from core.figures.layer_map import k3_layer_map
from core.figures.specs import speed_vs_context_figure
from core.glossary import TERMS, get
from core.i18n import use_language
from core.roofline import CARDS
from core.specs import SPECS
from tests.app.driver import assert_clean, chart_spec, shown_title
from tests.app.japanese import chart_text, english_in, english_left, japanese, japanese_words, open_toggles
from tests.app.test_japanese_boards import japanese_engineer

pytestmark = pytest.mark.slow


def _table_english(at) -> list[str]:
    """English sentences in the static tables' headers and cells (st.table is not in english_left)."""
    found = []
    for table in at.table:
        frame = table.value
        cells = [str(c) for c in frame.columns] + [
            str(v) for v in frame.to_numpy().ravel() if isinstance(v, str)
        ]
        for cell in cells:
            found += english_in(cell)
    return found


def _no_english(at, when: str) -> None:
    assert_clean(at, when)
    left = english_left(at) + _table_english(at)
    assert left == [], f"{when}: English left on screen: {left[:12]}"


def test_the_map_reads_in_japanese_through_its_widgets():
    at = japanese_engineer("map")  # Story checked first; Engineer adds the code
    _no_english(at, "first run")
    story = at.table[0].value
    assert list(story.columns) == ["レッスン", "段階", "解決したこと", "残した課題"]
    assert all(japanese_words(cell) for cell in story["解決したこと"])
    # chosen by its English option; the reader sees it in Japanese
    at.radio(key="map_precision").set_value("8-bit (fp8)").run()
    assert at.radio(key="map_precision").options == ["16ビット（bf16）", "8ビット（fp8）"]
    _no_english(at, "8-bit cache")
    for label in ("1K", "1M"):
        at.select_slider(key="map_context").set_value(label).run()
        _no_english(at, f"context {label}")
        assert at.dataframe[0].value.columns[1] == f"{label}でのメモリ"
    open_toggles(at, "map_notice_size_reveal", "map_formula", "map_code")
    _no_english(at, "answer, formula and code open")
    (words,) = [e for e in at.expander if e.label.startswith("これから出会う用語")]
    shown = " ".join(m.value for m in words.markdown)
    assert "**トークン（token）**" in shown and "**KVキャッシュ**" in shown  # English once, where it helps


def test_the_map_chart_is_japanese():
    at = japanese("map")
    spec = chart_spec(at, "map_memory_chart")
    assert shown_title(at, spec) == "新しいトークン1つがキャッシュに加えるメモリ"
    assert spec["layout"]["xaxis"]["title"]["text"] == "1トークンあたり（KiB）"
    words = chart_text(spec)
    assert [w for w in words if english_in(w)] == []
    assert any("層すべてが増える" in w for w in words)


def test_what_changed_reads_in_japanese_through_its_widgets():
    at = japanese_engineer("what_changed")  # Story checked first; Engineer adds the code
    _no_english(at, "first run")
    rules = at.table[0].value
    assert list(rules.columns)[:3] == ["レッスン", "段階", "すること"]
    at.selectbox(key="wc_width").set_value("GPT-2 small's width").run()
    assert "GPT-2 small の幅" in at.selectbox(key="wc_width").options
    _no_english(at, "GPT-2 width")
    for label in ("1K", "1M"):
        at.select_slider(key="wc_context").set_value(label).run()
        _no_english(at, f"context {label}")
    open_toggles(at, "wc_notice_same_size_reveal", "wc_notice_mix_reveal", "wc_formula", "wc_code")
    _no_english(at, "answers, formula and code open")
    story = chart_spec(at, "wc_story_chart")
    assert shown_title(at, story) == "1Mトークンでのすべての段階"
    subplot_titles = [a["text"] for a in story["layout"]["annotations"]]
    assert "1系列あたりに持つメモリ" in subplot_titles and "次のトークンのための計算" in subplot_titles
    memory = chart_spec(at, "wc_memory_chart")
    assert shown_title(at, memory) == "テキストが長くなるにつれて持つメモリ"
    assert all(japanese_words(trace["name"]) for trace in memory["data"])


def test_the_glossary_reads_and_searches_in_japanese():
    at = japanese("glossary")
    _no_english(at, "every word")
    text = "\n".join(m.value for m in at.markdown)
    assert "**バリュー（value）**" in text  # the glossary's own word, not another page's 値
    (listing,) = [m.value for m in at.markdown if m.value.startswith("- **")]
    assert listing.count("\n- ") + 1 == len(TERMS)  # every word, each on its own line
    for query, found in (
        ("softmax", "**ソフトマックス（softmax）**"),
        ("ソフトマックス", "**ソフトマックス（softmax）**"),
        ("そふとまっくす", "**ソフトマックス（softmax）**"),  # a reading in hiragana finds its katakana
        ("こくばん", "**黒板"),  # and a kanji name by its reading
    ):
        at.text_input(key="gl_find").input(query).run()
        _no_english(at, f"search {query}")
        assert found in "\n".join(m.value for m in at.markdown)
    at.text_input(key="gl_find").input("zzzz").run()
    _no_english(at, "nothing found")
    assert at.info and "「zzzz」" in at.info[0].value


def test_the_router_and_its_sidebar_read_in_japanese():
    at = japanese("app.py")
    _no_english(at, "the router's first page and its sidebar")


def test_glossary_records_stay_english_and_the_names_japanese():
    """The order tests match English names and sentences; the Japanese is what a reader sees."""
    term = get("hybrid")
    k3 = SPECS["kimi_k3"]
    with use_language("ja"):
        assert term.name == "hybrid" and "full attention in its" in term.sentence
        assert term.shown_name() == "ハイブリッド（hybrid）"
        assert f"{k3.num_layers}層のうち" in term.shown_sentence()
        assert get("gqa").shown_name() == "GQA（grouped-query attention）"  # Latin in it: no second English
    assert get("hybrid").shown_name() == "hybrid"


def test_the_other_pages_charts_from_specs_are_japanese():
    """The speed-vs-context and layer-map charts (drawn on other lessons) speak Japanese too."""
    k3 = SPECS["kimi_k3"]
    card = next(iter(CARDS.values()))
    with use_language("ja"):
        figures = [
            speed_vs_context_figure(SPECS["llama3_8b"], card, [1024, 8192, 131072, 1048576]),
            speed_vs_context_figure(k3, card, [1024, 8192]),  # does not fit: the annotation says so
            k3_layer_map(k3),
        ]
    for fig in figures:
        words = chart_text(fig.to_plotly_json())
        assert [w for w in words if english_in(w)] == [], words
        assert any(japanese_words(w) for w in words)


def test_the_japanese_glossary_is_sorted_by_reading():
    """あいうえお順: the names Japanese writes in Latin letters first (A to Z), then every other name by
    its stored reading in the order of the kana table (voiced marks and ー read as dictionaries read
    them); each such name has a reading in hiragana that starts as the name does, when the name starts
    with kana. The page lists them in that order."""
    from core.glossary import alphabetical, gojuon

    def hiragana(text: str) -> str:
        return "".join(chr(ord(c) - 0x60) if "ァ" <= c <= "ヶ" else c for c in text)

    with use_language("ja"):
        order = alphabetical()
        shown = [t.shown_name() for t in order]
        latin = [t for t, name in zip(order, shown, strict=True) if name.lstrip("-")[0].isascii()]
        kana = [t for t, name in zip(order, shown, strict=True) if not name.lstrip("-")[0].isascii()]
        assert order == latin + kana, "Latin-lettered names come first"
        assert [t.name.lower().lstrip("-") for t in latin] == sorted(
            t.name.lower().lstrip("-") for t in latin
        )
        assert all(t.reading for t in kana), [t.key for t in kana if not t.reading]
        for t in kana:
            assert all("ぁ" <= c <= "ゖ" or c == "ー" for c in t.reading), (t.key, t.reading)
            first = hiragana(t.shown_name()[0])
            if "ぁ" <= first <= "ゖ":  # a kana name: its reading starts with the same sound
                assert gojuon(t.reading)[0] == gojuon(first)[0], (t.key, t.reading)
        readings = [gojuon(t.reading) for t in kana]
        assert readings == sorted(readings)
    assert gojuon("とーくん") == "とおくん" and gojuon("かーねる") < gojuon(
        "がくしゅうりつ"
    )  # かあ… before かく…
    at = japanese("glossary")
    (listing,) = [m.value for m in at.markdown if m.value.startswith("- **")]
    with use_language("ja"):
        names = [f"**{t.shown_name()}**" for t in alphabetical()]
    positions = [listing.index(name) for name in names]
    assert positions == sorted(positions), "the page lists the words in reading order"
