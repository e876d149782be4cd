"""What a reader chooses for a plan (`PlanInputs`), checked against the known formats, cards and layouts."""

from __future__ import annotations

from dataclasses import dataclass

from core.plan.cards import card
from core.plan.formats import cache_format, state_format, weight_format
from core.plan.memory import LAYOUTS

MAX_SEARCH_CONTEXT = 2**34


@dataclass(frozen=True)
class PlanInputs:
    """Everything a reader chooses; the defaults are the page's defaults."""

    context: int = 131072
    batch: int = 1
    weight_format: str = "bf16"
    cache_format: str = "bf16"
    memory_share: float = 0.9
    gpus: int = 1
    card: str = "h100_80gb"
    layout: str = "engine"
    state_format: str = "config"  # the fixed recurrent state's (formats.STATE_FORMATS): the config's own

    def checked(self) -> PlanInputs:
        weight_format(self.weight_format), cache_format(self.cache_format), card(self.card)
        state_format(self.state_format)
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown layout {self.layout!r}; known: {', '.join(LAYOUTS)}")
        if not 0 <= self.context <= MAX_SEARCH_CONTEXT:
            raise ValueError("context must be between 0 and 2^34 tokens")
        if not 1 <= self.batch <= 1_000_000:
            raise ValueError("batch must be between 1 and 1,000,000")
        if not 0.05 <= self.memory_share <= 1.0:
            raise ValueError("memory share must be between 0.05 and 1")
        if not 1 <= self.gpus <= 1024:
            raise ValueError("GPUs must be between 1 and 1024")
        return self
