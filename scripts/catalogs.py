"""The translation catalogs: extract the course's strings with Babel, check the Japanese, merge, compile.

    python -m scripts.catalogs check              # every string translated, none fuzzy, placeholders agree
    python -m scripts.catalogs missing [PATH …]   # a .po of strings with no Japanese yet (to fill in)
    python -m scripts.catalogs update             # add new strings to messages.po, mark vanished ones obsolete
    python -m scripts.catalogs merge              # fold every other .po of a language into messages.po
    python -m scripts.catalogs compile            # build the .mo files (the app also does this on first use)

Strings are found where the code calls `_`, `N_`, `ngettext` or `pgettext` (core/i18n.py) in app.py,
lessons/, ui/ and core/.
"""

from __future__ import annotations

import argparse
import string
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po, write_po

from core.i18n import LOCALE_DIR, catalog_files, compile_catalog

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("app.py", "lessons", "ui", "core")
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2), "NP_": ((1, "c"), 2)}
TRANSLATED = ("ja",)  # languages besides the English source


@dataclass(frozen=True)
class Found:
    """One string in the code: its id (a tuple for plurals), context and where it is."""

    msgid: str | tuple[str, str]
    context: str | None
    where: tuple[str, int]


def source_files(paths: Iterable[str] = SOURCES) -> list[Path]:
    files: list[Path] = []
    for name in paths:
        path = (ROOT / name).resolve()
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return [f for f in files if "__pycache__" not in f.parts]


def extract(paths: Iterable[str] = SOURCES) -> list[Found]:
    """Every translatable string in `paths`, in file order."""
    found = []
    for path in source_files(paths):
        rel = str(path.relative_to(ROOT))
        for lineno, message, _comments, context in extract_from_file(
            "python", str(path), keywords=KEYWORDS, strip_comment_tags=True
        ):
            if not message or (isinstance(message, tuple) and not message[0]):
                continue
            found.append(Found(message, context, (rel, lineno)))
    return found


def catalogs(lang: str) -> list[tuple[Path, Catalog]]:
    out = []
    for po in catalog_files(lang):
        with po.open("rb") as f:
            out.append((po, read_po(f, locale=lang)))
    return out


def fields(text: str) -> list[str]:
    """The placeholders of a format string, each with its format spec: "{n}", "{x:.2f}"."""
    try:
        parsed = string.Formatter().parse(text)
        return sorted(
            f"{{{name}{':' + spec if spec else ''}}}" for _, name, spec, _ in parsed if name is not None
        )
    except ValueError as error:
        return [f"<unparsable: {error}>"]


def problems(lang: str) -> list[str]:
    """What is wrong with `lang`'s catalogs: untranslated, fuzzy, empty or mismatched placeholders, and
    two catalogs translating one string differently."""
    seen: dict[tuple, str] = {}
    out = []
    for po, catalog in catalogs(lang):
        rel = po.relative_to(ROOT)
        for message in catalog:
            if not message.id:
                continue
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            strs = message.string if isinstance(message.string, tuple) else (message.string,)
            name = f"{rel}: {ids[0][:70]!r}"
            if message.fuzzy:
                out.append(f"{name}: fuzzy")
            if not all(s.strip() for s in strs):
                out.append(f"{name}: no translation")
                continue
            for s in strs:
                if fields(s) != fields(ids[0]):
                    out.append(f"{name}: placeholders {fields(ids[0])} became {fields(s)}")
            key = (message.context, ids)
            if key in seen and seen[key] != strs[0]:
                out.append(f"{name}: translated differently in another catalog")
            seen.setdefault(key, strs[0])
    for item in extract():
        ids = item.msgid if isinstance(item.msgid, tuple) else (item.msgid,)
        if (item.context, ids) not in seen:
            out.append(f"{item.where[0]}:{item.where[1]}: {ids[0][:70]!r} has no {lang} translation")
    return out


def translated(lang: str) -> set[tuple]:
    return {
        (m.context, m.id if isinstance(m.id, tuple) else (m.id,))
        for _, catalog in catalogs(lang)
        for m in catalog
        if m.id and not m.fuzzy and all(m.string if isinstance(m.string, tuple) else (m.string,))
    }


def missing(lang: str, paths: Iterable[str]) -> Catalog:
    """A catalog of the strings in `paths` that `lang` does not translate yet, with where each is."""
    done = translated(lang)
    out = Catalog(locale=lang, project="From GPT-2 to Kimi K3", fuzzy=False)
    for item in extract(paths):
        ids = item.msgid if isinstance(item.msgid, tuple) else (item.msgid,)
        if (item.context, ids) not in done:
            out.add(
                item.msgid,
                "" if not isinstance(item.msgid, tuple) else ("",),
                [item.where],
                context=item.context,
            )
    return out


def write(catalog: Catalog, path: Path) -> None:
    """Write `catalog` to `path` whole or not at all: a failure half-way leaves the old file as it was."""
    partial = path.with_name(path.name + ".tmp")
    with partial.open("wb") as f:
        write_po(f, catalog, width=110, sort_by_file=True)
    partial.replace(path)


def template() -> Catalog:
    pot = Catalog(project="From GPT-2 to Kimi K3", fuzzy=False)
    for item in extract():
        pot.add(item.msgid, locations=[item.where], context=item.context)
    return pot


def _describe(catalog: Catalog, lang: str) -> None:
    """The header: what the file is and how it is kept (Babel's template placeholders replaced)."""
    catalog.header_comment = (
        f"# The course's {lang} catalog: one entry per string the code marks with _() and friends.\n"
        "# Kept with `python -m scripts.catalogs update` (new strings) and `check` (tests/test_catalogs.py)."
    )
    catalog.project, catalog.version = "From GPT-2 to Kimi K3", "1"
    catalog.msgid_bugs_address = ""
    catalog.last_translator = catalog.language_team = "the course's authors"
    catalog.revision_date = datetime.now(UTC)


def update(lang: str) -> Path:
    """messages.po with every string the code has now: new ones empty, vanished ones obsolete."""
    main = LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po"
    catalog = read_po(main.open("rb"), locale=lang) if main.exists() else Catalog(locale=lang, fuzzy=False)
    catalog.update(template(), no_fuzzy_matching=True)
    catalog.obsolete.clear()
    _describe(catalog, lang)
    main.parent.mkdir(parents=True, exist_ok=True)
    write(catalog, main)
    return main


def merge(lang: str) -> Path:
    """Fold every catalog of `lang` into messages.po (first translation of a string wins), delete the rest."""
    folder = LOCALE_DIR / lang / "LC_MESSAGES"
    main = folder / "messages.po"
    merged = Catalog(locale=lang, project="From GPT-2 to Kimi K3", fuzzy=False)
    parts = catalogs(lang)
    seen: set[tuple] = set()
    for _, catalog in parts:
        for message in catalog:
            key = (message.context, message.id)
            if message.id and message.string and key not in seen:
                seen.add(key)
                merged.add(
                    message.id,
                    message.string,
                    [
                        (path, line or 0) for path, line in message.locations
                    ],  # a hand-written entry may lack lines
                    flags=message.flags - {"fuzzy"} if not message.fuzzy else message.flags,
                    auto_comments=message.auto_comments,
                    context=message.context,
                )
    write(merged, main)
    for po, _ in parts:
        if po != main:
            po.unlink()
            po.with_suffix(".mo").unlink(missing_ok=True)
    update(lang)
    return main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("check", "missing", "update", "merge", "compile"))
    parser.add_argument("paths", nargs="*", help="for `missing`: files or folders (default: all sources)")
    parser.add_argument("--lang", default="ja", choices=TRANSLATED)
    args = parser.parse_args(argv)
    if args.command == "check":
        found = problems(args.lang)
        for line in found:
            print(line)
        print(f"{len(extract())} strings in the code; {len(found)} problems in the {args.lang} catalogs")
        return 1 if found else 0
    if args.command == "missing":
        write_po(sys.stdout.buffer, missing(args.lang, args.paths or SOURCES), width=110, omit_header=True)
        return 0
    if args.command == "update":
        print(update(args.lang))
    elif args.command == "merge":
        print(merge(args.lang))
    else:
        for po in catalog_files(args.lang):
            print(compile_catalog(po))
    return 0


if __name__ == "__main__":
    sys.exit(main())
