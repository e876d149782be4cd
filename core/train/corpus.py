"""The training corpus of the course's tiny models, written by the project itself.

No download: a few dozen hand-written paragraphs about memory, boards, caches and
attention, plus seeded templated documents (short stories, facts, sums, a little
Japanese and emoji so that multi-byte UTF-8 sequences are seen in training).
The same seed always gives the same bytes, so every checkpoint can be rebuilt.

    python -m core.train.corpus            # writes assets/corpus.txt
"""

from __future__ import annotations

import argparse
import hashlib
import random
from pathlib import Path

CORPUS_PATH = Path(__file__).resolve().parents[2] / "assets" / "corpus.txt"
DEFAULT_SEED = 1234
DEFAULT_DOCUMENTS = 4200
DOCUMENT_SEPARATOR = "\n\n"

# ---------------------------------------------------------------------------
# Hand-written paragraphs (the project's own words).
# ---------------------------------------------------------------------------
PARAGRAPHS: tuple[str, ...] = (
    "A language model reads text one small piece at a time and guesses the next piece. "
    "When the guess is written down, it becomes part of the text, and the model guesses again.",
    "The model in this course reads bytes. Every letter of plain English is one byte, "
    "but a Japanese character takes three bytes and an emoji takes four.",
    "To guess the next byte, the model looks back at every byte it has seen so far. "
    "Looking back is called attention: each earlier position gets a weight, and the weights add up to one.",
    "Each position makes three vectors: a query, a key and a value. The query asks a question, "
    "the keys answer how well they match, and the values are what gets read out.",
    "The first models recomputed everything at every step. To write the hundredth letter they "
    "redid the work for the ninety nine letters before it, again and again.",
    "A cache is a place to keep work you have already done. The key and value of an old position "
    "never change, so the model can keep them and read them back later.",
    "With a cache, each new letter costs one position of work instead of the whole text. "
    "The arithmetic becomes small, but the cache grows by one row for every letter.",
    "A long chat fills the cache. When the cache is larger than the memory on the card, "
    "part of it must live somewhere slower, and every step has to fetch it back.",
    "Reading memory takes time. A graphics card can multiply numbers much faster than it can "
    "read them, so a model that must read a huge cache waits on memory, not on arithmetic.",
    "A board is a memory of fixed size. Instead of adding a new row for every letter, the model "
    "writes each new key and value on top of the same board.",
    "The board never grows. A book of ten pages and a book of ten thousand pages leave a board "
    "of the same size, so the memory cost stays flat.",
    "Writing on top of old writing has a price. When two keys point in similar directions, "
    "their values blur together and neither can be read back cleanly.",
    "A full board is like a blackboard covered in chalk. If you keep writing without erasing, "
    "the new words land on the old ones and the whole board turns grey.",
    "The delta rule erases before it writes. It reads what the board already says for a key, "
    "takes away that old value, and writes the new value in its place.",
    "Erasing first means that writing the same key twice replaces the old value. "
    "The board keeps the latest fact instead of a smudge of all of them.",
    "Erase then write must happen in order, one step after another. A graphics card likes to do "
    "many things at once, so waiting in line wastes its strength.",
    "Cutting the text into chunks helps. Inside a chunk every position is computed together; "
    "the board is handed from one chunk to the next only at the edges.",
    "Forgetting is useful. When the topic changes, old facts only get in the way, so the board "
    "is thinned a little at every step and old writing slowly fades.",
    "One fading rate for the whole board is blunt. Kimi Delta Attention gives every channel "
    "its own rate, so some parts of the board keep facts for a long time and others forget fast.",
    "A hybrid model mixes both kinds of memory. Three layers use a fixed board and the fourth "
    "layer keeps a full cache, so whatever falls off the board can still be found.",
    "A mixture of experts is a team of small networks. For each token a router wakes only a few "
    "of them, so most of the weights are not read at all for that token.",
    "Waking fewer experts means reading fewer bytes from memory, and reading fewer bytes means "
    "less time and less power for every token.",
    "The story of these models is a story about memory. First the memory grew without end, "
    "then it was fixed in size, then it learned to rewrite, and then it learned to forget.",
    "GPT-2 was released in 2019 with 124 million parameters, twelve layers and a context "
    "window of 1024 tokens. It learned the position of each token as a vector.",
    "Layer normalisation keeps the numbers in a healthy range. In GPT-2 it comes before the "
    "attention and before the feed forward network, inside every block.",
    "The feed forward network widens each vector four times, applies a smooth bend called GELU, "
    "and narrows it back. It works on each position alone.",
    "The same table turns bytes into vectors at the bottom of the model and turns vectors back "
    "into scores for every byte at the top. Sharing it saves parameters.",
    "Temperature changes how bold the model is. A low temperature picks the likeliest byte "
    "almost every time; a high temperature gives rare bytes a better chance.",
    "Top k sampling keeps only the k likeliest bytes and draws among them. With a fixed seed "
    "the same draw comes out every time, so an experiment can be repeated.",
    "The context window is the longest text the model can look at. When the text is longer, "
    "the oldest part must be cut off or the model must stop.",
    "Memory per token is the number to watch. Multiply it by the length of the chat and you "
    "know whether the whole conversation fits on your card.",
    "Bandwidth is how many bytes the memory can deliver each second. Divide it by the bytes "
    "read per token and you get an upper bound on tokens per second.",
    "こんにちは。これは小さな言語モデルです。バイトを一つずつ読んで、次のバイトを当てます。",
    "メモリは大切です。キャッシュは長くなり、ボードは同じ大きさのままです。",
    "Emoji are bytes too: a cat 🐱, a rocket 🚀 and a heart ❤️ each take several bytes, "
    "and the model must learn that the pieces belong together.",
    "Tiny models make mistakes. They repeat words, invent new ones and forget the start of a "
    "sentence, but they show the same machinery that large models use.",
)

# ---------------------------------------------------------------------------
# Templated documents.
# ---------------------------------------------------------------------------
NAMES = (
    "Ada",
    "Ben",
    "Mia",
    "Tom",
    "Lily",
    "Sam",
    "Nora",
    "Leo",
    "Ivy",
    "Max",
    "Emma",
    "Kai",
    "Ruth",
    "Omar",
)
ANIMALS = ("cat", "dog", "fox", "owl", "bird", "rabbit", "horse", "frog", "bear", "duck")
THINGS = ("box", "ball", "book", "cup", "kite", "lamp", "boat", "hat", "key", "map", "clock", "board")
COLORS = ("red", "blue", "green", "yellow", "white", "black", "brown", "orange", "grey", "purple")
PLACES = ("garden", "forest", "kitchen", "library", "river", "park", "school", "market", "hill", "station")
FEELINGS = ("happy", "tired", "curious", "sad", "brave", "calm", "surprised", "hungry")
ACTIONS = ("found", "lost", "painted", "carried", "hid", "cleaned", "opened", "dropped", "shared", "fixed")
TIMES = ("In the morning", "At noon", "In the evening", "One day", "Later", "After lunch", "At night")
WEATHER = ("sunny", "rainy", "windy", "cold", "warm", "quiet", "bright")
JA_WORDS = (("猫", "cat"), ("犬", "dog"), ("本", "book"), ("山", "mountain"), ("水", "water"), ("空", "sky"))
EMOJI = ("🐱", "🐶", "🦊", "🦉", "📚", "☕", "🚀", "🌧️", "☀️", "🎈", "🔑", "🧠")
MEMORY_WORDS = ("cache", "board", "key", "value", "query", "layer", "token", "memory", "chunk", "expert")
MEMORY_VERBS = ("grows", "stays the same size", "is read at every step", "is written once", "fades slowly")


def _a(word: str) -> str:
    """'a' or 'an' before a word."""
    return ("an " if word[0] in "aeiou" else "a ") + word


def _story(rng: random.Random) -> str:
    name, friend = rng.sample(NAMES, 2)
    animal, thing = rng.choice(ANIMALS), rng.choice(THINGS)
    color, place = rng.choice(COLORS), rng.choice(PLACES)
    sentences = [
        f"{rng.choice(TIMES)}, {name} went to the {place}.",
        f"The day was {rng.choice(WEATHER)}.",
        f"{name} {rng.choice(ACTIONS)} {_a(color)} {thing} near {_a(animal)}.",
        f"The {animal} looked {rng.choice(FEELINGS)}.",
        f'{friend} came and asked, "Is that your {thing}?"',
        f'"Yes," said {name}. "It is my {color} {thing}."',
        f"They walked home together, and {name} felt {rng.choice(FEELINGS)}.",
    ]
    start = rng.randint(0, 1)
    return " ".join(sentences[start : start + rng.randint(4, 7)])


def _facts(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(3, 6)):
        kind = rng.randrange(4)
        if kind == 0:
            lines.append(f"The {rng.choice(THINGS)} is {rng.choice(COLORS)}.")
        elif kind == 1:
            lines.append(f"{_a(rng.choice(ANIMALS)).capitalize()} lives near the {rng.choice(PLACES)}.")
        elif kind == 2:
            lines.append(f"{rng.choice(NAMES)} has {rng.randint(2, 12)} {rng.choice(THINGS)}s.")
        else:
            lines.append(f"The {rng.choice(MEMORY_WORDS)} {rng.choice(MEMORY_VERBS)}.")
    return " ".join(lines)


def _arithmetic(rng: random.Random) -> str:
    lines = []
    for _ in range(rng.randint(2, 5)):
        a, b = rng.randint(0, 99), rng.randint(0, 99)
        if rng.random() < 0.5:
            lines.append(f"{a} plus {b} is {a + b}.")
        else:
            lines.append(f"{max(a, b)} minus {min(a, b)} is {max(a, b) - min(a, b)}.")
    return " ".join(lines)


def _memory_sum(rng: random.Random) -> str:
    tokens = rng.choice((128, 256, 512, 1024, 2048, 4096))
    per_token = rng.choice((16, 32, 64, 128, 256))
    return (
        f"A cache with {tokens} tokens and {per_token} bytes per token holds {tokens * per_token} bytes. "
        f"Double the tokens and it holds {2 * tokens * per_token} bytes."
    )


def _japanese(rng: random.Random) -> str:
    ja, en = rng.choice(JA_WORDS)
    name = rng.choice(NAMES)
    return f"「{ja}」 means {en}. {name}は{ja}が好きです。 {name} likes the {en}."


def _emoji(rng: random.Random) -> str:
    animal = rng.choice(ANIMALS)
    icon = rng.choice(EMOJI)
    return f"{rng.choice(NAMES)} drew {_a(animal)} {icon} on the {rng.choice(THINGS)} and smiled {rng.choice(EMOJI)}."


_GENERATORS = (
    (_story, 40),
    (_facts, 20),
    (_arithmetic, 10),
    (_memory_sum, 6),
    (_japanese, 6),
    (_emoji, 6),
)


def build_corpus(seed: int = DEFAULT_SEED, n_documents: int = DEFAULT_DOCUMENTS) -> str:
    """Deterministically build the corpus text: hand-written paragraphs mixed with templated documents.

    Each hand-written paragraph appears several times at seeded places, so even a
    tiny model sees it often enough to learn its words.
    """
    rng = random.Random(seed)
    makers, weights = zip(*_GENERATORS, strict=True)
    documents = [rng.choices(makers, weights)[0](rng) for _ in range(n_documents)]
    for paragraph in PARAGRAPHS * 4:
        documents.insert(rng.randrange(len(documents) + 1), paragraph)
    return DOCUMENT_SEPARATOR.join(documents) + "\n"


def split_train_heldout(data: bytes, heldout_fraction: float = 0.05) -> tuple[bytes, bytes]:
    """Split corpus bytes into (train, held-out) at a document boundary near the end.

    The held-out part is the last `heldout_fraction` of the text, starting at a
    document separator so no document is cut in half.
    """
    if not 0 < heldout_fraction < 1:
        raise ValueError("heldout_fraction must be between 0 and 1")
    cut = int(len(data) * (1 - heldout_fraction))
    boundary = data.rfind(DOCUMENT_SEPARATOR.encode(), 0, cut)
    cut = boundary + len(DOCUMENT_SEPARATOR) if boundary > 0 else cut
    return data[:cut], data[cut:]


def load_corpus(path: Path = CORPUS_PATH) -> bytes:
    """The corpus as bytes; built in memory if assets/corpus.txt is missing."""
    if path.exists():
        return path.read_bytes()
    return build_corpus().encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the course's training corpus.")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--documents", type=int, default=DEFAULT_DOCUMENTS)
    parser.add_argument("--out", type=Path, default=CORPUS_PATH)
    args = parser.parse_args(argv)
    data = build_corpus(args.seed, args.documents).encode("utf-8")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"wrote {args.out} ({len(data):,} bytes, sha256 {sha256(data)[:16]})")


if __name__ == "__main__":
    main()
