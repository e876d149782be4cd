"""The Japanese catalogs against the code: every string the code marks has a Japanese translation,
none empty or fuzzy, placeholders the same in both languages (`python -m scripts.catalogs check`)."""

from __future__ import annotations

import pytest

from scripts import catalogs


def test_every_string_has_japanese_with_the_same_placeholders():
    problems = catalogs.problems("ja")
    assert not problems, f"{len(problems)} catalog problems, e.g.:\n" + "\n".join(problems[:40])


@pytest.mark.parametrize(
    ("english", "japanese", "agree"),
    [
        ("{n} tokens", "{n}トークン", True),
        ("{x:.2f} ms", "{x:.2f} ミリ秒", True),
        ("{x:.2f} ms", "{x} ミリ秒", False),  # the format spec was lost
        ("{a} and {b}", "{a}と{c}", False),
    ],
)
def test_placeholder_check_catches_a_changed_field(english, japanese, agree):
    assert (catalogs.fields(english) == catalogs.fields(japanese)) is agree


def test_a_new_english_string_without_japanese_is_reported(tmp_path, monkeypatch):
    source = tmp_path / "page.py"
    source.write_text('from core.i18n import _\n_("A sentence nobody translated yet.")\n')
    monkeypatch.setattr(catalogs, "ROOT", tmp_path)
    monkeypatch.setattr(catalogs, "SOURCES", ("page.py",))
    found = catalogs.extract(("page.py",))
    assert [f.msgid for f in found] == ["A sentence nobody translated yet."]
    missing = catalogs.missing("ja", ("page.py",))
    assert [m.id for m in missing if m.id] == ["A sentence nobody translated yet."]


def test_merge_takes_a_hand_written_catalog_without_line_numbers(tmp_path, monkeypatch):
    """A helper's catalog written by hand (`#: lessons/page.py` with no line) folds into messages.po, and a
    failed write never leaves messages.po cut short."""
    folder = tmp_path / "ja" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    (folder / "messages.po").write_text('msgid "Map"\nmsgstr "地図"\n', encoding="utf-8")
    (folder / "part.po").write_text(
        '#: lessons/page.py\nmsgid "Story"\nmsgstr "ストーリー"\n', encoding="utf-8"
    )
    monkeypatch.setattr(catalogs, "LOCALE_DIR", tmp_path)
    monkeypatch.setattr(
        catalogs,
        "catalogs",
        lambda lang: [(p, catalogs.read_po(p.open("rb"), locale=lang)) for p in sorted(folder.glob("*.po"))],
    )
    monkeypatch.setattr(catalogs, "update", lambda lang: folder / "messages.po")
    catalogs.merge("ja")
    merged = (folder / "messages.po").read_text(encoding="utf-8")
    assert "ストーリー" in merged and "地図" in merged
    assert not (folder / "part.po").exists()

    def broken(f, catalog, **kwargs):
        f.write(b"half")
        raise RuntimeError("disk full")

    monkeypatch.setattr(catalogs, "write_po", broken)
    with pytest.raises(RuntimeError):
        catalogs.write(
            catalogs.read_po((folder / "messages.po").open("rb"), locale="ja"), folder / "messages.po"
        )
    assert (folder / "messages.po").read_text(encoding="utf-8") == merged
