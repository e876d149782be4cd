"""Your GPU's "your own checkpoint" section under AppTest: a tiny random GPT-2 offered through
COURSE_GPT2_PATH is picked and run to a chart and a table on the CPU (NVML faked away, as on CI);
a bad folder is one line; public mode gives the command only."""

from __future__ import annotations

import json

import pytest
import torch
from streamlit.testing.v1 import AppTest

from bench.hf_tiny_gpt2 import make_checkpoint, point_pages_at
from core.gpu.device import nvml
from core.gpu.serving import runner
from tests.app import driver
from tests.core.gpu.fake_nvml import FakeNvml
from ui.gpu.checkpoint import HEADLINE, HOME_COMMAND, TYPED

PAGE = driver.page_path("your_gpu")


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory):
    return make_checkpoint(tmp_path_factory.mktemp("ckpt") / "tiny-gpt2", n_positions=64)


@pytest.fixture(autouse=True)
def no_gpu_and_quiet(monkeypatch, tiny_gpt2, tmp_path):
    """No NVIDIA driver, one thread, the tiny checkpoint offered and an empty HF cache; no run or
    place in line leaks into the next test."""
    monkeypatch.setattr(nvml, "load_module", lambda: FakeNvml(init_error="LibraryNotFound"))
    monkeypatch.setattr(runner.RUNNER, "owner_ttl_s", 60.0)
    point_pages_at(monkeypatch, tiny_gpt2, tmp_path / "hf-cache")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
    driver.leave_no_gpu_run_behind()


def opened() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["depth"] = "engineer"  # the checkpoint section is Engineer's
    at.run()
    driver.assert_clean(at, "first run")
    assert "Your own checkpoint" in " ".join(m.value for m in at.markdown)
    assert not [s for s in at.selectbox if s.key == "gpu_ckpt_pick"]  # behind the toggle: no disk scan
    at.toggle(key="gpu_ckpt_open").set_value(True).run()
    driver.assert_clean(at, "toggle on")
    return at


def test_the_tiny_checkpoint_runs_to_a_chart_and_a_table(tiny_gpt2):
    at = opened()
    pick = at.selectbox(key="gpu_ckpt_pick")
    assert pick.value.startswith("local checkpoint (tiny-gpt2)") and pick.options[-1] == TYPED
    assert "gpt2, 37,120 parameters" in " ".join(c.value for c in at.caption)
    at.button(key="gpu_run_checkpoint").click().run()
    driver.assert_clean(at, "run clicked")
    job = runner.RUNNER.job(at.session_state["gpu_owner"])
    assert job is not None and job.label == "checkpoint" and job.wait(120)
    at.run()
    driver.assert_clean(at, "after the run")
    result = at.session_state["gpu_checkpoint"]
    assert [p.depth for p in result.points] == [0, 16, 32, 40] and result.device.startswith("CPU")
    spec = driver.chart_spec(at, "gpu_ckpt_fig")
    names = [t["name"] for t in spec["data"]]
    assert names == ["measured (mean ± 1 std)", "roofline: (weights + cache) ÷ bandwidth"]
    roofline = driver.plotly_array(spec["data"][1]["y"])
    assert roofline[-1] < roofline[0]  # a deeper cache means more bytes per token
    assert "tokens per second" in spec["layout"]["yaxis"]["title"]["text"]
    assert "depth d (tokens in the KV cache)" in spec["layout"]["xaxis"]["title"]["text"]
    table = next(t.value for t in at.table if "KV cache" in t.value.columns)
    assert table["depth d"].tolist() == ["0", "16", "32", "40"] and "% of roofline" in table.columns
    assert list(table.columns) == list(HEADLINE)  # four columns: a phone's width
    # a tiny model lands far below its roofline on a CPU: its share is small but never shown as "0 %"
    shares = [float(cell.removesuffix(" %")) for cell in table["% of roofline"]]
    expected = [p.percent_of_roofline for p in result.points]
    assert all(s > 0 for s in shares) and shares == pytest.approx(expected, rel=0.05)
    shown = " ".join(
        str(e.value) for kind in ("markdown", "caption", "info", "warning") for e in at.get(kind)
    )
    shown += " ".join(json.dumps(t.value.astype(str).values.tolist()) for t in at.table)
    assert str(tiny_gpt2) not in shown and str(tiny_gpt2.parent) not in shown  # no server path, only the name
    assert "tiny-gpt2" in shown
    more = next(e for e in at.expander if e.label.startswith("Every figure per depth"))
    assert "bytes per token" in more.label and len(more.table[0].value) == len(table)
    assert any("Checked: the cache tensors" in c.value for c in at.caption)
    assert not at.error
    assert at.button(key="gpu_run_context").disabled is False  # the runner is free again


def test_a_bad_folder_is_one_line_and_offers_no_run(tmp_path):
    at = opened()
    driver.choose_label(at.selectbox(key="gpu_ckpt_pick"), TYPED).run()
    at.text_input(key="gpu_ckpt_path").input(str(tmp_path / "nowhere")).run()
    driver.assert_clean(at, "bad folder")
    assert len(at.error) == 1 and "is not a folder" in at.error[0].value
    assert not [b for b in at.button if b.key == "gpu_run_checkpoint"]
    (tmp_path / "notes").mkdir()
    at.text_input(key="gpu_ckpt_path").input(str(tmp_path / "notes")).run()
    assert "no config.json" in at.error[0].value and "\n" not in at.error[0].value
    at.text_input(key="gpu_ckpt_path").input("[x](http://evil) <b>").run()  # shown as typed, never a link
    assert "\\[x\\]" in at.error[0].value and "\\<b" in at.error[0].value


def test_public_mode_gives_the_command_only(monkeypatch):
    monkeypatch.setenv("COURSE_PUBLIC", "1")
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.query_params["depth"] = "engineer"  # the checkpoint section is Engineer's
    at.run()
    driver.assert_clean(at, "public mode")
    assert HOME_COMMAND in [c.value for c in at.code]
    assert not [t for t in at.toggle if t.key == "gpu_ckpt_open"]
    assert not json.dumps([b.key for b in at.button]).count("gpu_run_checkpoint")
