"""bench/browser.py's figures without a browser: spreads, the table, before → after, targets, the
websocket frame sizes and the process tree it measures."""

from __future__ import annotations

import base64
import json

from bench.browser import (
    LessonFigures,
    Spread,
    cell,
    comparison,
    descendants,
    load_json,
    misses,
    table,
    ws_frame_bytes,
)


def test_spread_takes_min_median_and_max():
    s = Spread.of([3.0, 1.0, 10.0, 2.0])
    assert (s.n, s.min, s.median, s.max) == (4, 1.0, 2.5, 10.0)
    assert Spread.of([]).n == 0 and Spread.of([]).median is None


def test_a_cell_shows_min_and_median_or_a_dash():
    assert cell(Spread.of([]), 0) == "—"
    assert cell(Spread.of([7.26]), 1) == "7.3"
    assert cell(Spread.of([400.0, 900.0, 500.0]), 0) == "400 / 500"


def test_the_table_has_one_aligned_line_per_lesson():
    rows = [
        LessonFigures("kv_cache", load_s=[5.0, 6.0], step_cpu_ms=[700.0, 900.0, 800.0]),
        LessonFigures("map", load_s=[2.0], errors=["TimeoutError"]),
    ]
    lines = table(rows).splitlines()
    assert len(lines) == 3 and lines[0].startswith("lesson")
    assert len({len(line) for line in lines}) == 1  # aligned
    assert "700 / 800" in lines[1] and "5.0 / 5.5" in lines[1]
    assert lines[2].rstrip().endswith("1")  # one error


def test_comparison_pairs_medians_by_lesson():
    before = [LessonFigures("gpt2", step_cpu_ms=[500.0, 600.0]), LessonFigures("map", load_s=[9.0])]
    after = [LessonFigures("gpt2", step_cpu_ms=[100.0, 120.0]), LessonFigures("primer", load_s=[2.0])]
    text = comparison(before, after)
    assert "550 → 110" in text
    primer = next(line for line in text.splitlines() if line.startswith("primer"))
    assert "— → 2.0" in primer  # a lesson the before run did not have


def test_misses_name_each_target_over_its_limit():
    rows = [
        LessonFigures("kv_cache", step_cpu_ms=[900.0], step_kb=[40.0], load_s=[3.0], move_server_ms=[1500.0])
    ]
    missed = misses(rows)
    assert len(missed) == 2
    assert any("step_cpu_ms" in m for m in missed) and any("move_server_ms" in m for m in missed)


def test_json_round_trip(tmp_path):
    from dataclasses import asdict

    rows = [LessonFigures("gpt2", load_s=[1.5], server_ms=[20.0])]
    path = tmp_path / "run.json"
    path.write_text(json.dumps([asdict(r) for r in rows]))
    assert load_json(path) == rows
    old = [{"slug": "map", "load_s": [2.0]}]  # a file written before a column was added still loads
    path.write_text(json.dumps(old))
    assert load_json(path)[0].move_server_ms == []


def test_binary_websocket_frames_count_their_decoded_bytes():
    payload = bytes(range(256)) * 3
    assert ws_frame_bytes({"opcode": 2, "payloadData": base64.b64encode(payload).decode()}) == len(payload)
    assert ws_frame_bytes({"opcode": 1, "payloadData": "héllo"}) == 6


def test_descendants_walk_the_whole_tree_only():
    parents = {10: 1, 11: 10, 12: 11, 13: 10, 20: 1, 21: 20}
    assert descendants(10, parents) == {11, 12, 13}
    assert descendants(12, parents) == set()
