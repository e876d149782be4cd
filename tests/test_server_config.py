"""What a server shared by a class must never do, as configured (.streamlit/config.toml, run.sh):
listen beyond this machine unless asked, answer a websocket for a foreign Host or Origin, accept
big uploads, or show a reader a traceback."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from bench.load.server import course_server

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
LOOPBACK = {"localhost", "127.0.0.1", "::1"}


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
