"""The A real hybrid page and the engineers' "Go deeper" sections (ui/deeper.py) in Japanese: rendered
under AppTest as `?lang=ja` opens them, clicked through, with no exception and no English sentence left
(tests/app/japanese.py), and the charts' titles and axes in Japanese."""

from __future__ import annotations

import re

import huggingface_hub.constants
import pytest

from core.i18n import use_language
from core.models import fetch
from tests.app.driver import assert_clean, chart_spec, shown_title
from tests.app.japanese import english_in, english_left, japanese, shown_text

pytest.importorskip("transformers")

ENGINEERS = ":material/engineering:"  # the icon of every Engineer heading (ui.depth.engineer_section)
KANA = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")  # hiragana, katakana or kanji: Japanese words


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from bench.hf_tiny_qwen35 import make_checkpoint

    return make_checkpoint(tmp_path_factory.mktemp("qwen35") / "tiny-qwen35")


def _point_at(monkeypatch, folder, cache_dir) -> None:
    """Offer `folder` (or nothing) as the page's Qwen3.5, with an empty Hugging Face cache."""
    from ui.models.qwen35 import found_checkpoints

    if folder is None:
        monkeypatch.delenv(fetch.ENV_QWEN35, raising=False)
    else:
        monkeypatch.setenv(fetch.ENV_QWEN35, str(folder))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache_dir))
    monkeypatch.delenv("COURSE_PUBLIC", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    found_checkpoints.clear()


def _japanese(text: str) -> bool:
    return bool(KANA.search(text)) and not english_in(text)


@pytest.mark.slow
def test_the_real_hybrid_reads_in_japanese_through_its_steps(folder, tmp_path, monkeypatch):
    _point_at(monkeypatch, folder, tmp_path)
    at = japanese("real_hybrid")
    assert english_left(at) == []
    at.query_params["depth"] = "engineer"  # everything, the code toggle too
    at.run()
    assert english_left(at) == []
    for _ in range(3):
        at.button(key="rh_step_step").click().run()
    assert_clean(at, "after Step in Japanese")
    assert any(m.value.startswith("**トークン 3") for m in at.markdown)  # the step status in Japanese
    for key in ("rh_n1_reveal", "rh_n2_reveal", "rh_formula", "rh_code"):
        at.toggle(key=key).set_value(True).run()
    at.selectbox(key="rh_layer").select(2).run()
    at.selectbox(key="rh_head").select(1).run()
    assert_clean(at, "answers, formula, code, another layer and head in Japanese")
    assert at.selectbox(key="rh_layer").format_func(2) == "層 3"
    assert english_left(at) == []
    at.text_input(key="rh_prompt").input("Hello there").run()  # not the default: the switch answer changes
    assert_clean(at, "the reader's own text in Japanese")
    assert english_left(at) == []


@pytest.mark.slow
def test_the_real_hybrids_charts_speak_japanese(folder, tmp_path, monkeypatch):
    _point_at(monkeypatch, folder, tmp_path)
    at = japanese("real_hybrid")
    board_spec = chart_spec(at, "rh_board")
    title = shown_title(at, board_spec)  # shown as bold text above the chart
    assert _japanese(title) and "黒板" in title
    board = board_spec["layout"]
    assert _japanese(board["xaxis"]["title"]["text"]) and _japanese(board["yaxis"]["title"]["text"])
    fade = chart_spec(at, "rh_fade")
    titles = [a["text"] for a in fade["layout"]["annotations"]]
    assert "減衰 α（1 = すべて残す）" in titles and "書き込みの強さ β" in titles
    memory = chart_spec(at, "rh_memory")
    assert all(_japanese(trace["name"]) for trace in memory["data"])
    assert _japanese(memory["layout"]["yaxis"]["title"]["text"])


def test_without_weights_the_page_explains_in_japanese(tmp_path, monkeypatch):
    _point_at(monkeypatch, None, tmp_path)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)  # online: the page offers its Download button
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    at = japanese("real_hybrid")
    assert english_left(at) == []
    at.query_params["depth"] = "engineer"  # the released model's size and command are an engineer's
    at.run()
    assert english_left(at) == []
    info = " ".join(i.value for i in at.info)
    assert "約1.7 GB" in info and "python -m core.models.fetch qwen3.5-0.8b" in info


def _engineers_sections(node, label: str, found: list) -> list:
    """The sections drawn under the inline Engineer heading `label` (ui.depth.engineer_section): the element
    right after the heading."""
    children = getattr(node, "children", None)
    if children is None:
        return found
    keys = sorted(children)
    for i, key in enumerate(keys):
        child = children[key]
        if getattr(child, "type", "") == "markdown" and child.value == f"#### {ENGINEERS} {label}":
            if i + 1 < len(keys):
                found.append(children[keys[i + 1]])
        else:
            _engineers_sections(child, label, found)
    return found


@pytest.mark.parametrize(
    ("slug", "label"),
    [
        ("chunks", "もっと詳しく（エンジニア向け）"),
        ("forgetting", "もっと詳しく（エンジニア向け）"),
        ("kimi_k3", "もっと詳しく（エンジニア向け）"),
        ("experts", "もっと詳しく（エンジニア向け）"),
        ("planner", "もっと詳しく：ハイブリッドを推論サーバーで動かす（黒板 + KVキャッシュ）"),
    ],
)
def test_each_go_deeper_section_reads_in_japanese(slug, label):
    with use_language("ja"):  # the radios' format functions run here too
        at = japanese(slug)
        assert _engineers_sections(at.main, label, []) == []  # Engineer-only: Story never shows it
        at.query_params["depth"] = "engineer"
        at.run()
    assert_clean(at, f"{slug} at Engineer depth in Japanese")
    sections = _engineers_sections(at.main, label, [])
    assert len(sections) == 1, f"no Engineer section '{label}' on {slug}"
    text = shown_text(sections[0])
    assert len(text) > 2 and all(KANA.search(t) or not english_in(t) for t in text)
    assert [s for t in text for s in english_in(t)] == []


def test_the_planner_batch_link_is_japanese():
    at = japanese("kimi_k3")
    at.query_params["depth"] = "engineer"  # the batch link sits in the Engineer part of the page
    at.run()
    assert any(
        m.value == "**→ バッチで重みを共有するしくみ：バッチ 16 でプランナーを開く**" for m in at.markdown
    )
