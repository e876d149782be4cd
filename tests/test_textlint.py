"""textlint over the Japanese catalogs (issue 41): scripts/textlint.sh extracts every msgstr
(scripts/textlint_catalog.py) and lints it with the rules of .textlintrc.json, pinned in package-lock.json.
Runs where `npm ci` has filled node_modules (.ci/run does); elsewhere it skips and says why, so ./test.sh
on a machine without Node still passes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scripts.textlint_catalog import markdown, prose

ROOT = Path(__file__).resolve().parents[1]
TEXTLINT = ROOT / "node_modules" / ".bin" / "textlint"


def test_a_msgstr_becomes_the_prose_a_reader_reads():
    assert prose("{n}トークン<br>%{{y:.1f}} トークン/秒<extra>{name}</extra>") == "Xトークン\nX トークン/秒"
    assert prose("**:material/lightbulb: ひとことで言うと。** {takeaway}") == "** ひとことで言うと。** X"
    assert prose("出典：`core/specs/catalog.py`") == "出典：`code`"


def test_each_catalog_becomes_one_markdown_file_with_where_each_string_is(tmp_path):
    po = tmp_path / "messages.po"
    po.write_text(
        '#: lessons/map.py:12\nmsgid "Map"\nmsgstr "地図"\n\n#: ui/x.py:3\nmsgid "Untranslated"\nmsgstr ""\n',
        encoding="utf-8",
    )
    text = markdown(po)
    assert "<!-- messages.po lessons/map.py:12 -->\n\n地図\n" in text
    assert "Untranslated" not in text


def test_the_config_gives_a_reason_for_every_rule_it_turns_off():
    config = json.loads((ROOT / ".textlintrc.json").read_text(encoding="utf-8"))
    for preset, rules in config["rules"].items():
        for rule in rules:
            if rule.startswith("//"):
                continue
            reason = rules.get(f"//{rule}")
            assert reason, f"{preset}/{rule} is changed from the preset without a reason"


def test_the_japanese_catalogs_pass_textlint(tmp_path):
    if not TEXTLINT.exists():
        pytest.skip("node_modules is missing: run `npm ci` (Node and npm from Debian) to lint the catalogs")
    if shutil.which("node") is None:
        pytest.skip("node is not installed (apt-get install nodejs npm)")
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "textlint.sh")],
        cwd=ROOT,
        env={**os.environ, "TEXTLINT_OUT": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-6000:]
