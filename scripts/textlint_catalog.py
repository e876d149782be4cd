"""The Japanese catalogs' msgstr as Markdown files textlint reads (scripts/textlint.sh, .textlintrc.json).

    python -m scripts.textlint_catalog [OUT]     # default OUT: artifacts/textlint

Files of at most 150 entries per catalog (locale/ja/LC_MESSAGES/<name>.po → OUT/<name>-NN.md: textlint's
time grows much faster than a file's length, 16 s in files of 150 against 158 s in one file of 2,400
entries on this repository's 2-core machine): every msgstr as its own paragraph,
after an HTML comment naming where the code uses it (textlint skips comments; its report's line number
leads back to the entry). What is not Japanese prose is taken out first, so the rules read sentences:
`{placeholders}` and plotly's `%{fields}` become 「X」, HTML tags and Material icon names go, `<br>` ends
a line, and inline code becomes one short span (a path or a command is not a sentence's length). Markdown
(bold, code, links) stays: textlint's Markdown reader skips code and link targets.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = ROOT / "locale" / "ja" / "LC_MESSAGES"
OUT = ROOT / "artifacts" / "textlint"

_FIELD = re.compile(r"%\{\{[^{}]*\}\}|%\{[^{}]*\}|\{\{[^{}]*\}\}|\{[^{}]*\}")  # {n}, {x:.2f}, %{y}, %{{x}}
_BREAK = re.compile(r"<br\s*/?>")
_EXTRA = re.compile(r"<extra>.*?</extra>", re.S)  # plotly's hover box side label (a name, not prose)
_TAG = re.compile(r"</?[a-zA-Z][^>]*>")
_ICON = re.compile(r":material/[a-z0-9_]+:")
_CODE = re.compile(r"`[^`\n]+`")  # inline code: a path or a command, not prose; kept as one short code span


NOT_PROSE = {"date pattern"}  # a msgctxt whose msgstr is a format for a library (Babel's "y年M月d日"), not text


def prose(msgstr: str) -> str:
    """One msgstr as the text a reader reads, with every stand-in for a value written as 「X」."""
    text = _EXTRA.sub("", msgstr)
    text = _BREAK.sub("\n", text)
    text = _TAG.sub("", text)
    text = _ICON.sub("", text)
    text = _CODE.sub("`code`", text)
    text = _FIELD.sub("X", text)
    return text.strip()


CHUNK = 150  # entries per file


def markdown(po: Path) -> str:
    """Every translated msgstr of one catalog, a paragraph each, after a comment saying where it is used."""
    return "\n".join(paragraphs(po))


def paragraphs(po: Path) -> list[str]:
    """One catalog's translated msgstr, each as a Markdown paragraph after its comment."""
    with po.open("rb") as f:
        catalog = read_po(f, locale="ja")
    parts = []
    for message in catalog:
        if not message.id or message.context in NOT_PROSE:
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        where = " ".join(f"{path}:{line}" if line else path for path, line in message.locations[:2]) or "-"
        for text in strings:
            if text and text.strip():
                parts.append(f"<!-- {po.name} {where} -->\n\n{prose(text)}\n")
    return parts


def write(out: Path = OUT) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.md"):
        old.unlink()
    written = []
    for po in sorted(CATALOGS.glob("*.po")):
        entries = paragraphs(po)
        for start in range(0, len(entries), CHUNK):
            path = out / f"{po.stem}-{start // CHUNK + 1:02d}.md"
            path.write_text("\n".join(entries[start : start + CHUNK]), encoding="utf-8")
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    for path in write(Path(argv[0]) if argv else OUT):
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
