"""The glossary: every term is defined (in a lesson's "new words" box) no later than the first lesson,
in course order, whose prose uses it — and the glossary page lists them all."""

from __future__ import annotations

import ast

import pytest

from core.glossary import BY_KEY, TERMS, alphabetical, get
from tests.app import driver
from ui.course import LESSONS, lesson

# ui helpers whose words a lesson shows as its own (the page calls them)
EXTRAS = {
    "gpt2": ("ui/models/gpt2.py", "ui/run_captions.py"),
    "kv_cache": ("ui/models/gpt2.py", "ui/run_captions.py", "ui/card_calculator.py"),
    "collisions": tuple(f"ui/recall/{p.name}" for p in sorted((driver.ROOT / "ui" / "recall").glob("*.py"))),
    "kimi_k3": ("ui/mini_k3.py",),
    "experts": ("ui/mini_k3.py",),
    "real_hybrid": ("ui/models/qwen35.py", "ui/real_hybrid_steps.py", "ui/models/offer.py"),
    "your_gpu": (
        *(f"ui/gpu/{p.name}" for p in sorted((driver.ROOT / "ui" / "gpu").glob("*.py"))),
        "core/specs/published.py",  # the published table the page shows
    ),
}
WALKED = [item for item in LESSONS if item.slug != "glossary" and item.exists]


def prose(tree: ast.AST) -> str:
    """Every string a reader could see: constants and f-string pieces with a space in them
    (identifiers, keys and file names have none), docstrings left out."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    parts = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and " " in node.value
        and id(node) not in docstrings
    ]
    return "\n".join(parts)


def new_words_calls(tree: ast.AST) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", "")) == "new_words"
    ]


def page(slug: str) -> tuple[str, str, set[str], ast.Module]:
    """(prose, source, keys defined by new_words) of a lesson with its ui extras."""
    texts, sources, defined = [], [], set()
    main = None
    for rel in (lesson(slug).file, *EXTRAS.get(slug, ())):
        source = (driver.ROOT / rel).read_text(encoding="utf-8")
        tree = ast.parse(source)
        main = main or tree
        texts.append(prose(tree))
        sources.append(source)
        for call in new_words_calls(tree):
            defined |= {a.value for a in call.args if isinstance(a, ast.Constant)}
            for keyword in call.keywords:  # the Engineer depth's own terms (ui/glossary.new_words)
                if keyword.arg == "engineer_keys" and isinstance(keyword.value, ast.Tuple):
                    defined |= {a.value for a in keyword.value.elts if isinstance(a, ast.Constant)}
    return "\n".join(texts), "\n".join(sources), defined, main


def test_glossary_covers_the_issue_list_and_points_at_real_lessons():
    must = {
        "token", "byte", "parameter", "layer", "block", "head", "channel", "embedding", "query", "key",
        "value", "softmax", "attention_weights", "transpose", "outer_product", "unit_vector", "fp32",
        "gib", "vram", "bandwidth", "pcie", "mla", "gqa", "ffn", "expert", "router", "recurrence", "wy",
        "roofline", "nvml", "tg128", "q4_0", "ngl", "num_ctx", "j_per_token",
    }  # fmt: skip
    assert must <= set(BY_KEY)
    for term in TERMS:
        lesson(term.lesson)  # an unknown slug fails
        assert term.sentence.endswith("."), term.key
        assert term.patterns, term.key
    with pytest.raises(ValueError):
        get("no-such-word")


def test_no_term_is_used_before_it_is_defined():
    """Walk the lessons in course order; a term used on a page must be in that page's new-words box
    or in an earlier one's. Defining a word that the page never uses is a mistake too."""
    defined_so_far: dict[str, str] = {}
    problems = []
    for item in WALKED:
        text, source, defined, _ = page(item.slug)
        for key in sorted(defined):
            if key not in BY_KEY:
                problems.append(f"{item.slug}: new_words names unknown term {key!r}")
            elif key in defined_so_far:
                problems.append(f"{item.slug}: {key!r} was already defined in {defined_so_far[key]}")
            elif not BY_KEY[key].used_in(text, source):
                problems.append(f"{item.slug}: defines {key!r} but never uses it")
        for key in defined:
            defined_so_far.setdefault(key, item.slug)
        for term in TERMS:
            if term.key not in defined_so_far and term.used_in(text, source):
                problems.append(f"{item.slug}: uses {term.key!r} ({term.name}) before any lesson defines it")
    assert not problems, "\n".join(problems)


def test_new_words_open_the_lesson():
    """The box comes right after the header, before the problem statement, so it is read first."""
    for item in WALKED:
        _, _, _, tree = page(item.slug)
        calls = new_words_calls(tree)
        if not calls:
            continue
        first = min(c.lineno for c in calls)
        # what the page runs top to bottom: helpers and fragments defined above the header draw
        # only when the page calls them, further down
        top_level = [stmt for stmt in tree.body if not isinstance(stmt, (ast.FunctionDef, ast.ClassDef))]
        renders = [
            node.lineno
            for stmt in top_level
            for node in ast.walk(stmt)
            if isinstance(node, ast.Call)
            and getattr(node.func, "id", "") in {"problem", "show_figure", "notice", "headline"}
        ]
        assert not renders or first < min(renders), f"{item.slug}: new_words comes after the page starts"


def test_glossary_page_lists_every_term_and_filters():
    at = driver.fresh("glossary")
    text = "\n".join(m.value for m in at.markdown)
    for term in TERMS:
        assert f"**{term.name}**" in text
    at.text_input(key="gl_find").input("softmax").run()
    shown = "\n".join(m.value for m in at.markdown)
    assert "**softmax**" in shown and "**router**" not in shown
    at.text_input(key="gl_find").input("zzzz").run()
    assert at.info, "an empty search says so"
    assert [t.key for t in alphabetical()][0] != ""


def test_hybrid_and_q4_sentences_carry_core_numbers():
    """The hybrid is about three to one, not exactly: its counts are K3's config; Q4_K_M is a Q4_K / Q6_K
    mix of about 4.9 bits per weight (core/plan/formats.py), not '4 bits with a shared scale'."""
    from core.plan.formats import Q6_K_BITS, WEIGHT_FORMATS
    from core.specs import SPECS

    k3 = SPECS["kimi_k3"]
    hybrid = get("hybrid").sentence
    assert f"{k3.num_linear_layers} KDA + {k3.num_full_attention_layers} full attention" in hybrid
    assert f"in its {k3.num_layers} layers" in hybrid
    assert k3.num_linear_layers + k3.num_full_attention_layers == k3.num_layers
    assert f"about {round(k3.num_linear_layers / k3.num_full_attention_layers)} KDA layers" in hybrid
    q4 = get("q4_0").sentence
    assert f"about {WEIGHT_FORMATS['q4_k_m'].bits:.1f} bits per weight" in q4  # 4.9 today
    assert f"({WEIGHT_FORMATS['q4_0'].bits:.1f} bits per weight)" in q4
    assert "Q6_K" in q4 and f"{Q6_K_BITS:.1f}" in q4


def test_the_words_the_issue_found_missing_are_in_the_glossary():
    """Issue 40 listed words a Story page shows that the glossary lacked: each is now matched by a term
    (so the rendered first-use test holds every page to explaining it), with one plain sentence."""
    found_missing = (
        "llama.cpp", "Ollama", "vLLM", "MXFP4", "loss", "learning rate", "seed", "checkpoint", "dense",
        "FLOPs", "log scale", "chunk", "full attention", "quantisation",
    )  # fmt: skip
    for word in found_missing:
        matching = [t.key for t in TERMS if t.used_in(f"the {word} here")]
        assert matching, f"no glossary term matches {word!r}"


def test_the_english_glossary_is_a_to_z():
    names = [t.name.lower().lstrip("-") for t in alphabetical()]
    assert names == sorted(names)


def test_glossary_records_stay_english_and_the_names_japanese():
    """The order tests match English names and sentences; the Japanese is what a reader sees, with its English
    once in parentheses (none where the Japanese name already has Latin letters)."""
    from core.i18n import use_language
    from core.specs import SPECS

    term = get("hybrid")
    k3 = SPECS["kimi_k3"]
    with use_language("ja"):
        assert term.name == "hybrid" and "full attention in its" in term.sentence
        assert term.shown_name() == "ハイブリッド（hybrid）"
        assert f"{k3.num_layers}層のうち" in term.shown_sentence()
        assert get("gqa").shown_name() == "GQA（grouped-query attention）"
    assert get("hybrid").shown_name() == "hybrid"


def test_the_japanese_glossary_is_sorted_by_reading():
    """あいうえお順: the names Japanese writes in Latin letters first (A to Z), then every other name by
    its stored reading in the order of the kana table (voiced marks and ー read as dictionaries read
    them); each such name has a reading in hiragana that starts as the name does, when the name starts
    with kana. (The page lists them in that order: tests/app/japanese_walks.py, the glossary's walk.)"""
    from core.glossary import gojuon
    from core.i18n import use_language

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
