"""What one course process held in a committed `bench.load` run, as README.md's "Past one machine" says it.

    .venv/bin/python -m bench.load.sizing docs/load-runs/2026-12-03-cpu-2cores.json

The sentence is computed from the run's JSON (`python -m bench.load --json`), never typed: a test
(tests/deploy/test_sizing.py) finds it in the README, so a new run means a new sentence there.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "load-runs" / "2026-12-03-cpu-2cores.json"
POD_READERS = 16  # what a pod is sized for (deploy/kubernetes/base/hpa.yaml)


def load(path: Path = COMMITTED) -> list[dict]:
    """The run's rows: one per lesson and reader count."""
    return json.loads(path.read_text(encoding="utf-8"))


def heaviest(rows: list[dict], readers: int) -> dict:
    """The lesson that cost the server most CPU per Step at `readers` readers."""
    at = [row for row in rows if row["readers"] == readers]
    if not at:
        raise ValueError(f"the run has no window with {readers} readers")
    return max(at, key=lambda row: row["cpu_ms_per_step"])


def sentence(rows: list[dict], source: str) -> str:
    """One sentence: CPU per Step at a pod's 16 readers, and latency and memory at twice that."""
    most = max(row["readers"] for row in rows)
    pod, top = heaviest(rows, POD_READERS), heaviest(rows, most)
    rss = max(row["rss_mb"] for row in rows if row["readers"] == most)
    p95 = max(row["p95_ms"] for row in rows if row["readers"] == most)
    failures = sum(len(row["errors"]) + len(row["crosstalk"]) for row in rows)
    return (
        f"Measured on this repository's 2-core development machine (`{source}`): at {POD_READERS} readers "
        f"stepping once a second the heavier lesson ({pod['lesson']}) used {pod['cpu_ms_per_step']:.0f} ms "
        f"of server CPU per Step; at {most} readers ({top['lesson']}: {top['cpu_ms_per_step']:.0f} ms a "
        f"Step) the process held {rss:,.0f} MB and 95 % of Steps answered within {p95:,.0f} ms, with "
        f"{failures} errors or crossed sessions."
    )


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0]) if args else COMMITTED
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    try:
        rows = load(path)
        print(sentence(rows, shown.as_posix()))
    except (OSError, ValueError, KeyError) as error:
        print(f"bench.load.sizing: {path}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
