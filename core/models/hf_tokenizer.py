"""Two tokenizers behind one face: the shipped byte tokenizer and a checkpoint's BPE.

The GPT-2 and KV cache pages run either the tiny byte model (core/tokenizer.py: one token per UTF-8 byte) or a
released GPT-2, whose tokenizer is byte-level BPE (Radford et al. 2019, §2.2; Sennrich et al.
2016): 50,257 tokens, each a run of bytes, read from the checkpoint's `tokenizer.json` with
Hugging Face's `tokenizers`. Both answer `encode`, `decode`, `label` (a short readable name for
one token) and `prepare` (encode and keep what fits the context window), and carry `unit`
("byte" or "token") so a page can name what it counts.

Labels follow GPT-2's byte-to-character table (`bytes_to_unicode` in openai/gpt-2
src/encoder.py): a token's characters map back to its bytes, so "Ġthe" is shown as "␣the".
"""

from __future__ import annotations

from pathlib import Path

from core import tokenizer as byte_tokenizer
from core.i18n import _
from core.tokenizer import Prompt, fit_prompt


class CheckpointError(ValueError):
    """A checkpoint folder that cannot be used; the message is one line a page can show as is."""


class ByteTokenizer:
    """The shipped model's tokenizer (core/tokenizer.py) behind the common face."""

    name = "UTF-8 bytes"
    unit = "byte"
    vocab_size = byte_tokenizer.VOCAB_SIZE

    def encode(self, text: str) -> list[int]:
        return byte_tokenizer.encode(text)

    def decode(self, ids: list[int] | tuple[int, ...]) -> str:
        return byte_tokenizer.decode(ids, errors="replace")

    def label(self, token_id: int) -> str:
        return byte_tokenizer.token_label(token_id)

    def token_bytes(self, token_id: int) -> bytes:
        """The one byte a token is (its id)."""
        byte_tokenizer.token_label(token_id)  # the id's range check
        return bytes([int(token_id)])

    def prepare(self, text: str, max_tokens: int) -> Prompt:
        return fit_prompt(self.encode(text), self.encode("\n"), max_tokens, self.unit)


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte → printable character table (openai/gpt-2, src/encoder.py)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
    keep += list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return chars


_CHAR_TO_BYTE = {c: b for b, c in _bytes_to_unicode().items()}


def readable(piece: bytes) -> str:
    """A token's bytes as a short label: spaces ␣, newlines ⏎, other control bytes and partial
    UTF-8 characters as hex (x0A style), everything else as text."""
    text = piece.decode("utf-8", errors="replace")
    if "\ufffd" in text and b"\xef\xbf\xbd" not in piece:
        return "".join(byte_tokenizer.token_label(b) for b in piece)
    out = []
    for ch in text:
        if ch == " ":
            out.append("␣")
        elif ch == "\n":
            out.append("⏎")
        elif ch.isprintable():
            out.append(ch)
        else:
            out.append("".join(f"x{b:02X}" for b in ch.encode("utf-8")))
    return "".join(out) or "∅"


class BPETokenizer:
    """A checkpoint's `tokenizer.json` (byte-level BPE for GPT-2), read with `tokenizers`."""

    unit = "token"

    def __init__(self, backend, name: str = "BPE"):
        self._tok = backend
        self.name = name
        self.vocab_size = int(backend.get_vocab_size(with_added_tokens=True))

    @classmethod
    def from_folder(cls, folder: Path | str) -> BPETokenizer:
        from tokenizers import Tokenizer

        path = Path(folder) / "tokenizer.json"
        if not path.is_file():
            raise CheckpointError(
                _("{folder} has no tokenizer.json (needed to turn text into tokens)").format(folder=folder)
            )
        try:
            backend = Tokenizer.from_file(str(path))
        except Exception as error:  # tokenizers raises a bare Exception on a bad file
            message = " ".join(str(error).split())[:160]
            raise CheckpointError(
                _("{name} is not a tokenizer file ({message})").format(name=path.name, message=message)
            ) from None
        return cls(backend, name=f"BPE, {backend.get_vocab_size():,} tokens")

    def encode(self, text: str) -> list[int]:
        return list(self._tok.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: list[int] | tuple[int, ...]) -> str:
        return self._tok.decode([int(i) for i in ids], skip_special_tokens=False)

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes a token stands for (through GPT-2's byte-to-character table)."""
        piece = self._tok.id_to_token(int(token_id))
        if piece is None:
            raise ValueError(f"token id {token_id} is outside the vocabulary of {self.vocab_size}")
        if all(ch in _CHAR_TO_BYTE for ch in piece):
            return bytes(_CHAR_TO_BYTE[ch] for ch in piece)
        return piece.encode("utf-8")  # a special token such as <|endoftext|>

    def label(self, token_id: int) -> str:
        return readable(self.token_bytes(token_id))

    def prepare(self, text: str, max_tokens: int) -> Prompt:
        return fit_prompt(self.encode(text), self.encode("\n"), max_tokens, self.unit)


def check_vocabulary(tokenizer: BPETokenizer, model_vocab: int) -> None:
    """Refuse a tokenizer that does not fit the model's embedding table.

    Every token id must have a row (tokenizer ≤ model); a model may pad its table up to the
    next multiple of 128 (as nanoGPT's 50,304), never more.
    """
    n = tokenizer.vocab_size
    padded = -(-n // 128) * 128
    if n > model_vocab or model_vocab > max(padded, n):
        raise CheckpointError(
            _(
                "tokenizer.json has {n} tokens but the model's vocabulary has {vocab}: they do not belong together"
            ).format(n=f"{n:,}", vocab=f"{model_vocab:,}")
        )
