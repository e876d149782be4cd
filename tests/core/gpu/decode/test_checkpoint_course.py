"""Qwen3 (dense) and Qwen3.5 (hybrid) folders in the checkpoint benchmark, through the course's own
decoders (core/gpu/decode/checkpoint_course.py): tiny random folders written here by transformers (never
downloaded), the benchmark's CPU path end to end. Dense and hybrid of the same attention width side by
side: the hybrid's cache grows only in its attention layers, its boards hold the same bytes at every
depth, both counted on the real tensors and equal to the planner's; the decoders step what
transformers computes; and without CUDA the page's result says the steps were not graphed, and why.
The CUDA graph itself is checked where a GPU is (the last test)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from bench.hf_tiny_qwen3 import make_checkpoint as make_qwen3
from bench.hf_tiny_qwen35 import TEXT
from bench.hf_tiny_qwen35 import make_checkpoint as make_qwen35
from core.gpu.decode.checkpoint_course import Qwen3Decoder, Qwen35Decoder
from core.gpu.decode.checkpoint_decoders import Decoder, open_decoder, state_tensors
from core.gpu.suites.checkpoint_bench import (
    GRAPH_NEEDS_CUDA,
    CheckpointResult,
    Settings,
    describe,
    run_checkpoint,
)
from core.gpu.timing import graphs
from core.gpu.timing.bandwidth import Bandwidth
from core.gpu.timing.bench_env import make_env
from core.models.hf_tokenizer import CheckpointError

transformers = pytest.importorskip("transformers")

FAST = Settings(n_steps=3, warmup=1, repeats=2, depth_seconds=5.0)
BANDWIDTH = Bandwidth(20e9, 10e9, "stated for the test")
DEPTHS = (0, 8, 24, 40)
SAME_WIDTH = dict(  # the dense twin of the tiny hybrid: the same layers, heads and widths, attention everywhere
    vocab_size=320, hidden_size=TEXT["hidden_size"], intermediate_size=TEXT["intermediate_size"],
    num_hidden_layers=TEXT["num_hidden_layers"], num_attention_heads=TEXT["num_attention_heads"],
    num_key_value_heads=TEXT["num_key_value_heads"], head_dim=TEXT["head_dim"], max_position_embeddings=512,
)  # fmt: skip


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("qwen_checkpoints")
    return {
        "dense": make_qwen3(root / "dense", **SAME_WIDTH),
        "hybrid": make_qwen35(root / "hybrid"),
        "multimodal": make_qwen35(root / "multimodal", multimodal=True, seed=1),
    }


@pytest.fixture(scope="module")
def env():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield make_env("cpu")
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def results(folders, env) -> dict[str, CheckpointResult]:
    return {kind: run_checkpoint(folders[kind], env, BANDWIDTH, DEPTHS, FAST) for kind in ("dense", "hybrid")}


def test_each_family_opens_in_the_course_decoder_with_the_whole_protocol(folders, env):
    expected = {"dense": Qwen3Decoder, "hybrid": Qwen35Decoder, "multimodal": Qwen35Decoder}
    for kind, cls in expected.items():
        info = describe(folders[kind])
        decoder = open_decoder(info.family, info.folder, env.device, env.dtype)
        assert type(decoder) is cls and decoder.graphable and "transformers" not in decoder.loader
        members = {n for n in Decoder.__annotations__} | {n for n in vars(Decoder) if not n.startswith("_")}
        assert all(hasattr(decoder, n) for n in members), kind
        decoder.allocate(12)
        decoder.fill(5)
        assert decoder.pos == 5
        logits = decoder.step(torch.tensor([3]))
        assert logits.shape == (decoder.vocab,) and decoder.pos == 6
        decoder.pos = 2  # back: the KV rows past 2 are overwritten by the next steps
        decoder.step(torch.tensor([4]))
        assert decoder.pos == 3
        with pytest.raises(ValueError, match="cannot move forward"):
            decoder.pos = 9
        decoder.release()
        assert decoder.cache_tensors() == [] and state_tensors(decoder) == []


@torch.no_grad()
def test_the_hybrid_bench_path_steps_what_transformers_computes(folders, env):
    info = describe(folders["hybrid"])
    decoder = open_decoder(info.family, info.folder, env.device, env.dtype)
    hf = transformers.Qwen3_5ForCausalLM.from_pretrained(folders["hybrid"]).eval()
    ids = torch.randint(0, 320, (20,), generator=torch.Generator().manual_seed(3))
    full = hf(input_ids=ids[None]).logits[0]  # (T, V)
    decoder.allocate(len(ids) + 1)
    stepped = torch.stack([decoder.step(ids[i : i + 1]) for i in range(len(ids))])  # (T, V)
    assert torch.equal(stepped.argmax(-1), full.argmax(-1))
    torch.testing.assert_close(stepped, full, atol=1e-4, rtol=1e-4)
    prefill = torch.randint(
        0, 320, (1, 70), generator=torch.Generator().manual_seed(0)
    )  # fill's tokens, seed 0
    decoder.allocate(72)
    decoder.fill(70)  # the boards through the chunked form, then a step: transformers' logits
    after = hf(input_ids=torch.cat([prefill, ids[None, :1]], 1)).logits[0, -1]
    torch.testing.assert_close(decoder.step(ids[:1]), after, atol=1e-4, rtol=1e-4)


def test_dense_against_hybrid_side_by_side(results):
    dense, hybrid = results["dense"], results["hybrid"]
    for r in (dense, hybrid):
        assert [p.depth for p in r.points] == list(DEPTHS) and r.cache_matches_plan and not r.stopped
        assert r.loader.startswith("the course's Qwen")
    kinds = TEXT["num_hidden_layers"], TEXT["num_hidden_layers"] // 4  # attention layers: dense, hybrid
    per_layer = 2 * TEXT["num_key_value_heads"] * TEXT["head_dim"] * 4  # a K and a V row, fp32
    assert dense.cache_bytes_per_token == kinds[0] * per_layer
    assert hybrid.cache_bytes_per_token == kinds[1] * per_layer < dense.cache_bytes_per_token
    for p in dense.points + hybrid.points:
        per_token = dense.cache_bytes_per_token if p in dense.points else hybrid.cache_bytes_per_token
        assert p.cache_bytes == p.planned_cache_bytes == per_token * p.depth  # the real tensors, exactly
    assert {p.state_bytes for p in dense.points} == {0} and dense.state_bytes == 0
    boards = (
        3 * TEXT["linear_num_value_heads"] * TEXT["linear_key_head_dim"] * TEXT["linear_value_head_dim"] * 4
    )
    channels = (
        2 * TEXT["linear_num_key_heads"] * TEXT["linear_key_head_dim"]
        + TEXT["linear_num_value_heads"] * TEXT["linear_value_head_dim"]
    )
    windows = 3 * channels * (TEXT["linear_conv_kernel_dim"] - 1) * 4
    assert {p.state_bytes for p in hybrid.points} == {boards + windows} == {hybrid.state_bytes}  # every depth
    for (
        p
    ) in hybrid.points:  # the boards read and written back: the planner's count (core.roofline.step_bytes)
        assert p.bytes_per_token == hybrid.weight_read_bytes + p.planned_cache_bytes + 2 * hybrid.state_bytes
        assert p.predicted_tokens_per_s == pytest.approx(
            BANDWIDTH.for_reading(p.bytes_per_token) / p.bytes_per_token
        )
    assert hybrid.to_dict()["step_method"] == "eager"  # the JSON says how the steps ran
    again = CheckpointResult.from_dict(json.loads(json.dumps(hybrid.to_dict())))
    assert again == hybrid


def test_without_cuda_the_result_says_the_steps_were_not_graphed(results, env):
    assert env.device.type == "cpu"
    for r in results.values():
        assert r.step_method == "eager" and {p.method for p in r.points} == {"eager"}
        assert r.graph_note == GRAPH_NEEDS_CUDA and "CUDA" in r.graph_note


def test_the_multimodal_layout_runs_and_bad_qwen_folders_are_refused(folders, env, tmp_path):
    result = run_checkpoint(folders["multimodal"], env, BANDWIDTH, (0, 8), FAST)
    assert result.family == "qwen3_5" and result.cache_matches_plan and result.state_bytes > 0
    no_tokenizer = tmp_path / "no_tokenizer"
    shutil.copytree(folders["hybrid"], no_tokenizer)
    (no_tokenizer / "tokenizer.json").unlink()
    with pytest.raises(CheckpointError, match="no tokenizer.json"):
        describe(no_tokenizer)
    sliding = tmp_path / "sliding"
    shutil.copytree(folders["dense"], sliding)
    config = json.loads((sliding / "config.json").read_text())
    (sliding / "config.json").write_text(json.dumps({**config, "use_sliding_window": True}))
    with pytest.raises(CheckpointError, match="sliding-window"):
        describe(sliding)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a CUDA device")
@pytest.mark.parametrize("kind", ["dense", "hybrid"])
def test_on_cuda_a_replayed_graph_computes_the_eager_logits_and_the_sweep_is_graphed(folders, kind):
    device = torch.device("cuda")
    info = describe(folders[kind])
    decoder = open_decoder(info.family, info.folder, device, torch.float32)
    token = torch.tensor([5], device=device)
    decoder.allocate(16)
    decoder.fill(6)
    saved = [t.clone() for t in decoder.cache_tensors() + state_tensors(decoder)]

    def back_to_six() -> None:  # the KV rows, boards and windows as the prefill left them
        for t, s in zip(decoder.cache_tensors() + state_tensors(decoder), saved, strict=True):
            t.copy_(s)
        decoder.pos = 6

    eager = decoder.step(token).clone()
    side = torch.cuda.Stream()  # torch.cuda.graph wants a warm-up off the main stream
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        back_to_six()
        decoder.step(token)
    torch.cuda.current_stream().wait_stream(side)
    back_to_six()
    graph = torch.cuda.CUDAGraph()
    with graphs.capturing(graph):
        replayed = decoder.step(token)
    back_to_six()
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(replayed, eager, rtol=1e-4, atol=1e-4)
    del graph
    decoder.release()
    env = make_env("cuda")
    result = run_checkpoint(folders[kind], env, BANDWIDTH, (0, 24), FAST)
    env.close()
    assert result.step_method == "CUDA graph" and result.graph_note is None and result.cache_matches_plan
    assert all(p.tokens_per_s > 0 for p in result.points)


def test_the_side_by_side_words_and_charts_come_from_the_runs(results):
    from core.figures.checkpoint_compare import RunSeries, memory_by_depth, speed_by_depth
    from core.gpu.output.checkpoint_compare import compare_words

    dense, hybrid = results["dense"], results["hybrid"]
    words = compare_words([dense, hybrid])
    d = DEPTHS[-1]
    a = next(p for p in dense.points if p.depth == d)
    b = next(p for p in hybrid.points if p.depth == d)
    assert f"At depth {d:,}" in words and f"{a.tokens_per_s:,.1f} tokens/s" in words
    assert f"{b.tokens_per_s:,.1f} tokens/s" in words and f"{b.tokens_per_s / a.tokens_per_s:.2f}×" in words
    assert ("faster" if b.tokens_per_s > a.tokens_per_s else "slower") in words
    assert compare_words([hybrid, dense]) == words  # which ran first does not matter
    series = [
        RunSeries(
            r.name,
            r is hybrid,
            [p.depth for p in r.points],
            [p.tokens_per_s for p in r.points],
            [p.cache_bytes for p in r.points],
            [p.state_bytes for p in r.points],
        )  # fmt: skip
        for r in (dense, hybrid)
    ]
    speed, memory = speed_by_depth(series), memory_by_depth(series)
    for fig in (speed, memory):
        assert len(fig.data) == 2 and "depth d" in fig.layout.xaxis.title.text
    assert "tokens per second" in speed.layout.yaxis.title.text and "(MiB)" in memory.layout.yaxis.title.text
    held = memory.data[1].y  # the hybrid: boards at depth 0, then cache rows on top
    assert held[0] == pytest.approx(hybrid.state_bytes / 1024**2) and list(held) == sorted(held)
    assert memory.data[0].y[0] == 0 and memory.data[0].y[-1] > held[-1]  # the dense cache outgrows it
    other = compare_words([dense])
    assert other.startswith(f"{dense.name}: ") and f"depth {DEPTHS[-1]:,}" in other
