"""One pointer to the primer (vectors and matrices), placed where a page first multiplies vectors or matrices."""

from __future__ import annotations

from ui.course import lesson_ref
from ui.lesson import link_to


def primer_pointer(what: str) -> None:
    """A short link to the primer for readers new to `what` ("matrix products", "dot products" …).

    Short on purpose: a link label is cut, not wrapped, on a phone.
    """
    link_to("primer", f"New to {what}? See {lesson_ref('primer')}")
