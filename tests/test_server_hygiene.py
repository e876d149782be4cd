"""Issue 11, "no surprises": what a server shared by a class must never do.

- listen beyond this machine unless asked, answer a websocket for a foreign Host or Origin, accept
  big uploads, or show a reader a traceback (config + a live server + the page guard);
- change a shared model while a reader's forward pass runs (the MoE load counter);
- change torch's process-wide thread count per request;
- load a checkpoint that fits the model only in part (strict loading, one-line errors).
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import torch
from streamlit.testing.v1 import AppTest

import core.threads
from bench.load_server import course_server
from core.models.gpt2 import GPT2, GPT2Config
from core.models.mini_k3 import MiniK3, MiniK3Config
from core.models.protocol import CheckpointMismatch
from core.models.recall_models import RecallModel, RecallModelConfig

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
LOOPBACK = {"localhost", "127.0.0.1", "::1"}


# -- server config -----------------------------------------------------------------------------


def test_config_listens_on_loopback_limits_hosts_origins_and_uploads_and_hides_errors():
    server, client = CONFIG["server"], CONFIG["client"]
    assert server["address"] == "127.0.0.1"
    assert set(server["allowedHosts"]) == LOOPBACK  # not empty (= any Host) and no "*"
    assert server["enableCORS"] is True and server["corsAllowedOrigins"] == []
    assert server["enableXsrfProtection"] is True
    assert server["maxUploadSize"] == 1  # MB, Streamlit's smallest
    assert client["showErrorDetails"] == "none"
    assert client["showErrorLinks"] is False


def test_no_full_garbage_collection_after_every_step():
    """Streamlit's post-run gc.collect() cost 110–160 ms per Step click (bench/pages.py); it is off,
    and Streamlit reads it so (the option is hidden from `config show`)."""
    from streamlit import config

    assert CONFIG["runner"]["postScriptGC"] is False
    config._config_options = None  # re-read the files from the repository root
    try:
        config.get_config_options(force_reparse=True, options_from_flags={})
        assert config.get_option("runner.postScriptGC") is False
    finally:
        config._config_options = None


def test_the_only_upload_fits_the_upload_limit():
    from core.plan.config import MAX_CONFIG_BYTES

    uploaders = sorted(
        str(path.relative_to(ROOT))
        for folder in ("lessons", "ui")
        for path in (ROOT / folder).rglob("*.py")
        if "file_uploader(" in path.read_text()
    )
    assert uploaders == ["ui/planner.py"], "a new uploader: check server.maxUploadSize still fits it"
    assert MAX_CONFIG_BYTES <= CONFIG["server"]["maxUploadSize"] * 1024 * 1024


def test_streamlit_reads_the_config_and_a_command_line_flag_overrides_it():
    def shown(*flags: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "streamlit", "config", "show", *flags],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    default = shown()
    for line in ('address = "127.0.0.1"', 'showErrorDetails = "none"', "maxUploadSize = 1"):
        assert re.search(rf"^{re.escape(line)}$", default, re.M), line
    assert re.search(r'^address = "0\.0\.0\.0"$', shown("--server.address", "0.0.0.0"), re.M)


def test_run_sh_passes_its_arguments_to_streamlit():
    text = (ROOT / "run.sh").read_text()
    assert 'exec .venv/bin/python -m streamlit run app.py "$@"' in text
    assert "--server.allowedHosts" in text  # says how to host a class


@contextlib.contextmanager
def _server_as_configured():
    """`streamlit run app.py` with nothing but a port: the checked-in config decides the rest."""
    log = ROOT / "artifacts" / "streamlit-as-configured.log"
    with course_server(
        log, lambda port: [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    ) as (url, _pid):
        yield int(url.rsplit(":", 1)[1])


def _listeners(port: int) -> set[str]:
    """Local addresses listening on `port`, from /proc/net/tcp and tcp6 (hex, as the kernel writes them)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError):
            for row in Path(table).read_text().splitlines()[1:]:
                local, state = row.split()[1], row.split()[3]
                address, hex_port = local.split(":")
                if state == "0A" and int(hex_port, 16) == port:  # 0A = LISTEN
                    found.add(address)
    return found


def _handshake(port: int, host: str, origin: str | None = None) -> int:
    """The HTTP status Streamlit's websocket answers a browser's upgrade request with."""
    lines = [
        "GET /_stcore/stream HTTP/1.1",
        f"Host: {host}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
        "Sec-WebSocket-Version: 13",
        "Sec-WebSocket-Protocol: streamlit",
    ]
    if origin:
        lines.append(f"Origin: {origin}")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status = s.recv(1024).split(b"\r\n", 1)[0].decode()
    return int(status.split()[1])


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads the Linux socket table")
def test_a_server_started_as_configured_is_reachable_only_from_this_machine():
    with _server_as_configured() as port:
        assert _listeners(port) == {"0100007F"}, "listens beyond 127.0.0.1"
        assert _handshake(port, f"localhost:{port}") == 101
        assert _handshake(port, f"127.0.0.1:{port}", origin=f"http://127.0.0.1:{port}") == 101
        assert _handshake(port, f"rebound.example:{port}") == 403  # DNS rebinding
        assert _handshake(port, f"localhost:{port}", origin="http://evil.example") == 403  # another site


# -- an unexpected error on a page --------------------------------------------------------------


def _failing_page(reraise):
    import streamlit as st

    from ui.errors import guarded

    def page():
        st.write("before")
        open("/srv/secret/settings.toml").read()  # a server path in the message

    guarded(page, reraise=reraise)


def _stopping_page():
    import streamlit as st

    from ui.errors import guarded

    guarded(st.stop)
    st.write("not reached")


def test_an_error_shows_one_friendly_line_and_logs_the_rest(caplog):
    at = AppTest.from_function(_failing_page, kwargs={"reraise": False}, default_timeout=60)
    with caplog.at_level(logging.ERROR, logger="course"):
        at.run()
    assert not at.exception
    [error] = at.error
    ref = re.search(r"reference ([0-9a-f]{8})", error.value).group(1)
    assert "\n" not in error.value
    for secret in ("/srv", "settings", "Traceback", "FileNotFoundError", "Errno"):
        assert secret not in error.value
    for detail in (ref, "Traceback", "FileNotFoundError", "/srv/secret/settings.toml"):
        assert detail in caplog.text  # the console log has it all


def test_under_apptest_the_error_is_raised_again_so_page_tests_see_it():
    at = AppTest.from_function(_failing_page, kwargs={"reraise": None}, default_timeout=60)
    at.run()
    assert at.exception and at.error  # the friendly line, and the exception the page tests check


def test_st_stop_passes_through_the_guard():
    at = AppTest.from_function(_stopping_page, default_timeout=60)
    at.run()
    assert not at.exception and not at.error and not at.markdown


def test_the_router_runs_the_page_inside_the_guard():
    text = (ROOT / "app.py").read_text()
    assert "guarded(navigation.run)" in text and "\nnavigation.run()" not in text


# -- shared models are not changed by a reader ----------------------------------------------------


def _snapshot(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Every parameter and buffer, persistent or not (the MoE load counter is not persistent)."""
    tensors = dict(model.named_parameters())
    tensors.update({f"buffer:{name}": b for name, b in model.named_buffers()})
    return {name: t.detach().clone() for name, t in tensors.items()}


def _assert_unchanged(before: dict[str, torch.Tensor], model: torch.nn.Module) -> None:
    after = _snapshot(model)
    assert after.keys() == before.keys()
    changed = [name for name in before if not torch.equal(before[name], after[name])]
    assert not changed, f"a reader's forward pass changed {changed}"


@pytest.fixture
def thread_count():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.usefixtures("thread_count")
def test_mini_k3_forward_in_eval_mode_leaves_every_parameter_and_buffer_unchanged():
    from core.k3 import live_run, route_text

    torch.manual_seed(0)
    model = MiniK3(MiniK3Config()).eval()  # as the app serves it (MiniK3.load returns it in eval)
    ids = list(b"the cat sat on the mat")
    before = _snapshot(model)
    assert any(name.endswith(".load") for name in before), "the MoE load counter is checked too"
    with torch.no_grad():
        model(torch.tensor([ids]))  # a whole text (lesson 9's router picture)
    route_text(model, ids)
    live_run(model, ids[:8], new_tokens=4)  # byte by byte (lesson 8)
    _assert_unchanged(before, model)


def test_the_moe_load_counter_still_counts_in_training():
    from core.models.moe import MoE

    torch.manual_seed(0)
    model = MiniK3(MiniK3Config()).train()
    model(torch.tensor([list(b"abcdef")]))
    moes = [layer.ffn for layer in model.layers if isinstance(layer.ffn, MoE)]
    assert moes and all(int(moe.load.sum()) == 6 * moe.cfg.top_k for moe in moes)


@pytest.mark.usefixtures("thread_count")
def test_gpt2_and_recall_forward_in_eval_mode_leave_the_model_unchanged():
    from core.generation import run_generation

    torch.manual_seed(0)
    gpt2 = GPT2(GPT2Config(n_layer=1, n_head=2, d_model=16, block_size=32)).eval()
    before = _snapshot(gpt2)
    for use_cache in (True, False):
        run_generation(gpt2, list(b"abc"), 5, use_cache=use_cache)
    _assert_unchanged(before, gpt2)

    recall = RecallModel(RecallModelConfig(mixer="hybrid", d_model=16, n_heads=1)).eval()
    before = _snapshot(recall)
    with torch.no_grad():
        recall(torch.randint(0, recall.cfg.vocab_size, (1, 12)))
    cache = recall.new_cache()
    for token in range(5):
        recall.step(token, cache)
    _assert_unchanged(before, recall)


# -- torch's thread count ------------------------------------------------------------------------


@pytest.fixture
def set_calls(monkeypatch):
    """Every torch.set_num_threads call made from now on (any thread), passed through to torch."""
    calls: list[int] = []
    real = torch.set_num_threads

    def spy(n: int) -> None:
        calls.append(n)
        real(n)

    before = torch.get_num_threads()
    monkeypatch.setattr(torch, "set_num_threads", spy)
    yield calls
    real(before)


def test_the_app_sets_the_thread_count_once_and_pages_never_change_it(monkeypatch, set_calls):
    monkeypatch.setattr(core.threads, "_fixed", None)  # as in a fresh server process
    torch.set_num_threads(2)  # what torch starts with on this machine
    set_calls.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    for page in ("lessons/gpt2.py", "lessons/linear_attention.py", "lessons/chunks.py"):
        at.switch_page(page).run()  # run_generation(threads=1), core.board and the forms' one_thread
        assert not at.exception, (page, at.exception)
    at.run()
    assert set_calls == [1], "the app may set torch's thread count once, at start-up, and never again"


def test_threads_changes_the_count_only_when_asked_for_another(set_calls):
    from core.generation import run_generation
    from core.ops.forms import one_thread

    torch.set_num_threads(1)
    set_calls.clear()
    with one_thread(), core.threads.threads(1), core.threads.threads(None):
        pass
    assert set_calls == []  # the app's case: already one thread
    torch.manual_seed(0)
    gpt2 = GPT2(GPT2Config(n_layer=1, n_head=2, d_model=16, block_size=32)).eval()
    run_generation(gpt2, list(b"ab"), 2, threads=1)
    assert set_calls == []
    with core.threads.threads(2):  # a command line's --threads 2
        assert torch.get_num_threads() == 2
    assert torch.get_num_threads() == 1 and set_calls == [2, 1]
    with pytest.raises(ValueError, match="at least 1"):
        core.threads.set_once(0)


# -- checkpoints load strictly --------------------------------------------------------------------


def _tiny_models():
    torch.manual_seed(0)
    return [
        (GPT2, GPT2(GPT2Config(n_layer=1, n_head=2, d_model=16, block_size=32))),
        (MiniK3, MiniK3(MiniK3Config())),
        (RecallModel, RecallModel(RecallModelConfig(mixer="kda", d_model=16, n_heads=1))),
    ]


@pytest.mark.parametrize("index", range(3), ids=["gpt2", "mini_k3", "recall"])
def test_a_checkpoint_that_does_not_fit_is_one_clear_line(tmp_path, index):
    cls, model = _tiny_models()[index]
    path = tmp_path / "tiny" / "model.pt"
    model.save(path)
    cls.load(path)  # a checkpoint that fits loads

    blob = torch.load(path, weights_only=True)
    state = blob["state_dict"]
    name, tensor = next(iter(state.items()))
    damaged = {
        "extra": {**state, "leftover.weight": torch.zeros(2)},
        "missing": {k: v for k, v in state.items() if k != name},
        "shape": {**state, name: torch.zeros(*(n + 1 for n in tensor.shape))},
    }
    expected = {
        "extra": "1 unexpected (e.g. leftover.weight)",
        "missing": f"missing (e.g. {name})",
        "shape": name,
    }
    for kind, bad in damaged.items():
        torch.save({**blob, "state_dict": bad}, path)
        with pytest.raises(CheckpointMismatch) as caught:
            cls.load(path)
        message = str(caught.value)
        assert "\n" not in message and expected[kind] in message, (kind, message)
        assert message.startswith("tiny/model.pt does not fit this model") and "rebuild it with" in message
        assert str(tmp_path) not in message  # no server path
