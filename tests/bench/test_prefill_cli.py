"""`python -m bench.prefill` (issue 42, item 6): bad input is one line on stderr and exit status 2; a small
run prints its table and writes JSON that reads back as the same run."""

from __future__ import annotations

import pytest

from bench import prefill
from core.prefill.record import PrefillRun


@pytest.mark.parametrize(
    "argv",
    [
        ["--lengths", "0,1024"],
        ["--lengths", "2048,1024"],
        ["--lengths", "1k"],
        ["--heads", "0"],
        ["--head-dim", "-8"],
        ["--repeats", "x"],
        ["--cell-seconds", "0"],
        ["--cell-seconds", "nan"],
        ["--lengths", "1024", "--quick"],
        ["--unknown"],
    ],
)
def test_bad_input_is_one_line_and_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as stop:
        prefill.main(argv)
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1
    assert err.startswith("python -m bench.prefill: error:")


def test_an_unwritable_json_path_fails_before_the_run(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(prefill, "measure", lambda *a, **k: pytest.fail("measured before checking --json"))
    with pytest.raises(SystemExit) as stop:
        prefill.main(["--quick", "--json", str(tmp_path)])  # a folder, not a file
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.strip().splitlines()) == 1 and "--json" in err


def test_a_small_run_prints_its_table_and_writes_json_that_reads_back(tmp_path, capsys):
    out = tmp_path / "run.json"
    prefill.main(
        ["--lengths", "64,128", "--heads", "1", "--head-dim", "16", "--repeats", "1", "--json", str(out)]
    )
    printed = capsys.readouterr().out.splitlines()
    run = PrefillRun.from_json(out.read_text())
    assert [r.tokens for r in run.rows] == [64, 128] and (run.heads, run.head_dim) == (1, 16)
    assert printed[1].startswith("times: CPU time (one thread")  # one thread: the run reads CPU time
    assert printed[2].split()[:4] == ["tokens", "attention", "ms", "chunked"]
    row = printed[4].split()
    assert row[0] == "128" and row[3] == f"{run.ratio(run.rows[1]):.2f}x"
    assert row[4] == f"{run.rows[1].median_ms('attention', 'wall'):,.1f}"
    assert printed[-1] == f"wrote {out}"
