"""Streamlit's websocket protocol as the browser speaks it: the BackMsgs it sends, the page it keeps.

The load test (`python -m bench.load`) drives the server the way Streamlit's own frontend does
(streamlit 1.67, `static/js/index.*.js`, `sendRerunBackMsg`), so the server does exactly a
browser's work per click:

- every interaction is one `BackMsg.rerun_script` (a `ClientState`): on connect with the URL path
  as `page_name` and no `page_script_hash`; after that with the current page's hash (from the
  `navigation` message) and the widget states; a click sets the button's `trigger_value`, a
  widget inside an `st.fragment` sends that fragment's id (the server reruns only the fragment);
- the frontend keeps a message cache: `new_element` deltas of >= 10 kB arrive flagged
  `metadata.cacheable`, the next rerun lists their hashes in `cached_message_hashes`, and the
  server then sends a `ref_hash` instead of the element. An entry expires when more than two runs
  have finished since it was last used (`global.maxCachedMessageAge`; a fragment's run ages only
  that fragment's entries), as in the frontend.

Widget states: the frontend sends every widget's current value; this client sends the values it
set itself plus the trigger. The server keeps the previous value of any widget not in the message
(`SessionState._compact_state`), so the script sees the same values.

`PageView` applies ForwardMsgs to a flat model of the page (element by delta path), drops what a
finished run did not redraw, and answers what the load test reads: widget ids, the step counter,
the generated text, errors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

MAX_CACHED_MESSAGE_AGE = 2  # streamlit's global.maxCachedMessageAge: runs a cached message survives unused
FINISHED = {
    ForwardMsg.FINISHED_SUCCESSFULLY: "full",
    ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY: "fragment",
    ForwardMsg.FINISHED_WITH_COMPILE_ERROR: "compile_error",
    ForwardMsg.FINISHED_EARLY_FOR_RERUN: "early",
}
# step_controls' status (ui/stepped.py), as markdown or as the browser shows it without the bold:
# "byte 3 of 120", "token 120 of 120 — the end; press Reset …", and before the first Step of a page
# that shows its whole run "the whole run — Step replays from byte 1 of 120"
STEP_STATUS = re.compile(r"^(?:\S+ (\d+) of (\d+)(?: — .*)?|.+ — Step replays from \S+ 1 of (\d+))$", re.S)
Path = tuple[int, ...]


def step_status(text: str) -> tuple[int, int] | None:
    """(step shown, steps in the run) from a Step-controls status line, markdown or rendered; 0
    before the first Step; None for any other text. The one reader of that line: the load bench,
    its Chromium reader and the page tests all call it."""
    found = STEP_STATUS.match(text.replace("**", "").strip())
    if found is None:
        return None
    return (0, int(found[3])) if found[3] else (int(found[1]), int(found[2]))


# -- what the browser sends ---------------------------------------------------------------------


def trigger(widget_id: str) -> WidgetState:
    """A button click (`trigger_value`: true for this one run, then false again)."""
    return WidgetState(id=widget_id, trigger_value=True)


def slider_value(widget_id: str, *values: float) -> WidgetState:
    """A numeric st.slider's value (one number, or two for a range): `double_array_value`."""
    state = WidgetState(id=widget_id)
    state.double_array_value.data.extend(float(v) for v in values)
    return state


def text_value(widget_id: str, text: str) -> WidgetState:
    """A text input's value after the reader pressed Enter: `string_value`."""
    return WidgetState(id=widget_id, string_value=text)


def rerun_msg(
    *,
    page_name: str = "",
    page_script_hash: str = "",
    widgets: Iterable[WidgetState] = (),
    fragment_id: str = "",
    cached_hashes: Iterable[str] = (),
    query_string: str = "",
    url: str = "",
) -> bytes:
    """The serialised `BackMsg.rerun_script` the frontend sends for a page load or an interaction."""
    msg = BackMsg()
    state = msg.rerun_script
    state.query_string = query_string
    state.page_script_hash = page_script_hash
    state.page_name = page_name
    state.fragment_id = fragment_id
    state.widget_states.widgets.extend(widgets)
    state.cached_message_hashes.extend(cached_hashes)
    info = state.context_info
    info.timezone, info.timezone_offset, info.locale = "UTC", 0, "en-US"
    info.url, info.is_embedded, info.color_scheme = url, False, "light"
    return msg.SerializeToString()


# -- what the browser keeps ---------------------------------------------------------------------


@dataclass
class Shown:
    """One element on the page and the fragment that drew it ('' = the whole page)."""

    element: Element
    fragment_id: str


@dataclass
class PageView:
    """The page as a browser would show it, built from the ForwardMsgs of one session."""

    elements: dict[Path, Shown] = field(default_factory=dict)
    page_script_hash: str = ""
    errors: list[str] = field(default_factory=list)  # exceptions and error boxes, as one line each
    page_not_found: int = 0  # "Page not found" dialogs the server asked the browser to show
    bytes_received: int = 0
    finished: str | None = None  # how the last run ended (see FINISHED), None while one is running
    _cache: dict[str, tuple[ForwardMsg, int]] = field(default_factory=dict)  # hash → (msg, last run)
    _runs: int = 0
    _drawn: set[Path] = field(default_factory=set)  # paths written by the run in progress
    _fragment: str = ""  # the fragment the run in progress is for

    def start_run(self, fragment_id: str = "") -> None:
        """Call before sending a rerun: what it will redraw is tracked from here."""
        self.finished, self._drawn, self._fragment = None, set(), fragment_id

    def cached_hashes(self) -> list[str]:
        return list(self._cache)

    def apply(self, data: bytes) -> str:
        """Apply one websocket frame; returns the message's type ('ref_hash' resolved to its target)."""
        self.bytes_received += len(data)
        msg = ForwardMsg()
        msg.ParseFromString(data)
        kind = msg.WhichOneof("type")
        if kind == "ref_hash":
            msg = self._resolve(msg)
            kind = msg.WhichOneof("type")
        elif msg.metadata.cacheable:
            self._cache[msg.hash] = (msg, self._runs)
        if kind == "delta":
            self._delta(msg)
        elif kind == "navigation":
            self.page_script_hash = msg.navigation.page_script_hash
        elif kind == "new_session" and not self.page_script_hash:
            self.page_script_hash = msg.new_session.page_script_hash
        elif kind == "page_not_found":
            self.page_not_found += 1
        elif kind == "script_finished":
            self._finish(FINISHED.get(msg.script_finished, str(msg.script_finished)))
        return kind

    def _resolve(self, ref: ForwardMsg) -> ForwardMsg:
        if ref.ref_hash not in self._cache:
            raise ValueError(f"the server referred to a message this client never cached: {ref.ref_hash}")
        cached, _ = self._cache[ref.ref_hash]
        self._cache[ref.ref_hash] = (cached, self._runs)
        msg = ForwardMsg()
        msg.CopyFrom(cached)
        msg.metadata.CopyFrom(ref.metadata)  # the reference carries where the element goes
        return msg

    def _delta(self, msg: ForwardMsg) -> None:
        path = tuple(msg.metadata.delta_path)
        self._drawn.add(path)
        delta = msg.delta
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        self.elements[path] = Shown(element, delta.fragment_id)
        kind = element.WhichOneof("type")
        if kind == "exception":
            self.errors.append(f"exception {element.exception.type}: {element.exception.message}"[:300])
        elif kind == "alert" and element.alert.format == element.alert.ERROR:
            self.errors.append(f"error box: {element.alert.body}"[:300])

    def _finish(self, how: str) -> None:
        self.finished = how
        if how in ("full", "fragment"):
            # what this run did not redraw is gone (for a fragment run: only the fragment's own)
            stale = [
                path
                for path, shown in self.elements.items()
                if path not in self._drawn and (how == "full" or shown.fragment_id == self._fragment)
            ]
            for path in stale:
                del self.elements[path]
        if how != "early":  # the frontend's ForwardMsgCache.incrementRunCount
            self._runs += 1
            old = [
                h
                for h, (msg, seen) in self._cache.items()
                if self._runs - seen > MAX_CACHED_MESSAGE_AGE
                and (how != "fragment" or msg.delta.fragment_id == self._fragment)
            ]
            for h in old:
                del self._cache[h]

    # -- reading the page ------------------------------------------------------------------------

    def in_order(self) -> list[tuple[Path, Shown]]:
        return sorted(self.elements.items())

    def widget(self, key: str) -> tuple[str, str]:
        """(widget id, fragment id) of the widget created with `key=key` (its id ends in '-key')."""
        for _, shown in self.in_order():
            kind = shown.element.WhichOneof("type")
            widget_id = getattr(getattr(shown.element, kind), "id", "") if kind else ""
            if isinstance(widget_id, str) and widget_id.endswith(f"-{key}"):
                return widget_id, shown.fragment_id
        raise LookupError(f"no widget with key {key!r} on the page")

    def counter(self) -> tuple[int, int]:
        """(step shown, steps in the run) from the Step controls' status line."""
        for _, shown in self.in_order():
            if shown.element.WhichOneof("type") == "markdown":
                if found := step_status(shown.element.markdown.body):
                    return found
        raise LookupError("no step counter ('**byte t of n**') on the page")

    def code_texts(self) -> list[str]:
        """Every plain code block's text, top to bottom (the generated text is one of them)."""
        return [
            shown.element.code.code_text
            for _, shown in self.in_order()
            if shown.element.WhichOneof("type") == "code" and shown.element.code.language in ("", "plaintext")
        ]
