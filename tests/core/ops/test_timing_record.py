"""Chunks' shipped timing: present, dated, from a named machine, and in the page's default setting."""

from __future__ import annotations

from core.ops import timing_record as chunk_timing


def test_the_shipped_timing_loads_with_date_and_machine():
    shipped = chunk_timing.load()
    assert shipped is not None, "run `python -m core.ops.timing_record` to regenerate assets/chunks/timing.json"
    assert len(shipped.date) == 10 and shipped.machine
    assert shipped.rule == chunk_timing.DEFAULT["rule"] and shipped.T == chunk_timing.DEFAULT["T"]
    labels = [t.label for t in shipped.timings]
    assert labels[0] == "step by step" and len(labels) == 1 + len(chunk_timing.DEFAULT["chunk_sizes"])
    assert all(t.ms > 0 for t in shipped.timings)


def test_a_missing_or_broken_file_is_none(tmp_path):
    assert chunk_timing.load(tmp_path / "nope.json") is None
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    assert chunk_timing.load(bad) is None
