"""'Check yourself' (issue 45): two or three questions at the end of every lesson, on its one idea, and
what the reader's browser keeps of the checks they passed.

Modules, one job each: `questions` (the two kinds of question and how an answer is judged), `bank`
(which lessons have a check, and their builders), `memory`, `boards`, `rewrites`, `hybrids`, `hardware`
(the questions, by part of the course), `progress` (the browser's stored record, read defensively).
The widget is ui/checks.py; progress in the reader's session and browser is ui/progress.py.
"""

from core.checks.bank import CHECKED, NOT_CHECKED, questions
from core.checks.progress import STORAGE_KEY, read_stored, stored_form
from core.checks.questions import Choice, Number, Question, all_right

__all__ = [
    "CHECKED",
    "NOT_CHECKED",
    "STORAGE_KEY",
    "Choice",
    "Number",
    "Question",
    "all_right",
    "questions",
    "read_stored",
    "stored_form",
]
