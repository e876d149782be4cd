"""Benchmarks and their helpers, each run from the repository root as `python -m bench.<name>`."""
