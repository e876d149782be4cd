"""Code, comments, docs and test names call a lesson by its slug or its title, never by its number.

The outline (ui/course.py) numbers the lessons, and `lesson_ref` / `lesson_span` write "lesson 2" in
the pages' prose from it; a number typed anywhere else goes stale when a lesson is inserted (the primer
moved every lesson after it by one, and 84 mentions were wrong). Translations are read from the code's
own strings, so the catalogs are left out here.
"""

from __future__ import annotations

import re

from tests.git_files import ROOT, git_files

NUMBERED = re.compile(
    r"\blessons? ?\d|\blessons?_\d", re.IGNORECASE
)  # "lesson 2", "Lessons 3–7", "lesson4_run"
OUTLINE = {"ui/course.py", "tests/app/test_course.py", "tests/test_lessons_by_name.py"}  # made, checked, and this test
TEXT = (".py", ".md", ".sh", ".txt", ".toml", ".js", ".json", ".yaml", ".yml", ".cfg", "Dockerfile")


def test_no_lesson_is_named_by_its_number():
    found = []
    for name in git_files():
        path = ROOT / name
        if name in OUTLINE or name.startswith("locale/") or not name.endswith(TEXT):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        found += [
            f"{name}:{n}: {line.strip()[:100]}"
            for n, line in enumerate(text.splitlines(), 1)
            if NUMBERED.search(line)
        ]
        if NUMBERED.search(name):
            found.append(f"{name}: the file's own name")
    assert not found, "a lesson named by its number (use its slug or title):\n" + "\n".join(found)
