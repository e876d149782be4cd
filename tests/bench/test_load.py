"""The load test's protocol helpers (quick), the load test itself and the classroom deploy (slow)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from bench.load.lessons import KIMI_K3, KV_CACHE, LessonDrive
from bench.load.protocol import PageView, rerun_msg, slider_value, text_value, trigger
from bench.load.server import cpu_seconds, rss_bytes
from deploy.nginx_conf import render

ROOT = Path(__file__).resolve().parents[2]


# -- the messages a browser sends ----------------------------------------------------------------


def test_a_click_is_a_rerun_with_the_trigger_the_other_values_and_the_cached_hashes():
    data = rerun_msg(
        page_script_hash="abc",
        widgets=[
            trigger("$$ID-1-kv_t_step"),
            slider_value("$$ID-2-kv_temp", 0.5),
            text_value("$$ID-3-p", "hé"),
        ],
        fragment_id="frag",
        cached_hashes=["h1", "h2"],
        url="http://127.0.0.1:1/kv-cache",
    )
    msg = BackMsg()
    msg.ParseFromString(data)
    assert msg.WhichOneof("type") == "rerun_script"
    state = msg.rerun_script
    assert (state.page_script_hash, state.page_name, state.fragment_id) == ("abc", "", "frag")
    step, temp, text = state.widget_states.widgets
    assert (step.id, step.WhichOneof("value"), step.trigger_value) == (
        "$$ID-1-kv_t_step",
        "trigger_value",
        True,
    )
    assert list(temp.double_array_value.data) == [0.5]
    assert text.string_value == "hé"
    assert list(state.cached_message_hashes) == ["h1", "h2"]
    assert state.context_info.url.endswith("/kv-cache")


def test_a_page_load_names_the_page_and_no_hash():
    msg = BackMsg()
    msg.ParseFromString(rerun_msg(page_name="kimi-k3"))
    assert (msg.rerun_script.page_name, msg.rerun_script.page_script_hash) == ("kimi-k3", "")
    assert not msg.rerun_script.widget_states.widgets


# -- the page a browser keeps --------------------------------------------------------------------


def _element(path, fill, *, fragment="", cacheable=False, hash_=""):
    msg = ForwardMsg()
    msg.metadata.delta_path.extend(path)
    msg.metadata.cacheable = cacheable
    msg.hash = hash_
    msg.delta.fragment_id = fragment
    fill(msg.delta.new_element)
    return msg.SerializeToString()


def _markdown(body):
    return lambda e: setattr(e.markdown, "body", body)


def _code(text):
    return lambda e: setattr(e.code, "code_text", text)


def _button(widget_id):
    return lambda e: (setattr(e.button, "id", widget_id), setattr(e.button, "label", "Step"))


def _finished(status=ForwardMsg.FINISHED_SUCCESSFULLY):
    msg = ForwardMsg()
    msg.script_finished = status
    return msg.SerializeToString()


def _navigation(page_hash):
    msg = ForwardMsg()
    msg.navigation.page_script_hash = page_hash
    return msg.SerializeToString()


def _ref(path, hash_):
    msg = ForwardMsg()
    msg.metadata.delta_path.extend(path)
    msg.ref_hash = hash_
    return msg.SerializeToString()


def _load(view: PageView, *frames: bytes) -> None:
    view.start_run()
    for frame in frames:
        view.apply(frame)


def test_the_view_reads_widgets_counter_and_text_and_keeps_big_elements_by_hash():
    view = PageView()
    _load(
        view,
        _navigation("page-hash"),
        _element((0, 0), _button("$$ID-aa-kv_t_step")),
        _element((0, 1), _markdown("**byte 3 of 120**")),
        _element((0, 2), _code("The cache s")),
        _element((0, 3), _markdown("big picture"), cacheable=True, hash_="h1"),
        _finished(),
    )
    assert view.finished == "full" and view.page_script_hash == "page-hash"
    assert view.widget("kv_t_step") == ("$$ID-aa-kv_t_step", "")
    with pytest.raises(LookupError):
        view.widget("t_step")  # the key must be the id's whole last part
    assert view.counter() == (3, 120)
    assert view.code_texts() == ["The cache s"]
    assert view.cached_hashes() == ["h1"]
    # the next run refers to the big element by its hash; it lands where the reference says
    _load(
        view,
        _element((0, 1), _markdown("**byte 120 of 120 — the end; press Reset to start again**")),
        _ref((0, 4), "h1"),
        _finished(),
    )
    assert view.counter() == (120, 120)
    assert view.elements[(0, 4)].element.markdown.body == "big picture"
    assert (0, 0) not in view.elements and (0, 3) not in view.elements  # not redrawn: gone
    assert view.errors == [] and view.bytes_received > 0


def test_a_fragment_run_replaces_only_its_own_elements():
    view = PageView()
    _load(
        view,
        _element((0, 0), _markdown("**the whole run** — Step replays from byte 1 of 9"), fragment="f"),
        _element((0, 1), _markdown("outside")),
        _element((0, 2), _markdown("old, in the fragment"), fragment="f"),
        _finished(),
    )
    assert view.counter() == (0, 9)  # before the first Step, on a page that shows its whole run
    view.start_run("f")
    view.apply(_element((0, 0), _markdown("**byte 1 of 9**"), fragment="f"))
    view.apply(_finished(ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY))
    assert view.finished == "fragment" and view.counter() == (1, 9)
    assert (0, 1) in view.elements and (0, 2) not in view.elements


def test_cached_messages_expire_after_more_than_two_runs_and_an_unknown_reference_is_an_error():
    view = PageView()
    _load(view, _element((0, 0), _markdown("big"), cacheable=True, hash_="h"), _finished())
    _load(view, _finished())
    assert view.cached_hashes() == ["h"]  # two runs finished since it came
    _load(view, _finished())
    assert view.cached_hashes() == []
    with pytest.raises(ValueError, match="never cached"):
        view.apply(_ref((0, 0), "h"))


def test_exceptions_error_boxes_and_page_not_found_are_counted():
    view = PageView()

    def exception(e):
        e.exception.type, e.exception.message = "KeyError", "boom"

    def error_box(e):
        e.alert.body, e.alert.format = "Sorry — something went wrong", e.alert.ERROR

    def warning_box(e):
        e.alert.body, e.alert.format = "just a warning", e.alert.WARNING

    not_found = ForwardMsg()
    not_found.page_not_found.page_name = "kv-cache"
    _load(view, not_found.SerializeToString(), _element((0, 0), exception), _element((0, 1), error_box))
    _load(view, _element((0, 2), warning_box), _finished())
    assert view.page_not_found == 1
    assert [e.split(":")[0] for e in view.errors] == ["exception KeyError", "error box"]
    with pytest.raises(LookupError):
        view.counter()


def test_an_early_finish_keeps_waiting_for_the_run_that_replaced_it():
    view = PageView()
    _load(
        view, _element((0, 0), _markdown("**byte 0 of 2**")), _finished(ForwardMsg.FINISHED_EARLY_FOR_RERUN)
    )
    assert view.finished == "early" and (0, 0) in view.elements


# -- the expected text ---------------------------------------------------------------------------


def _drive(prompt_steps: bool) -> LessonDrive:
    return LessonDrive(
        slug="x",
        step_key="x",
        default=("s",),
        shared=(("s",),),
        unique=lambda i: ("s", i),
        states=lambda s, ids: [],
        widget_keys=(),
        text=lambda s: [ord(c) for c in "The cache grows"],
        decode=lambda ids: "".join(map(chr, ids)),
        prompt_steps=prompt_steps,
    )


def test_the_text_at_step_t_counts_new_tokens_or_every_token_as_the_lesson_does(monkeypatch):
    monkeypatch.setattr("bench.load.lessons._kv_prompt", lambda: tuple(b"The cache "))
    generated = _drive(prompt_steps=False)  # the KV cache page: step t shows the prompt and t new bytes
    assert generated.text_at(("s",), 2) == "The cache gr"
    assert generated.text_at(("s",), 0) == "The cache grows"  # before the first Step: the whole run
    walked = _drive(prompt_steps=True)  # Kimi K3: step t shows the first t bytes read
    assert walked.text_at(("s",), 3) == "The"
    assert KV_CACHE.url_path == "kv-cache" and KIMI_K3.url_path == "kimi-k3"
    assert KV_CACHE.unique(0) != KV_CACHE.unique(1) and len({KV_CACHE.unique(i) for i in range(960)}) == 960


def test_proc_readings_of_this_process():
    assert cpu_seconds(os.getpid()) > 0
    assert 10 * 2**20 < rss_bytes(os.getpid()) < 64 * 2**30


# -- the nginx config ------------------------------------------------------------------------------


def test_the_nginx_config_pins_each_process_and_fails_over_to_the_others(tmp_path):
    text = render(str(tmp_path), "127.0.0.1:8080", [8081, 8082, 8083])
    assert "listen 127.0.0.1:8080;" in text and "@" not in text.replace("$cookie", "")
    assert text.count("upstream course_") == 4  # course_any and one per process
    assert (
        "upstream course_1 {\n        server 127.0.0.1:8082;\n        server 127.0.0.1:8081 backup;" in text
    )
    assert '"127.0.0.1:8083" 2;' in text and '"2" course_2;' in text
    assert "proxy_set_header Upgrade $http_upgrade;" in text and "proxy_set_header Host $http_host;" in text
    with pytest.raises(ValueError):
        render(str(tmp_path), "127.0.0.1:8080", [8081, 8081])
    if shutil.which("nginx"):
        (tmp_path / "tmp").mkdir()
        (tmp_path / "nginx.conf").write_text(text)
        args = [
            "nginx",
            "-t",
            "-q",
            "-p",
            str(tmp_path),
            "-c",
            str(tmp_path / "nginx.conf"),
            "-e",
            str(tmp_path / "e.log"),
        ]
        done = subprocess.run(args, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


# -- slow: the load test against a fresh server, and the classroom --------------------------------


def _load_test(tmp_path, *args: str, timeout: int = 600) -> list[dict]:
    out = tmp_path / "load.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", "--no-chromium", "--json", str(out), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(out.read_text())


def _assert_clean(level: dict) -> None:
    assert level["errors"] == [] and level["crosstalk"] == [], level
    assert (
        level["steps"] > 0 and level["p50_ms"] > 0 and level["max_ms"] >= level["p95_ms"] >= level["p50_ms"]
    )
    assert level["checks"] > level["steps"] and level["text_checks"] > 0
    assert level["cpu_ms_per_step"] > 0 and level["rss_mb"] > 50


@pytest.mark.slow
def test_a_few_readers_step_two_lessons_without_errors_or_cross_talk(tmp_path):
    levels = _load_test(tmp_path, "--readers", "3", "--seconds", "6", "--interval", "0.5")
    assert [(lv["lesson"], lv["readers"]) for lv in levels] == [("kv_cache", 3), ("kimi_k3", 3)]
    for level in levels:
        _assert_clean(level)


def _free_base_port(k: int) -> int:
    import socket

    for _ in range(50):
        base = random.randint(20000, 40000)
        try:
            for p in range(base, base + k + 1):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
    pytest.skip("no free run of ports")


def _get(url: str, cookie: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
        return response.status, response.headers.get("Set-Cookie") or ""


def _pinned_lines(access_log: Path, expected: int, timeout_s: float = 5.0) -> list[str]:
    """The access log's pinned requests: nginx writes a line once a request is finished, which can
    be a moment after the client has its response, so wait (briefly) for the lines to appear."""
    deadline = time.monotonic() + timeout_s
    while True:
        lines = [line for line in access_log.read_text().splitlines() if line.endswith("pin=1")]
        if len(lines) >= expected or time.monotonic() > deadline:
            return lines
        time.sleep(0.05)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed (apt-get install nginx)")
def test_classroom_starts_two_processes_behind_nginx_with_sticky_sessions_and_stops_them(tmp_path):
    script, state = str(ROOT / "deploy" / "classroom.sh"), tmp_path / "state"
    env = {**os.environ, "COURSE_CLASSROOM_DIR": str(state), "COURSE_PYTHON": sys.executable}
    base = _free_base_port(2)
    url = f"http://127.0.0.1:{base}"

    def classroom(*args: str) -> str:
        done = subprocess.run([script, *args], env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    classroom("start", "2", str(base))
    try:
        pids = [int(p) for p in classroom("pids").split()]
        assert len(pids) == 2
        pins = {_get(f"{url}/kv-cache")[1].split(";")[0] for _ in range(2)}
        assert pins == {"course_backend=0", "course_backend=1"}  # new browsers are handed out in turn
        for _ in range(3):
            assert _get(f"{url}/kv-cache", "course_backend=1") == (200, "")  # pinned: no new cookie
        pinned = _pinned_lines(state / "access.log", 3)
        assert len(pinned) == 3 and all(f"127.0.0.1:{base + 2} " in line for line in pinned)
        # readers through nginx: websockets upgrade, sessions stay on their process
        levels = _load_test(
            tmp_path,
            "--url",
            url,
            "--pid",
            *map(str, pids),
            "--lesson",
            "kimi_k3",
            "--readers",
            "2",
            "--seconds",
            "4",
        )
        _assert_clean(levels[0])
    finally:
        classroom("stop")
    assert classroom("pids").strip() == ""
    assert not (state / "nginx.pid").exists()
    assert all(not Path(f"/proc/{pid}").exists() for pid in pids)


def test_the_chromium_reader_reads_every_form_of_the_status_line():
    from bench.load.protocol import step_status as parse_status

    assert parse_status("byte 3 of 53") == (3, 53)
    assert parse_status("byte 53 of 53 — the end; press Reset to start again") == (53, 53)
    assert parse_status("the finished run — Step replays from byte 1 of 53") == (0, 53)
    assert parse_status("Byte 53 of 53 (its own writing): t") is None  # the line under it is not the status
