"""The memory and speed planner: any model's config.json → weights, cache, state, what fits, how fast.

Modules, one job each: `config` (config.json → `core.specs` types), `formats` (weight and cache
formats at their real bits), `cards` (accelerators with sources), `memory` (cache bytes per layout),
`experts` (distinct experts a batch touches), `flops` (work per token), `inputs` (what a reader
chooses), `footprint` (weights, reserve, cache copies), `decode` (one decode step's roofline, its bytes
`core.roofline.step_bytes`), `latency` (the step's latency floor: kernels and all-reduces), `spill` (the
longest context that fits, which the KV cache page shows too), `parallel` (even tensor-parallel splits), `plan`
(the figures put together), `assumptions` and
`cautions` (the words beside them), `calibration` (a published run against the ceiling), `headline`,
`curve` and `export` (rows, JSON, CSV, query parameters). `python -m core.plan --help` is the CLI twin of the
page `lessons/planner.py`; tests/core/plan/test_vs_transformers.py checks the cache bytes against
transformers.
"""

from core.plan.cards import CARDS, PlanCard
from core.plan.config import PlannedModel, parse
from core.plan.errors import ConfigError
from core.plan.formats import CACHE_FORMATS, STATE_FORMATS, WEIGHT_FORMATS
from core.plan.inputs import PlanInputs
from core.plan.plan import Plan, plan

__all__ = [
    "CACHE_FORMATS",
    "CARDS",
    "ConfigError",
    "Plan",
    "PlanCard",
    "PlanInputs",
    "PlannedModel",
    "STATE_FORMATS",
    "WEIGHT_FORMATS",
    "parse",
    "plan",
]
