"""Llama-family checkpoints (Llama, Mistral, Qwen2, Qwen3) through Hugging Face transformers,
stepped one token at a time with their own KV cache — for Your GPU's "your own checkpoint" run.

GPT-2 folders are read by the course's own module (core/models/hf_gpt2.py); these families are
loaded by `transformers` (`AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)`,
transformers' `models/<family>/modeling_<family>.py`), an optional extra: when it is not
installed the error says what to install, in one line. The cache is transformers'
`StaticCache` (buffers allocated once for `max_cache_len` positions and written in place, as
llama.cpp and vLLM keep theirs) and `DynamicCache` (grown by concatenation) where a static
one cannot be made; `HFDecoder.cache_kind` says which ran.

`check_family(config)` refuses, in one line, a family outside `SUPPORTED` or a machine without
transformers; `core.gpu.suites.checkpoint_bench.describe` uses it with the folder checks of
core/models/hf_folder.py before `HFDecoder(folder, device, dtype)` loads the weights.
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Callable
from pathlib import Path

import torch

from core.models.hf_folder import one_line
from core.models.hf_tokenizer import CheckpointError

SUPPORTED = ("llama", "mistral", "qwen2", "qwen3")  # model_type values this module loads
EXTRA_FILE = "requirements-checkpoints.txt"
INSTALL_HINT = f"pip install -r {EXTRA_FILE}"
PREFILL_CHUNK = 256  # prompt tokens per forward pass while filling the cache to a depth


def transformers_missing() -> str | None:
    """Why these families cannot be loaded here (transformers not installed), or None."""
    if importlib.util.find_spec("transformers") is None:
        return f"this checkpoint needs Hugging Face transformers, which is not installed: {INSTALL_HINT}"
    return None


def check_family(config: dict) -> str:
    """The config's model_type when this module loads it; CheckpointError (one line) otherwise."""
    family = config.get("model_type")
    if family not in SUPPORTED:
        raise CheckpointError(
            f"unsupported model family {str(family)[:60]!r} in config.json: the checkpoint benchmark reads "
            f"gpt2, {', '.join(SUPPORTED)}"
        )
    why = transformers_missing()
    if why:
        raise CheckpointError(why)
    return family


class HFDecoder:
    """A transformers causal LM stepped one token at a time over its own KV cache.

    The benchmark protocol of core.gpu.timing.decode_timer.time_decode: `allocate(room)` makes a fresh cache
    for `room` positions, `fill(depth)` prefills random tokens (untimed), `step(token)` feeds one
    token and returns its logits, and setting `pos` goes back to that depth (the rows past it are
    overwritten by the next steps). The folder is one `core.gpu.suites.checkpoint_bench.describe` accepted
    (family, transformers installed, readable headers); this only loads it."""

    def __init__(self, folder: Path | str, device: torch.device, dtype: torch.dtype) -> None:
        self.device = torch.device(device)
        self.dtype = dtype
        import transformers
        from transformers import AutoModelForCausalLM

        transformers.utils.logging.disable_progress_bar()
        try:
            model = AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True, dtype=dtype)
        except Exception as error:  # anything transformers refuses: one line, never a traceback
            raise CheckpointError(
                f"transformers could not load {Path(folder).name}: {one_line(error)}"
            ) from None
        self.model = model.to(self.device).eval()
        self.loader = f"transformers {transformers.__version__} {type(model).__name__}"
        names = inspect.signature(self.model.forward).parameters
        self._cache_arg = "cache" if "cache" in names else "past_key_values"  # renamed in transformers 5.x
        self.cache = None
        self.cache_kind = "none yet"
        self.vocab = int(self.model.config.vocab_size)

    def parameters(self) -> list[torch.Tensor]:
        """Every weight once (a tied head is the embedding's tensor, counted once)."""
        return list(self.model.parameters())

    def allocate(self, room: int) -> None:
        """A fresh cache for `room` positions: static (allocated on the first write) when it can be made."""
        from transformers import DynamicCache, StaticCache

        self.cache = None
        try:
            self.cache = StaticCache(config=self.model.config, max_cache_len=room)
            self.cache_kind = "StaticCache"
        except Exception:  # an older or newer transformers without this signature: grow one instead
            self.cache = DynamicCache(config=self.model.config)
            self.cache_kind = "DynamicCache"

    def _forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (1, T) after the cached positions → logits of the last one (V,)."""
        kwargs = {self._cache_arg: self.cache, "use_cache": True, "logits_to_keep": 1}
        return self.model(input_ids=ids, **kwargs).logits[0, -1]

    @torch.no_grad()
    def fill(self, depth: int, seed: int = 0) -> None:
        """Prefill `depth` random tokens (untimed): the cache then holds `depth` rows."""
        random_prefill(self._forward, self.vocab, depth, self.device, seed)

    @torch.no_grad()
    def step(self, token: torch.Tensor) -> torch.Tensor:
        """One token (a 1-element tensor on the device) after the cached ones → its logits (V,)."""
        return self._forward(token.view(1, 1))

    @property
    def pos(self) -> int:
        return 0 if self.cache is None else int(self.cache.get_seq_length())

    @pos.setter
    def pos(self, depth: int) -> None:
        extra = self.pos - depth
        if extra < 0:
            raise ValueError(f"cannot move forward to {depth}: the cache holds {self.pos} positions")
        if extra:
            self.cache.crop(-extra)  # transformers 5.x: a negative count removes that many positions

    def cache_tensors(self) -> list[torch.Tensor]:
        """Every key and value buffer the cache holds now, each (B, H_kv, T_buffer, D)."""
        if self.cache is None:
            return []
        out = []
        for layer in self.cache.layers:
            if getattr(layer, "is_initialized", False) and layer.keys is not None and layer.keys.dim() == 4:
                out += [layer.keys, layer.values]
        return out

    def release(self) -> None:
        self.cache = None


def random_prefill(
    forward: Callable[[torch.Tensor], object], vocab: int, depth: int, device: torch.device, seed: int = 0
) -> None:
    """Feed `depth` random tokens to `forward` in chunks of PREFILL_CHUNK (a decoder's cache fill
    before a depth is timed): the same tokens for every decoder and seed."""
    gen = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (1, depth), generator=gen).to(device)  # (1, depth)
    for start in range(0, depth, PREFILL_CHUNK):
        forward(ids[:, start : start + PREFILL_CHUNK])
