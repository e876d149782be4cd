"""The container image as the Dockerfile describes it (no Docker here: the file is read, not built).

It must run the course the way ./run.sh does, on the port .streamlit/config.toml leaves Streamlit
at, on every address, as a user that is not root, with CPU PyTorch pinned as requirements.txt pins
it, and ship what the app reads at run time (README.md, "Past one machine").
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import pytest

from core import public
from core.gpu.output import committed_run
from core.gpu.serving import machine_lock
from core.models import fetch
from tests.deploy.dockerfile import env, exec_form, ignored, instructions
from tests.git_files import git_files
from tests.test_import_graph import graph

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (ROOT / "Dockerfile").read_text(encoding="utf-8")
DOCKERIGNORE = (ROOT / ".dockerignore").read_text(encoding="utf-8")
STEPS = instructions(DOCKERFILE)
ENV = env(STEPS)
CONFIG = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
RUN_SH = (ROOT / "run.sh").read_text(encoding="utf-8")
PIN = re.compile(r"^torch==(\S+)\s*$", re.M)


def _only(name: str) -> str:
    found = [argument for step, argument in STEPS if step == name]
    assert len(found) == 1, f"expected one {name}, found {len(found)}"
    return found[0]


def _runs() -> list[str]:
    return [argument for step, argument in STEPS if step == "RUN"]


def streamlit_port() -> int:
    """The port .streamlit/config.toml leaves Streamlit on: its own, or Streamlit's default."""
    from streamlit import config

    return CONFIG["server"].get("port", config._config_options_template["server.port"].default_val)


def test_the_parser_joins_continued_lines_and_reads_env_and_exec_forms():
    steps = instructions(
        '# c\nFROM x\nENV A=1 \\\n    B="two words"\nRUN a \\\n  # note\n  && b\nCMD ["p", "-m"]\n'
    )
    assert steps == [("FROM", "x"), ("ENV", 'A=1 B="two words"'), ("RUN", "a && b"), ("CMD", '["p", "-m"]')]
    assert env(steps) == {"A": "1", "B": "two words"}
    assert exec_form('["p", "-m"]') == ["p", "-m"]
    with pytest.raises(ValueError):
        exec_form('"python app.py"')


def test_the_image_is_built_on_the_official_slim_python():
    image = _only("FROM")
    match = re.fullmatch(r"python:3\.(\d+)-slim(?:-\w+)?", image)
    assert match, f"the official slim Python image, got {image}"
    floor = re.search(r'requires-python\s*=\s*">=3\.(\d+)"', (ROOT / "pyproject.toml").read_text())
    assert floor and int(match.group(1)) >= int(floor.group(1))


def test_torch_comes_from_the_cpu_index_pinned_as_in_requirements_txt():
    pinned = PIN.findall((ROOT / "requirements.txt").read_text(encoding="utf-8"))
    assert len(pinned) == 1
    cpu = [run for run in _runs() if "download.pytorch.org/whl/cpu" in run]
    assert len(cpu) == 1, "one RUN installs torch from PyTorch's CPU index"
    words = shlex.split(cpu[0])
    assert "--index-url" in words and "--extra-index-url" not in words  # nothing else from that index
    assert words[words.index("--index-url") + 1] == "https://download.pytorch.org/whl/cpu"
    assert f"torch=={pinned[0]}" in words
    assert "torch.version.cuda" in cpu[0]  # the build fails on a CUDA build
    runs = _runs()
    requirements = next(n for n, run in enumerate(runs) if "-r /tmp/requirements.txt" in run)
    assert runs.index(cpu[0]) < requirements  # installed first, so requirements.txt finds it satisfied


def test_only_the_runtime_requirements_are_installed():
    copies = [argument for step, argument in STEPS if step == "COPY"]
    assert "requirements.txt /tmp/requirements.txt" in copies
    assert not any("requirements-dev" in run or "requirements-checkpoints" in run for run in _runs())


def test_the_image_runs_as_a_numeric_non_root_user_it_creates():
    users = [argument for step, argument in STEPS if step == "USER"]
    assert users, "no USER: the course would run as root"
    uid, _, gid = users[-1].partition(":")
    assert uid.isdigit() and int(uid) != 0 and (not gid or int(gid) != 0)
    assert any(f"useradd --uid {uid} " in run for run in _runs())
    last_user = max(n for n, (step, _) in enumerate(STEPS) if step == "USER")
    assert not any(step in {"RUN", "COPY", "ADD"} for step, _ in STEPS[last_user:]), "root-owned app files"


def test_the_command_is_run_sh_s_and_listens_on_every_address_at_the_configured_port():
    entry = exec_form(_only("ENTRYPOINT"))
    exec_line = next(line for line in RUN_SH.splitlines() if line.startswith("exec "))
    run_sh = shlex.split(exec_line)[1:]  # .venv/bin/python -m streamlit run app.py "$@"
    assert entry[0] == "python" and entry[1:] == run_sh[1:-1] and run_sh[-1] == "$@"
    assert exec_form(_only("CMD")) == []  # docker run's arguments reach Streamlit, as run.sh's do
    port = streamlit_port()
    assert f"localhost:{port}" in RUN_SH
    assert _only("EXPOSE") == str(port) == ENV["STREAMLIT_SERVER_PORT"]
    assert CONFIG["server"]["address"] == "127.0.0.1"  # for ./run.sh: so the image must say otherwise
    assert ENV["STREAMLIT_SERVER_ADDRESS"] == "0.0.0.0"


def test_the_healthcheck_asks_streamlit_s_health_route():
    argument = _only("HEALTHCHECK")
    options, _, command = argument.partition(" CMD ")
    assert "--interval=" in options and "--start-period=" in options
    argv = exec_form(command)
    assert argv[:2] == ["python", "-c"]
    compile(argv[2], "HEALTHCHECK", "exec")
    assert "/_stcore/health" in argv[2] and "STREAMLIT_SERVER_PORT" in argv[2]
    assert "/_stcore/health" in (ROOT / "deploy" / "classroom.sh").read_text()  # the same route


def test_public_mode_and_the_weights_paths_are_the_ones_the_course_reads(monkeypatch):
    assert public.ENV_VAR in ENV
    monkeypatch.setenv(public.ENV_VAR, ENV[public.ENV_VAR])
    assert not public.public_mode()  # off by default, as ./run.sh; docker run -e COURSE_PUBLIC=1
    monkeypatch.setenv(public.ENV_VAR, "1")
    assert public.public_mode()
    home = ENV["HOME"]
    assert ENV["HF_HOME"].startswith(home + "/")  # the user's own, writable cache
    assert ENV["COURSE_CACHE_DIR"].startswith(home + "/")
    assert 'os.environ.get("COURSE_CACHE_DIR")' in Path(machine_lock.__file__).read_text()
    for variable in (fetch.ENV_FOLDER, fetch.ENV_QWEN35):
        assert variable in DOCKERFILE  # the comment says how to mount a folder there
        assert variable not in ENV  # set, it names a folder the pages would try
    assert any(f"mkdir -p {ENV['HF_HOME']}" in run for run in _runs())


def test_the_dockerignore_matcher_reads_docker_s_patterns():
    text = "tests\n**/__pycache__\n**/*.mo\ndocs/screenshot.png\n!tests/keep.py\n"
    assert ignored(text, "tests/deploy/test_x.py") and not ignored(text, "tests/keep.py")
    assert ignored(text, "core/ops/__pycache__/x.pyc") and ignored(text, "locale/ja/LC_MESSAGES/messages.mo")
    assert not ignored(text, "core/tests.py") and not ignored(text, "docs/gpu-runs/x.json")


def _tracked() -> list[str]:
    return git_files()


def test_the_image_leaves_out_environments_outputs_and_tests_but_keeps_what_the_app_reads():
    for path in (
        ".venv/bin/python",
        "artifacts/load-server.log",
        ".git/HEAD",
        "tests/conftest.py",
        "node_modules/x/index.js",
        "static/node_modules/x.js",
        "core/__pycache__/units.cpython-311.pyc",
        "locale/ja/LC_MESSAGES/messages.mo",
        ".pytest_cache/README.md",
    ):
        assert ignored(DOCKERIGNORE, path), path
    runs = committed_run.RUNS.relative_to(ROOT).as_posix()
    needed = (
        "app.py",
        "core/",
        "ui/",
        "lessons/",
        "assets/",
        "locale/",
        "static/",
        ".streamlit/",
        "scripts/",
        runs,
    )
    shipped = [p for p in _tracked() if p.startswith(needed) and (ROOT / p).is_file()]
    assert any(p.startswith("assets/gpt2/") for p in shipped) and any(p.startswith(runs) for p in shipped)
    left_out = [p for p in shipped if ignored(DOCKERIGNORE, p)]
    assert not left_out, f"the app needs these: {left_out[:10]}"


def test_the_app_imports_nothing_the_image_leaves_out():
    edges = graph()
    app = {m for m in edges if m == "app" or m.split(".")[0] in {"core", "ui", "lessons"}}
    outside = sorted(f"{m} → {t}" for m in app for t in edges[m] if ignored(DOCKERIGNORE, t.split(".")[0]))
    assert not outside, outside
