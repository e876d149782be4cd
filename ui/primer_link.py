"""One pointer to the primer (vectors and matrices), placed where a page first multiplies vectors or matrices."""

from __future__ import annotations

from core.i18n import N_, _
from ui.course import lesson_ref
from ui.lesson import link_to

# what the pages point from, marked here so each is translated where it is shown (`_(what)`)
TOPICS = (N_("matrices"), N_("matrix products"), N_("dot products"), N_("outer products like k vᵀ"))


def primer_pointer(what: str) -> None:
    """A short link to the primer for readers new to `what` ("matrix products", "dot products" …),
    shown in the reader's language (an English `what` from `TOPICS`, or one already translated).

    Short on purpose: a link label is cut, not wrapped, on a phone.
    """
    link_to("primer", _("New to {what}? See {lesson}").format(what=_(what), lesson=lesson_ref("primer")))
