"""What defines one recall model: its token mixer (one of `MIXERS`), its sizes, bytes per number."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from core.mechanisms import rule_keys
from core.recall.task import DEFAULT_VOCAB

STATE_MIXERS = rule_keys()  # every fixed-board rule in the registry
MIXERS = ("attention", *STATE_MIXERS, "hybrid")
BYTES_PER_ELEMENT = 4  # float32


@dataclass
class RecallModelConfig:
    """Everything that defines one recall model; stored beside its weights."""

    mixer: str = "attention"
    d_model: int = 32
    n_heads: int = 1
    vocab_size: int = DEFAULT_VOCAB.size
    n_layers: int = 2
    conv_size: int = 3
    mlp_ratio: int = 2
    chunk_size: int = 16

    def __post_init__(self) -> None:
        if self.mixer not in MIXERS:
            raise ValueError(f"unknown mixer '{self.mixer}'; choose one of {', '.join(MIXERS)}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} must be divisible by n_heads {self.n_heads}")

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    @property
    def layer_kinds(self) -> tuple[str, ...]:
        """The mixer of each layer: the hybrid is a KDA layer followed by an attention layer."""
        if self.mixer == "hybrid":
            return ("kda",) + ("attention",) * (self.n_layers - 1)
        return (self.mixer,) * self.n_layers

    def to_dict(self) -> dict:
        return asdict(self)
