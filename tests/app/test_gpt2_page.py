"""The GPT-2 page under AppTest: stepping re-reads the whole text, and the counters come from the model."""

from __future__ import annotations

import re

import numpy as np
import pytest

from core.models.gpt2_cache import positions_computed_formula
from core.tokenizer import encode
from tests.app import driver, story
from tests.app.driver import chart_spec as chart
from tests.app.driver import plotly_array as array

PAGE = driver.page_path("gpt2")
DEFAULT_PROMPT = "One day, Mia went to the "


def engineer_page():
    """The page at Engineer depth: the model's guesses, the time chart and the notes on how it was measured."""
    return story.rendered("gpt2", "engineer", "en", timeout=120)


def metric(at, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


@pytest.fixture(scope="module")
def page():
    return driver.fresh(PAGE)


def test_stepping_recomputes_the_whole_text(page):
    at = page
    assert "GPT-2" in at.title[0].value
    p = len(encode(DEFAULT_PROMPT))
    for _ in range(5):
        at.button(key="gpt2_t_step").click().run()
    driver.assert_clean(at, "five steps")
    assert at.session_state["gpt2_t"] == 5
    assert metric(at, "Positions run this step") == str(p + 4)
    expected = positions_computed_formula(p, 5, use_cache=False)
    assert metric(at, "Total positions run") == f"{expected:,}"
    assert metric(at, "Formula says") == f"{expected:,}"

    grid = chart(at, "gpt2_grid")["data"][0]
    assert grid["type"] == "heatmap" and grid["zmin"] == 0 and grid["zmax"] == 2
    z = array(grid["z"])
    stepped = ~np.isnan(z).all(axis=1)
    assert stepped.sum() == 5  # one filled row per step, the rest waiting
    ran = (np.nan_to_num(z[:5]) > 0).sum(axis=1)
    assert ran.tolist() == [p, p + 1, p + 2, p + 3, p + 4]  # each row re-reads the whole prefix

    at.button(key="gpt2_t_back").click().run()
    assert at.session_state["gpt2_t"] == 4
    at.button(key="gpt2_t_reset").click().run()
    assert at.session_state["gpt2_t"] == 0
    driver.assert_clean(at, "back and reset")


def test_the_untouched_page_shows_a_dozen_steps_of_the_triangle():
    """A reader who never clicks sees the point: a dozen rows, each re-running every earlier byte,
    and a caption whose numbers are the picture's own cells."""
    at = driver.fresh(PAGE)
    assert at.session_state["gpt2_t"] == 0
    p = len(encode(DEFAULT_PROMPT))
    z = array(chart(at, "gpt2_grid")["data"][0]["z"])
    assert z.shape[0] >= 12
    ran = np.nan_to_num(z) > 0
    for row in range(z.shape[0]):  # lower-triangular: at step t every position up to the newest ran
        newest = p + row - 1
        assert ran[row, : newest + 1].all() and not ran[row, newest + 1 :].any()
    new, again = int((z == 2).sum()), int((z == 1).sum())
    (caption,) = [c.value for c in at.caption if c.value.startswith("Each row is one step")]
    assert f"ran {new + again:,} positions, but only {new:,} were new" in caption
    assert f"the other {again:,} (light blue)" in caption and "triangle" in caption


def test_long_prompt_is_cut_with_a_note(page):
    at = page
    at.text_input(key="gpt2_prompt").input("キャッシュ" * 26).run()  # 390 bytes > 256-byte window
    driver.assert_clean(at, "long prompt")
    assert any("context window" in w.value for w in at.warning)
    assert any("stops" in i.value for i in at.info)


# -- the released-weights switch, with a tiny random GPT-2 in Hugging Face format (no network) ------


def test_real_checkpoint_runs_on_bpe_tokens(hf_folder, tmp_path, monkeypatch):
    from bench.hf_tiny_gpt2 import point_pages_at
    from core.generation import Sampling, run_generation
    from core.models.hf_gpt2 import load_gpt2

    point_pages_at(monkeypatch, hf_folder, tmp_path)
    at = engineer_page()
    assert at.radio(key="gpt2_model").value == "tiny"  # the shipped model stays the default
    at.radio(key="gpt2_model").set_value(str(hf_folder)).run()
    driver.assert_clean(at, "switching to the checkpoint")
    loaded = load_gpt2(hf_folder)
    prompt = loaded.tokenizer.encode(DEFAULT_PROMPT)
    n = at.slider(key="gpt2_n_real").value
    assert n == 40  # a shorter default run for a released model
    run = run_generation(loaded.model, prompt, n, use_cache=False, sampling=Sampling())
    steps = len(run.traces)
    assert metric(at, "Positions run this step") == str(len(prompt) + steps - 1)
    assert at.code[0].value == loaded.tokenizer.decode(prompt + run.new_ids)  # BPE text, not bytes
    assert any(c.value.startswith("As tokens") and "`␣the`" in c.value for c in at.caption)
    bars = chart(at, "gpt2_top5")["data"][0]
    assert list(array(bars["x"])) == pytest.approx([p for _, p in run.top[-1]], abs=1e-6)
    assert list(bars["y"]) == [loaded.tokenizer.label(i) for i, _ in run.top[-1]]
    captions = " ".join(c.value for c in at.caption)
    assert "each column one token of the text" in captions and "each step run once" in captions
    assert "one thread of this server's processor" in " ".join(m.value for m in at.markdown)
    assert chart(at, "gpt2_ms")["layout"]["xaxis"]["title"]["text"] == "length of the text read (tokens)"
    for _ in range(2):
        at.button(key="gpt2_t_step").click().run()
    driver.assert_clean(at, "stepping the checkpoint")
    assert metric(at, "Positions run this step") == str(len(prompt) + 1)


def test_missing_weights_offline_say_how_to_get_them(tmp_path, monkeypatch):
    from bench.hf_tiny_gpt2 import point_pages_at
    from core.models import fetch

    point_pages_at(monkeypatch, None, tmp_path, offline=True)
    at = driver.fresh(PAGE)
    assert "GPT-2 small, real weights (not here yet)" in at.radio(key="gpt2_model").options
    at.radio(key="gpt2_model").set_value("missing:gpt2").run()
    driver.assert_clean(at, "picking missing weights")
    info = " ".join(i.value for i in at.info)
    assert "about 550 MB" in info and "tiny byte model" in info
    assert "python -m core.models.fetch gpt2" not in info  # the command is an engineer's
    assert any("HF_HUB_OFFLINE" in w.value for w in at.warning)
    at.query_params["depth"] = "engineer"
    at.run()
    info = " ".join(i.value for i in at.info)
    assert "python -m core.models.fetch gpt2" in info and fetch.ENV_FOLDER in info
    assert not [b for b in at.button if b.key == "gpt2_download"]  # offline: no button at all
    assert metric(at, "Positions run this step")  # the tiny model still runs below


def test_download_button_shows_the_size_and_fetches(hf_folder, tmp_path, monkeypatch):
    from bench.hf_tiny_gpt2 import fake_hub_cache, point_pages_at
    from core.models import fetch

    point_pages_at(monkeypatch, None, tmp_path, offline=False)
    calls = []

    def fake_download(key="gpt2", cache_dir=None, report=None):
        calls.append(key)
        for name in fetch.FILES:
            report(name, 1, 2)
            report(name, 2, 2)
        return fake_hub_cache(hf_folder, tmp_path)

    monkeypatch.setattr(fetch, "download", fake_download)
    at = driver.fresh(PAGE)
    at.radio(key="gpt2_model").set_value("missing:gpt2").run()
    button = at.button(key="gpt2_download")
    assert "550 MB" in button.label and not calls  # size first, nothing fetched before the click
    button.click().run()
    driver.assert_clean(at, "download")
    assert calls == ["gpt2"] and any("is here" in s.value for s in at.success)
    options = at.radio(key="gpt2_model").options
    assert "GPT-2 small, real weights" in options and len(options) == 2  # found now, no 'missing' entry
    assert at.radio(key="gpt2_model").value != "missing:gpt2"  # the switch picked the new weights
    assert at.radio(key="gpt2_model").value != "tiny"
    at.run()
    assert not at.success  # said once


def test_a_bad_folder_is_one_line_and_the_page_keeps_working(tmp_path, monkeypatch):
    from bench.hf_tiny_gpt2 import point_pages_at

    bad = tmp_path / "not-a-checkpoint"
    bad.mkdir()
    point_pages_at(monkeypatch, bad, tmp_path / "cache")
    at = driver.fresh(PAGE)
    at.radio(key="gpt2_model").set_value(str(bad)).run()
    driver.assert_clean(at, "bad folder")
    assert len(at.error) == 1 and "no config.json" in at.error[0].value and "\n" not in at.error[0].value
    assert metric(at, "Positions run this step")


def test_download_without_internet_says_so_at_once(tmp_path, monkeypatch):
    """The real Download path against a Hub nobody answers for: one line within seconds, the page
    keeps running the tiny model, and nothing lands in the reader's cache."""
    import socket
    import time

    import huggingface_hub

    from bench.hf_tiny_gpt2 import point_pages_at
    from core.models import fetch

    cache = tmp_path / "cache"
    point_pages_at(monkeypatch, None, cache, offline=False)
    with socket.socket() as s:  # a loopback port nobody listens on: refused at once
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(huggingface_hub.constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    at = driver.fresh(PAGE)
    at.radio(key="gpt2_model").set_value("missing:gpt2").run()
    started = time.monotonic()
    at.button(key="gpt2_download").click().run()
    assert time.monotonic() - started < 5
    driver.assert_clean(at, "download without internet")
    [error] = at.error
    assert error.value.startswith(f"127.0.0.1:{port} cannot be reached") and "\n" not in error.value
    assert fetch.ENV_FOLDER in error.value
    assert not at.success and metric(at, "Positions run this step")  # the tiny model still runs
    assert not cache.exists() or not any(cache.iterdir())


def test_a_hex_byte_among_the_likeliest_is_explained():
    """A Japanese prompt makes the byte model expect the next piece of a multi-byte character: the
    top-5 chart shows it as hex (xE3 …), and a caption says what that is."""
    at = engineer_page()
    at.text_input(key="gpt2_prompt").input("こんにちは、こんにちは、こん").run()
    driver.assert_clean(at, "Japanese prompt")
    at.button(key="gpt2_t_step").click().run()
    spec = chart(at, "gpt2_top5")
    labels = list(spec["data"][0]["y"])
    # bytes 0x80 and up are pieces of a multi-byte character (a tab, x09, is not, and gets no caption)
    hex_labels = [label for label in labels if re.fullmatch(r"x[89A-F][0-9A-F]", label)]
    notes = [c.value for c in at.caption if "is a byte written in hex" in c.value]
    assert bool(hex_labels) == bool(notes), (labels, notes)
    assert hex_labels, f"expected a multi-byte piece among {labels}"
    assert notes[0].startswith(f"{hex_labels[0]} is a byte written in hex")


def chart_keys(at) -> list[str]:
    """The keys of the charts on the page, in page order."""
    return [element.proto.id.rsplit("-", 1)[-1] for element in driver.charts(at)]


def lower_triangle(z: np.ndarray, prompt: int) -> bool:
    """Whether every row t of the recompute grid ran every position up to the newest and none after it."""
    ran = np.nan_to_num(z) > 0
    return all(
        ran[row, : prompt + row].all() and not ran[row, prompt + row :].any() for row in range(z.shape[0])
    )


@pytest.mark.parametrize("depth", ["story", "engineer"])
def test_the_page_opens_on_the_filled_triangle_at_either_depth(depth):
    """Before any Step the grid is a dozen filled rows (the finished run's first dozen steps), each
    re-running every earlier position: the triangle the lesson is about, never a single prompt row."""
    at = story.rendered("gpt2", depth, "en", timeout=120)
    assert at.session_state["gpt2_t"] == 0
    z = array(chart(at, "gpt2_grid")["data"][0]["z"])
    p = len(encode(DEFAULT_PROMPT))
    assert z.shape[0] == 12 and not np.isnan(z).all(axis=1).any()  # every framed row filled
    assert lower_triangle(z, p)
    assert (z[1:] == 1).any(axis=1).all()  # from step 2 on, each row recomputes
    (caption,) = [c.value for c in at.caption if c.value.startswith("Each row is one step")]
    assert "triangle" in caption and "diagonal" not in caption


def test_step_one_says_a_triangle_grows_not_a_diagonal():
    """After the first Step the grid holds one row, the prompt, all new: the caption says what the next
    rows add (everything again) instead of calling one row a diagonal."""
    at = driver.fresh(PAGE)
    at.button(key="gpt2_t_step").click().run()
    (caption,) = [c.value for c in at.caption if c.value.startswith("Each row is one step")]
    p = len(encode(DEFAULT_PROMPT))
    assert f"read the {p}-byte prompt, **all new**" in caption
    assert "triangle grows" in caption and "diagonal" not in caption and "nothing is run twice" not in caption


def test_story_shows_the_grid_and_the_work_engineer_adds_guesses_and_time():
    """Story carries the page's idea in two pictures; the model's guesses and the measured time per step
    are the engineers' (and are not even built for a Story reader)."""
    plain = chart_keys(driver.fresh(PAGE))
    assert plain == ["gpt2_grid", "gpt2_work"]
    deep = chart_keys(engineer_page())
    assert set(plain) < set(deep) and {"gpt2_top5", "gpt2_ms"} <= set(deep)
