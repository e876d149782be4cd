"""Prefill — reading a whole prompt before the first new token — on this CPU, one layer's mixing part:
causal softmax attention (torch SDPA) against the chunked Gated DeltaNet (core/ops), beside the planner's
bound for the same shapes. `forms` runs the two; `measure` times them; `record` is the JSON a run writes
(docs/bench-runs/*-cpu-prefill.json, `python -m bench.prefill`); `words` is what a page says about it."""
