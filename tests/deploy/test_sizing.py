"""README.md's measured sizing sentence is the committed bench.load run's (bench/load/sizing.py), and the
pods' resources hold what that run measured."""

from __future__ import annotations

import json

import pytest

from bench.load import sizing
from tests.deploy.kustomize import build

README = sizing.ROOT / "README.md"


def test_the_readme_says_what_the_committed_run_measured():
    rows = sizing.load()
    shown = sizing.COMMITTED.relative_to(sizing.ROOT).as_posix()
    assert sizing.sentence(rows, shown) in " ".join(README.read_text(encoding="utf-8").split())


def test_a_pod_requests_more_memory_than_the_run_held_at_twice_its_readers():
    rows = sizing.load()
    most = max(row["readers"] for row in rows)
    assert most >= 2 * sizing.POD_READERS
    held_mib = max(row["rss_mb"] for row in rows if row["readers"] == most) * 1e6 / 2**20
    (deployment,) = [
        o for o in build(sizing.ROOT / "deploy" / "kubernetes" / "base") if o["kind"] == "Deployment"
    ]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    request = container["resources"]["requests"]["memory"]
    assert request.endswith("Gi") and float(request[:-2]) * 1024 > held_mib


def test_a_window_the_run_lacks_is_named(tmp_path, capsys):
    with pytest.raises(ValueError, match="no window with 16 readers"):
        sizing.heaviest([{"readers": 1, "cpu_ms_per_step": 3.0}], 16)
    broken = tmp_path / "run.json"
    broken.write_text(json.dumps([{"readers": 1}]))
    assert sizing.main([str(broken)]) == 2
    assert "bench.load.sizing" in capsys.readouterr().err
