"""The GPU page's own-checkpoint section with a dense Qwen3 and a hybrid Qwen3.5 folder (tiny, random,
written here) typed in one after the other and run on the CPU under AppTest: the hybrid's fixed boards
are named before the run and counted in its table, the steps say why they were not graphed, and once
both have run the side-by-side charts and their sentence appear, with the numbers of the two results."""

from __future__ import annotations

import pytest
import torch
from streamlit.testing.v1 import AppTest

from bench.hf_tiny_gpt2 import make_checkpoint as make_gpt2
from bench.hf_tiny_gpt2 import point_pages_at
from core.gpu.device import nvml
from core.gpu.output.checkpoint_compare import compare_words
from core.gpu.serving import runner
from core.gpu.suites.checkpoint_bench import GRAPH_NEEDS_CUDA, describe
from core.units import format_bytes
from tests.app import driver
from tests.core.gpu.fake_nvml import FakeNvml
from ui.gpu.checkpoint import TYPED

pytest.importorskip("transformers")  # only to write the tiny folders

PAGE = driver.page_path("your_gpu")
SIZES = dict(max_position_embeddings=48)  # a short window: four quick depths


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    from bench.hf_tiny_qwen3 import make_checkpoint as make_qwen3
    from bench.hf_tiny_qwen35 import make_checkpoint as make_qwen35

    root = tmp_path_factory.mktemp("qwen_pages")
    return {
        "gpt2": make_gpt2(root / "tiny-gpt2", n_positions=64),
        "dense": make_qwen3(root / "tiny-qwen3", vocab_size=320, **SIZES),
        "hybrid": make_qwen35(root / "tiny-qwen35", **SIZES),
    }


@pytest.fixture(autouse=True)
def no_gpu_and_quiet(monkeypatch, folders, tmp_path):
    monkeypatch.setattr(nvml, "load_module", lambda: FakeNvml(init_error="LibraryNotFound"))
    monkeypatch.setattr(runner.RUNNER, "owner_ttl_s", 60.0)
    point_pages_at(monkeypatch, folders["gpt2"], tmp_path / "hf-cache")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
    driver.leave_no_gpu_run_behind()


def run_folder(at: AppTest, folder) -> None:
    at.text_input(key="gpu_ckpt_path").input(str(folder)).run()
    driver.assert_clean(at, f"typed {folder.name}")
    at.button(key="gpu_run_checkpoint").click().run()
    job = runner.RUNNER.job(at.session_state["gpu_owner"])
    assert job is not None and job.wait(300)
    at.run()
    driver.assert_clean(at, f"ran {folder.name}")


def captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def test_dense_then_hybrid_show_side_by_side(folders):
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.query_params["depth"] = "engineer"  # the checkpoint section is Engineer's
    at.run()
    at.toggle(key="gpu_ckpt_open").set_value(True).run()
    driver.choose_label(at.selectbox(key="gpu_ckpt_pick"), TYPED).run()
    run_folder(at, folders["dense"])
    dense = at.session_state["gpu_checkpoint"]
    assert dense.family == "qwen3" and dense.loader.startswith("the course's Qwen3 module")
    assert "fixed boards" not in captions(at).split("Side by side")[0]
    assert not [m for m in at.markdown if "Side by side" in m.value]  # one run: nothing to set beside it
    at.text_input(key="gpu_ckpt_path").input(str(folders["hybrid"])).run()
    boards = describe(folders["hybrid"]).state_bytes(4)  # fp32 on the CPU
    assert f"{format_bytes(boards)} of fixed boards" in captions(at)  # named before the run
    run_folder(at, folders["hybrid"])
    hybrid = at.session_state["gpu_checkpoint"]
    assert [m for m in at.markdown if "Side by side" in m.value]
    assert hybrid.state_bytes == boards and hybrid.family == "qwen3_5_text" and hybrid.state_bytes > 0
    shown = captions(at)
    assert GRAPH_NEEDS_CUDA in shown and f"fixed boards of {format_bytes(hybrid.state_bytes)}" in shown
    more = next(e for e in at.expander if e.label.startswith("Every figure per depth"))
    assert more.table[0].value["fixed boards"].tolist() == [
        format_bytes(p.state_bytes) for p in hybrid.points
    ]
    speed = driver.chart_spec(at, "gpu_ckpt_cmp_speed")
    memory = driver.chart_spec(at, "gpu_ckpt_cmp_memory")
    assert [t["name"].split(" (")[0] for t in speed["data"]] == [dense.name, hybrid.name]
    assert "(MiB)" in memory["layout"]["yaxis"]["title"]["text"]
    assert compare_words([dense, hybrid]) in shown
    assert not at.error
