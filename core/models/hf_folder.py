"""A Hugging Face checkpoint folder, read without loading a weight: its config.json and its
safetensors file(s) (one `model.safetensors`, or the shards `model.safetensors.index.json` names).

Shared by the GPT-2 loader (core/models/hf_gpt2.py) and the other families' (core/models/
hf_causal.py); every problem is a `CheckpointError` with one line, never a traceback.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from core.i18n import _
from core.models.hf_tokenizer import BPETokenizer, CheckpointError
from core.specs.model import ModelSpec


@dataclass
class LoadedCheckpoint:
    """A released checkpoint in the course's module, with what a page or a benchmark needs beside it.

    A family's subclass names its module's type and how its config.json becomes a ModelSpec (`read_spec`).
    """

    model: Any  # the course's module, in eval mode
    tokenizer: BPETokenizer
    folder: Path
    hf_config: dict = field(repr=False)  # config.json as written
    name: str
    read_spec: ClassVar[Callable[[dict, str], ModelSpec]]

    @property
    def config(self) -> Any:
        """The module's own config."""
        return self.model.config

    @property
    def spec(self) -> ModelSpec:
        return self.read_spec(self.hf_config, self.name)


def one_line(error: BaseException) -> str:
    return " ".join(str(error).split())[:200] or type(error).__name__


def read_config(folder: Path | str) -> dict:
    """Any checkpoint's config.json as a dict (CheckpointError: not a folder, no config, bad JSON)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(_("{folder} is not a folder").format(folder=folder))
    path = folder / "config.json"
    if not path.is_file():
        raise CheckpointError(_("{folder} is not a checkpoint: it has no config.json").format(folder=folder))
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(
            _("{path} is not readable JSON ({error})").format(path=path, error=one_line(error))
        ) from None
    if not isinstance(config, dict):
        raise CheckpointError(_("{path} does not hold a JSON object").format(path=path))
    return config


def weight_files(folder: Path | str) -> list[Path]:
    """The folder's safetensors file(s): model.safetensors, or the shards its index names."""
    folder = Path(folder)
    single = folder / "model.safetensors"
    if single.is_file():
        return [single]
    index = folder / "model.safetensors.index.json"
    if index.is_file():
        try:
            names = sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
            raise CheckpointError(
                _("{name} is not a safetensors index ({error})").format(
                    name=index.name, error=one_line(error)
                )
            ) from None
        return [folder / name for name in names]
    if any((folder / n).is_file() for n in ("pytorch_model.bin", "tf_model.h5", "flax_model.msgpack")):
        raise CheckpointError(
            _("{folder} has no model.safetensors (only older weight formats, not read)").format(folder=folder)
        )
    raise CheckpointError(
        _("{folder} is not a checkpoint: it has no model.safetensors").format(folder=folder)
    )


@contextlib.contextmanager
def _open_shard(path: Path) -> Iterator:
    """One safetensors file, open (its header read, no tensor yet); a missing shard or a damaged file,
    found on opening or while reading, raises CheckpointError in one line."""
    from safetensors import SafetensorError, safe_open

    if not path.is_file():
        raise CheckpointError(_("shard {name} listed in the index is missing").format(name=path.name))
    try:
        with safe_open(str(path), framework="pt") as f:
            yield f
    except (SafetensorError, OSError, RuntimeError, ValueError) as error:
        raise CheckpointError(
            _("{name} is damaged or truncated ({error}); download it again").format(
                name=path.name, error=one_line(error)
            )
        ) from None


def check_weight_files(folder: Path | str) -> list[Path]:
    """Open every safetensors header (no tensor is read): a missing shard or a truncated file is
    found here, before any loading, in one line."""
    files = weight_files(folder)
    for path in files:
        with _open_shard(path) as f:
            f.keys()
    return files


def read_tensors(folder: Path | str, rename, dtype=None) -> dict:
    """Every tensor of the folder's safetensors file(s) that `rename(name)` keeps (it returns the new
    name, or None to skip the tensor), cast to `dtype` when given; CheckpointError (one line) when a
    shard is missing or a file is damaged. Skipped tensors are never read from disk."""
    tensors = {}
    for path in weight_files(folder):
        with _open_shard(path) as f:
            for name in f.keys():
                new = rename(name)
                if new is not None:
                    tensor = f.get_tensor(name)
                    tensors[new] = tensor if dtype is None else tensor.to(dtype)
    return tensors


def check_shapes(state: dict, expected: dict[str, tuple[int, ...]]) -> None:
    """The tensors a config implies (`expected`: name → shape) against those a folder holds: every one
    present with its shape, and nothing else (CheckpointError in one line if not)."""
    missing = sorted(set(expected) - set(state))
    if missing:
        raise CheckpointError(
            _("the weights lack {n} tensors of this config, e.g. {name}").format(
                n=len(missing), name=missing[0]
            )
        )
    extra = sorted(set(state) - set(expected))
    if extra:
        raise CheckpointError(
            _("the weights hold tensors this config has no place for, e.g. {name}").format(name=extra[0])
        )
    for key, shape in expected.items():
        if tuple(state[key].shape) != shape:
            raise CheckpointError(
                _("tensor {key} has shape {shape}, config.json implies {expected}").format(
                    key=key, shape=tuple(state[key].shape), expected=shape
                )
            )
