"""UTF-8 byte tokenizer: every string in, 256 token ids, never fails.

GPT-2 itself uses byte-level BPE over these same 256 bytes (Radford et al. 2019);
the course keeps only the byte layer so any text — emoji, Japanese, control
characters — becomes tokens with no vocabulary file and no unknown token.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.i18n import _

VOCAB_SIZE = 256

# Lone surrogates ("\ud800") are legal in a Python str but not in UTF-8;
# "surrogatepass" lets them through so that decode(encode(s)) == s for every s.
_ERRORS = "surrogatepass"


def encode(text: str) -> list[int]:
    """Text → byte ids in [0, 256)."""
    if not isinstance(text, str):
        raise TypeError(f"encode() wants a str, got {type(text).__name__}")
    return list(text.encode("utf-8", errors=_ERRORS))


def decode(ids: list[int] | tuple[int, ...], errors: str = _ERRORS) -> str:
    """Byte ids → text. A partial multi-byte character (mid-generation) becomes U+FFFD."""
    data = bytes(int(i) for i in ids)
    try:
        return data.decode("utf-8", errors=errors)
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


def token_label(token_id: int) -> str:
    """A short readable label for one byte: printable ASCII as itself, others as hex."""
    token_id = int(token_id)
    if not 0 <= token_id < VOCAB_SIZE:
        raise ValueError(f"token id {token_id} is outside 0..{VOCAB_SIZE - 1}")
    ch = chr(token_id)
    if ch == " ":
        return "␣"
    if ch == "\n":
        return "⏎"
    if 33 <= token_id < 127:
        return ch
    return f"x{token_id:02X}"


def byte_labels(ids: list[int]) -> list[str]:
    """A readable label for every byte of a text: ASCII as `token_label` shows it, and each byte of a
    multi-byte UTF-8 character as the character with its place ('猫 1/3', '猫 2/3', '猫 3/3');
    bytes that do not form a character fall back to hex."""
    labels: list[str] = []
    i = 0
    while i < len(ids):
        lead = int(ids[i])
        size = 2 if 0xC0 <= lead < 0xE0 else 3 if 0xE0 <= lead < 0xF0 else 4 if 0xF0 <= lead < 0xF8 else 1
        chunk = bytes(int(b) for b in ids[i : i + size])
        char = None
        if size > 1 and len(chunk) == size:
            try:
                char = chunk.decode("utf-8")
            except UnicodeDecodeError:
                char = None
        if char is None or not char.isprintable():
            labels.append(token_label(lead))
            i += 1
            continue
        labels.extend(f"{char} {k + 1}/{size}" for k in range(size))
        i += size
    return labels


@dataclass(frozen=True)
class Prompt:
    """A prompt ready for a model: its ids, how long it was, and the unit the model counts in."""

    ids: list[int]
    original_length: int
    unit: str = "byte"  # "byte" here; "token" for a BPE tokenizer (core/models/hf_tokenizer.py)

    @property
    def was_cut(self) -> bool:
        return len(self.ids) < self.original_length

    def note(self) -> str:
        """The sentence a page shows when the prompt was cut ('' when it was not)."""
        if not self.was_cut:
            return ""
        return _(
            "Your prompt is {length} {unit}s; the model's context window holds {n}, so only the last {n} "
            "{unit}s are used."
        ).format(length=self.original_length, n=len(self.ids), unit=_(self.unit))


def fit_prompt(ids: list[int], fallback: list[int], max_tokens: int, unit: str = "byte") -> Prompt:
    """Keep the last `max_tokens` of `ids` (the model's context window), for any tokenizer.

    An empty prompt becomes `fallback` (a newline) so that generation has something to start from.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    ids = ids or fallback
    return Prompt(ids=ids[-max_tokens:], original_length=len(ids), unit=unit)


def prepare_prompt(text: str, max_tokens: int) -> Prompt:
    """Encode `text` as bytes and keep what fits the context window (see `fit_prompt`)."""
    return fit_prompt(encode(text), encode("\n"), max_tokens)
