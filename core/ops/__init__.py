"""The maths of the course as plain functions, one module per mechanism.

Fixed-size-memory rules (fla conventions, see `core/ops/common.py`): `linear_attention`,
`delta_rule`, `gated_delta_rule`, `kda` — each with `step`, `recurrent` and `chunk`
(linear attention also `parallel`), tested equal to each other.
"""
