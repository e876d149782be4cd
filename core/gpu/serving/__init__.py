"""Benchmarks for a page served to many readers: one per machine, the jobs the page submits, the last run, public mode."""
