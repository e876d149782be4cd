"""core/models/qwen35_trace.py and core/figures/real_hybrid.py: a Qwen3.5 run summarised from its own traces,
and stepped pictures that, patched to token t, equal a fresh build at t."""

from __future__ import annotations

import json

import numpy as np
import plotly.io as pio
import pytest

from core.figures import real_hybrid as fr
from core.figures.figure_dict import encoded
from core.models import qwen35_trace as rh

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    from bench.hf_tiny_qwen35 import make_checkpoint
    from core.models.qwen35 import load_qwen35

    return load_qwen35(make_checkpoint(tmp_path_factory.mktemp("qwen35") / "tiny"))


@pytest.fixture(scope="module")
def run(loaded):
    return rh.run_hybrid(loaded.model, loaded.tokenizer.encode("A cat. Then stocks."), 3, board_layer=1)


def _spec(fig) -> dict:
    """What the reader gets: a step is the patched dict, sent encoded (ui.charts.show_figure)."""
    return json.loads(pio.to_json(encoded(fig) if isinstance(fig, dict) else fig, validate=False))


def test_the_run_is_the_models_trace_token_by_token(loaded, run):
    traces = loaded.model.run(run.tokens_in[: run.prompt_length], new_tokens=3)
    assert [tr.token for tr in traces] == run.tokens_out
    assert run.tokens_in[run.prompt_length :] == run.tokens_out[run.prompt_length - 1 : -1]  # greedy writing
    for t, tr in enumerate(traces):
        np.testing.assert_array_equal(run.boards[t], tr.layers[1].state)
        for j, layer in enumerate(run.layer_map.boards):
            np.testing.assert_array_equal(run.alpha[t, j], tr.layers[layer].parts["alpha"])
            np.testing.assert_array_equal(run.beta[t, j], tr.layers[layer].parts["beta"])
        assert run.cache_rows[t] == t + 1 and run.state_bytes[t] == tr.state_bytes
        assert run.cache_bytes[t] == tr.cache_bytes
    np.testing.assert_array_equal(run.cache_keys, traces[-1].layers[3].keys[0])


def test_layer_map_and_the_full_attention_twin(run):
    assert run.layer_map.boards == [0, 1, 2] and run.layer_map.caches == [3] and run.layer_map.interval == 4
    assert rh.LayerMap(("linear_attention", "full_attention", "full_attention")).interval is None
    np.testing.assert_array_equal(run.full_attention_bytes(), 4 * run.cache_bytes)
    m = rh.memory_at(run, 2)
    assert (m.boards, m.cache, m.growth) == (run.state_bytes[1], run.cache_bytes[1], run.cache_bytes[0])
    assert rh.memory_at(run, 1).growth is None
    per_token = run.cache_bytes[1] - run.cache_bytes[0]
    assert rh.crossover_tokens(run) == pytest.approx(run.state_bytes[0] / per_token)


def test_extremes_half_lives_and_fade_words(run):
    fade = rh.hardest_fade(run, 1, 3)
    assert fade.value == run.alpha[:3, 1].min() == run.alpha[fade.token, 1, fade.head]
    write = rh.hardest_write(run, 1, run.steps)
    assert write.value == run.beta[:, 1].max()
    assert rh.half_life_tokens(0.5) == pytest.approx(1.0) and rh.half_life_tokens(1.0) == float("inf")
    assert rh.half_life_text(0.99) == "about 69 tokens" and rh.half_life_text(0.3) == "less than one token"
    assert [rh.alpha_text(a) for a in (0.62, 0.0035, 0.99996)] == ["0.62", "0.0035", "0.9999"]
    assert [rh.share_text(a) for a in (0.62, 0.0035, 0.99996, 1.0)] == ["62%", "under 1%", "99.99%", "100%"]


def test_the_switch_is_found_only_in_the_text_it_was_marked_in(loaded, run):
    text = "A cat. Then stocks."
    t = rh.marker_token(loaded.tokenizer, text, "Then", run)
    assert loaded.tokenizer.decode(run.tokens_in[t : t + 2]).lstrip().startswith("Th")
    assert rh.marker_token(loaded.tokenizer, "Another text. Then", "Then", run) is None


def test_stepped_pictures_patched_to_a_token_equal_a_fresh_build(run):
    T, head = run.steps, 2
    full = run.full_attention_bytes()
    a, b = run.alpha[:, 1], run.beta[:, 1]
    pairs = [
        (
            lambda s: fr.board_figure(run.boards[s - 1, head], run.board_range(), f"t{s}"),
            lambda base, s: fr.board_step(base, run.boards[s - 1, head], f"t{s}"),
        ),
        (
            lambda s: fr.fade_write_figure(a, b, s, f"t{s}"),
            lambda base, s: fr.fade_write_step(base, a, b, s, f"t{s}"),
        ),
        (
            lambda s: fr.cache_figure(run.cache_keys, s, 2.0, f"t{s}"),
            lambda base, s: fr.cache_step(base, run.cache_keys, s, f"t{s}"),
        ),
        (
            lambda s: fr.memory_figure(run.state_bytes, run.cache_bytes, full, s, f"t{s}"),
            lambda base, s: fr.memory_step(base, run.state_bytes, run.cache_bytes, full, s, f"t{s}"),
        ),
    ]
    for build, patch in pairs:
        base = build(T).to_dict()
        for s in (1, 2, T):
            assert _spec(patch(base, s)) == _spec(build(s)), (build, s)


def test_the_pictures_keep_their_size_and_scale(run):
    small, big = (fr.board_figure(run.boards[t, 0], run.board_range(), "b") for t in (0, run.steps - 1))
    assert small.data[0].z.shape == big.data[0].z.shape == run.boards.shape[2:]
    assert (small.data[0].zmin, small.data[0].zmax) == (-run.board_range(), run.board_range())
    fade = fr.fade_write_figure(run.alpha[:, 0], run.beta[:, 0], 2, "f")
    assert fade.data[0].z.shape == (run.alpha.shape[2], run.steps)  # heads × whole run, filled to 2
    assert np.isnan(fade.data[0].z[:, 2:]).all() and not np.isnan(fade.data[0].z[:, :2]).any()
    assert fade.layout.xaxis2.title.text and fade.layout.yaxis.title.text  # the shared token axis, the heads
    for fig in (fr.cache_figure(run.cache_keys, 2, 1.0, "c"), fr.board_figure(run.boards[0, 0], 1.0, "b")):
        assert fig.layout.xaxis.title.text and fig.layout.yaxis.title.text  # every axis named
    assert fr.layer_map_figure(run.layer_map, "m").layout.xaxis.title.text


def test_the_board_layers_bytes_are_boards_and_convolution_windows(loaded, run):
    c = loaded.config
    assert run.board_bytes == c.linear_num_value_heads * c.linear_key_head_dim * c.linear_value_head_dim * 4
    assert run.window_bytes == c.conv_channels() * (c.linear_conv_kernel_dim - 1) * 4  # fp32 weights here
    assert len(run.layer_map.boards) * (run.board_bytes + run.window_bytes) == run.state_bytes[0]
    assert loaded.model.state_bytes() == run.state_bytes[0]  # the model's own count agrees


def test_fades_at_a_stretch_against_the_tokens_before(run):
    fades = rh.fades_at(run, 2, 4)
    assert len(fades) == len(run.layer_map.boards) * run.alpha.shape[2]
    assert [f.drop for f in fades] == sorted((f.drop for f in fades), reverse=True)  # hardest first
    f = fades[0]
    j = run.layer_map.boards.index(f.layer)
    assert f.before == pytest.approx(run.alpha[:2, j, f.head].mean())
    assert f.during == pytest.approx(run.alpha[2:4, j, f.head].mean())
    with pytest.raises(ValueError):
        rh.fades_at(run, 0, 2)  # nothing before the stretch


def test_the_marker_span_covers_the_word(loaded, run):
    text = "A cat. Then stocks."
    start, stop = rh.marker_span(loaded.tokenizer, text, "Then", run)
    assert loaded.tokenizer.decode(run.tokens_in[start:stop]).strip() == "Then"
    assert rh.marker_span(loaded.tokenizer, "Another text. Then", "Then", run) is None


def test_the_hardest_tokens_are_where_some_head_fades_most(run):
    lowest = run.alpha.reshape(run.steps, -1).min(axis=1)
    picked = rh.hardest_tokens(run, 2)
    assert len(picked) == 2 and lowest[picked[0]] == lowest.min() and lowest[picked[0]] <= lowest[picked[1]]
