"""The trained-recall panel, one module per job: `results` (the shipped sweep, loaded and drawn once),
`readout` (one trained model reading the reader's list), `sweep` (the sweep and how it trained),
`ask` (question a trained model yourself), `panel` (the whole panel), `pointer` (one sentence and a
link, for the lessons that point at it).

The collisions lesson shows the panel in full; the DeltaNet and forgetting lessons link to it. Everything drawn
comes from assets/recall/ (results.json and the checkpoints written by `python -m core.train recall`).
"""
