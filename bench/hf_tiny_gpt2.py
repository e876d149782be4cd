"""A tiny random GPT-2 in Hugging Face format, made locally for the tests and benches (never downloaded).

`transformers` (a dev-only dependency) writes `config.json` + `model.safetensors` with
`GPT2LMHeadModel.save_pretrained`; a tiny byte-level BPE trained here with `tokenizers` writes
`tokenizer.json`. The result has the layout of huggingface.co/openai-community/gpt2 at toy size.
"""

from __future__ import annotations

import shutil
from pathlib import Path

CORPUS = [
    "One day, Mia went to the park. The cache keeps keys and values.",
    "The model reads the whole text again. 日本語 and emoji 🙂 are bytes too.",
    "Once upon a time there was a tiny model that wrote the next token.",
] * 20


def train_tokenizer(vocab_size: int = 300):
    """A byte-level BPE (GPT-2's scheme) trained on a few sentences; returns a tokenizers.Tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=["<|endoftext|>"],
        show_progress=False,
    )
    tok.train_from_iterator(CORPUS, trainer)
    return tok


def padded_tokenizer(vocab_size: int):
    """The tiny BPE with never-produced filler tokens added up to `vocab_size` entries — a
    tokenizer that fits GPT-2's 50,257-row table for width-only benchmarks."""
    import json

    from tokenizers import Tokenizer

    data = json.loads(train_tokenizer().to_str())
    vocab = data["model"]["vocab"]
    for i in range(vocab_size - len(vocab)):
        vocab[f"<filler{i}>"] = len(vocab)
    return Tokenizer.from_str(json.dumps(data))


def make_checkpoint(
    folder: Path,
    n_layer: int = 2,
    n_head: int = 4,
    n_embd: int = 32,
    n_positions: int = 64,
    seed: int = 0,
    **extra,
) -> Path:
    """Write a random GPT-2 + tokenizer into `folder`; `extra` goes into transformers' GPT2Config."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tok = train_tokenizer()
    tok.save(str(folder / "tokenizer.json"))
    torch.manual_seed(seed)
    eos = tok.token_to_id("<|endoftext|>")
    config = GPT2Config(
        vocab_size=tok.get_vocab_size(),
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        bos_token_id=eos,
        eos_token_id=eos,
        **extra,
    )
    GPT2LMHeadModel(config).eval().save_pretrained(folder)
    return folder


def fake_hub_cache(
    source: Path,
    cache_dir: Path,
    repo_id: str = "openai-community/gpt2",
    names: tuple[str, ...] = ("config.json", "tokenizer.json", "model.safetensors"),
) -> Path:
    """Lay `source`'s files `names` out as the Hugging Face cache does: blobs, a snapshot of links, refs/main."""
    repo = Path(cache_dir) / ("models--" + repo_id.replace("/", "--"))
    commit = "0" * 40
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    for i, name in enumerate(names):
        blob = repo / "blobs" / f"{i:040d}"
        shutil.copy(source / name, blob)
        (snapshot / name).symlink_to(Path("..") / ".." / "blobs" / blob.name)
    return snapshot


def point_pages_at(monkeypatch, folder: Path | None, cache_dir: Path, offline: bool = True) -> None:
    """The GPT-2 and KV cache pages under AppTest: offer `folder` (COURSE_GPT2_PATH), look in an empty HF cache,
    and (by default) forbid the network; the pages' 30 s scan cache is emptied."""
    import huggingface_hub.constants  # a submodule: a bare `import huggingface_hub` may not load it

    from ui.models.gpt2 import found_checkpoints

    if folder is None:
        monkeypatch.delenv("COURSE_GPT2_PATH", raising=False)
    else:
        monkeypatch.setenv("COURSE_GPT2_PATH", str(folder))
    if offline:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache_dir))
    found_checkpoints.clear()
