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
