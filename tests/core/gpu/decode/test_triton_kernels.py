"""The Triton kernels of the GPU page (core.gpu.decode.moe_triton, core.gpu.decode.state_triton) on a machine
without a GPU: they compute what the PyTorch paths compute (run in Triton's CPU interpreter), they
compile for Hopper and Ampere without spilling and with wide loads (Triton's own ptxas, no GPU
needed), and without Triton — or without a GPU — their ways are simply not offered."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest
import torch

from core.gpu.decode import moe_triton, state_triton, triton_support
from core.gpu.decode.ffn import MoEFFN
from core.gpu.decode.models import build
from core.gpu.output.export import versions
from core.gpu.presets import PRESETS

ROOT = Path(__file__).resolve().parents[4]
LARGE = PRESETS["large"]
pytestmark = pytest.mark.usefixtures("one_thread")

# Triton's interpreter must be switched on before Triton is first imported, so it runs apart.
_PARITY = r"""
import json, torch
from core.gpu.decode.ffn import MoEFFN
from core.gpu.decode.models import build
from core.gpu.decode.moe_triton import fused_experts, scratch_bytes
from core.gpu.decode.state_triton import fused_step
from core.gpu.presets import PRESETS

torch.set_num_threads(1)
out = {"moe_layers": [], "states": []}
for dtype in (torch.float32, torch.bfloat16):
    # widths that are not multiples of the kernels' tiles, and one wider than a tile in each direction
    for d, experts, top_k, fe in ((64, 9, 2, 32), (300, 12, 3, 50), (520, 6, 4, 130)):
        torch.manual_seed(0)
        layer = MoEFFN(d, experts, 1, top_k, fe, torch.device("cpu"), dtype)
        h = torch.randn(1, d, dtype=dtype)
        gathered = layer(h).float()
        layer.use("triton")
        fused = layer(h).float()
        out["moe_layers"].append({"dtype": str(dtype), "diff": float((fused - gathered).abs().max()),
                                  "scale": float(gathered.abs().max()), "scratch": layer.traffic().scratch,
                                  "scratch_bytes": scratch_bytes(d, fe, top_k)})
    # the fixed-state model, three steps each way from the same state (tiny: head width 16; cpu: 64)
    for name in ("tiny", "cpu"):
        torch.manual_seed(0)
        ops, fused = (build("state", PRESETS[name], "cpu", dtype) for _ in range(2))
        fused.load_state_dict(ops.state_dict())
        fused.use_way("triton")
        for model in (ops, fused):
            model.allocate(8)
            torch.manual_seed(1)
            model.fill(5)
        for _ in range(3):
            a, b = ops.step(torch.tensor([3])), fused.step(torch.tensor([3]))
        out["states"].append({"dtype": str(dtype), "name": name, "diff": float((a.float() - b.float()).abs().max()),
                              "scale": float(a.float().abs().max()),
                              "state_diff": max(float((x - y).abs().max()) for x, y in zip(ops.state, fused.state)),
                              "state_bytes": [ops.traffic(5).state, fused.traffic(5).state]})
torch.manual_seed(0)
gathered = build("attention", PRESETS["tiny"], "cpu", torch.float32, ffn="moe")
fused = build("attention", PRESETS["tiny"], "cpu", torch.float32, ffn="moe_triton")
fused.load_state_dict(gathered.state_dict())
for model in (gathered, fused):
    model.allocate(16)
    torch.manual_seed(1)
    model.fill(5)
a, b = gathered.step(torch.tensor([3])), fused.step(torch.tensor([3]))
out["moe_model"] = {"diff": float((a - b).abs().max()), "scale": float(a.abs().max()),
                    "weights": [gathered.traffic(5).weights, fused.traffic(5).weights],
                    "scratch": [gathered.traffic(5).scratch, fused.traffic(5).scratch]}
errors = []
for call in (lambda: fused_experts(torch.randn(1, 8), torch.tensor([0]), torch.ones(1), torch.randn(2, 8, 4),
                                   torch.randn(2, 8, 4), torch.zeros(1, 8)),
             lambda: fused_step(torch.randn(1, 10), torch.randn(1, 2), torch.randn(1, 2), torch.zeros(2, 2, 2)),
             lambda: fused_step(torch.randn(1, 12), torch.randn(1, 2), torch.randn(1, 2), torch.zeros(2, 2, 2).double())):
    try:
        call()
        errors.append(None)
    except ValueError as error:
        errors.append(str(error))
out["bad_input"] = errors
import triton
out["triton"] = triton.__version__
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def parity() -> dict:
    pytest.importorskip("triton")
    # the caller's PYTHONPATH stays after the project's, so another Triton can be tried:
    # PYTHONPATH=/tmp/triton36 pytest tests/core/gpu/decode/test_triton_kernels.py (3.6.0, the H200 image's, passes)
    paths = [str(ROOT), os.environ.get("PYTHONPATH", "")]
    env = os.environ | {"TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    done = subprocess.run(
        [sys.executable, "-c", _PARITY], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _close(diff: float, scale: float, dtype: str) -> bool:
    """fp32: summation order only; bf16: the output's own rounding (8 bits of mantissa)."""
    return diff <= (1e-5 if dtype == "torch.float32" else 2**-7) * max(1.0, scale)


@pytest.mark.slow
def test_the_fused_moe_kernels_compute_what_the_gathered_experts_compute(parity):
    assert parity["triton"] == pytest.importorskip("triton").__version__  # one Triton for every check here
    for layer in parity["moe_layers"]:
        assert _close(layer["diff"], layer["scale"], layer["dtype"]), layer
        assert (
            layer["scratch"] == layer["scratch_bytes"] > 0
        )  # the fp32 (k, Fe) buffer: zeroed, added into, read
    model = parity["moe_model"]
    assert _close(model["diff"], model["scale"], "torch.float32")
    assert model["weights"][0] == model["weights"][1]  # the same experts read, in place
    assert 0 < model["scratch"][1] < model["scratch"][0]  # a (k, Fe) buffer, not two copies of the experts
    assert "shapes do not fit" in parity["bad_input"][0]


@pytest.mark.slow
def test_the_fused_state_kernel_steps_as_the_pytorch_ops_do(parity):
    for state in parity["states"]:
        assert _close(state["diff"], state["scale"], state["dtype"]), state
        assert state["state_diff"] <= (1e-6 if state["dtype"] == "torch.float32" else 1e-2), state
        ops, fused = state["state_bytes"]
        assert fused * 3 == ops  # read once and written once, not six times
    assert "shapes do not fit" in parity["bad_input"][1] and "fp32" in parity["bad_input"][2]


def test_without_triton_no_triton_way_is_offered(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)  # import triton now raises ImportError
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert not triton_support.available(torch.device("cpu"))
    layer = MoEFFN(64, 9, 1, 2, 32, torch.device("cpu"), torch.float32)
    assert "triton" not in layer.runnable_ways() and "gather" in layer.runnable_ways()
    with pytest.raises(ValueError, match="cannot run"):
        layer.use("triton")
    with pytest.raises(ValueError, match="unknown MoE implementation"):
        layer.use("fused")
    state = build("state", PRESETS["tiny"], "cpu", torch.float32)
    assert state.kernel_ways() == ["torch"]
    with pytest.raises(ValueError, match="cannot run"):
        state.use_way("triton")
    with pytest.raises(ValueError, match="unknown way"):
        state.use_way("cuda")


def test_on_the_cpu_triton_runs_only_interpreted(monkeypatch):
    pytest.importorskip("triton")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert not triton_support.available(torch.device("cpu"))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert triton_support.available(torch.device("cpu"))
    assert not triton_support.available(torch.device("meta"))


def test_running_the_page_s_models_on_the_cpu_never_imports_triton():
    """Triton (hundreds of MB) is imported only when one of its ways can run, never on a CPU server."""
    code = (
        "import sys, torch\n"
        "from core.gpu.decode.models import build\nfrom core.gpu.presets import PRESETS\n"
        "for kind, ffn in (('attention', 'moe'), ('state', 'dense')):\n"
        "    m = build(kind, PRESETS['tiny'], 'cpu', torch.float32, ffn=ffn)\n"
        "    m.kernel_ways(); m.allocate(8); m.step(torch.tensor([1]))\n"
        "print('triton' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"} | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


# -- compiled for real GPUs, checked in their machine code ---------------------------------------

CONST = "constexpr"


def _kernels_to_compile() -> dict[str, tuple]:
    """Each kernel with the argument types and compile-time values the `large` preset gives it."""
    up, down = moe_triton._kernels(False)
    step = state_triton._kernel(False)
    return {
        "moe up": (up, {"x": "*bf16", "w1": "*bf16", "ids": "*i64", "hidden": "*fp32", "D": "i32", "FE": "i32",
                        "BLOCK_D": CONST, "BLOCK_F": CONST},
                   {"BLOCK_D": moe_triton.BLOCK_D_UP, "BLOCK_F": moe_triton.BLOCK_F}),
        "moe down": (down, {"hidden": "*fp32", "scores": "*bf16", "ids": "*i64", "w2": "*bf16", "base": "*bf16",
                            "out": "*bf16", "D": "i32", "K": CONST, "FE": CONST, "BLOCK_K": CONST, "BLOCK_F": CONST,
                            "BLOCK_D": CONST},
                     {"K": LARGE.moe_top_k, "FE": LARGE.expert_hidden, "BLOCK_K": 8, "BLOCK_F": moe_triton.BLOCK_F,
                      "BLOCK_D": moe_triton.BLOCK_D_DOWN}),
        "state step": (step, {"qkv": "*bf16", "beta_logit": "*bf16", "gate_logit": "*bf16", "state": "*fp32",
                              "out": "*bf16", "H": "i32", "DH": "i32", "q_scale": "fp32", "BLOCK_K": CONST,
                              "BLOCK_V": CONST},
                       {"BLOCK_K": LARGE.head_dim, "BLOCK_V": state_triton.BLOCK_V}),
    }  # fmt: skip


def _sass(capability: int) -> dict[str, str]:
    """Every kernel compiled for an NVIDIA GPU of this compute capability (no GPU needed: Triton's
    own ptxas), with the hints Triton's launcher gives integer and pointer arguments divisible by
    16; each kernel's machine code and resource usage, from the wheel's own nvdisasm and cuobjdump."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    tools = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    run = lambda *a: subprocess.run(a, capture_output=True, text=True, check=True).stdout  # noqa: E731
    out = {}
    for name, (fn, signature, constants) in _kernels_to_compile().items():
        hints = {
            (fn.arg_names.index(a),): [["tt.divisibility", 16]] for a, t in signature.items() if t[0] in "*i"
        }
        source = ASTSource(fn=fn, signature=signature, constexprs=constants, attrs=hints)
        path = Path(tempfile.mkdtemp()) / "kernel.cubin"
        path.write_bytes(triton.compile(source, target=GPUTarget("cuda", capability, 32)).asm["cubin"])
        out[name] = run(str(tools / "nvdisasm"), str(path)) + run(
            str(tools / "cuobjdump"), "-res-usage", str(path)
        )
    return out


@pytest.mark.slow
@pytest.mark.parametrize("capability", [90, 80])
def test_the_kernels_compile_for_hopper_and_ampere_without_spills_and_with_wide_loads(
    capability, monkeypatch
):
    """What the interpreter cannot show: compiled for the `large` preset's shapes, every kernel
    keeps its values in registers and reads its weights or state 16 bytes at a time, and the MoE's
    down kernel reduces across threads once, not once per expert."""
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9 asks which default to use
    sass = _sass(capability)
    for name, text in sass.items():
        assert re.search(r"LOCAL:0\b", text), f"{name} spills to local memory"
        assert "LDG.E.128" in text, f"{name} reads in narrow loads"
    assert re.search(r"(ATOMG|RED)\.E\.ADD\.F32", sass["moe up"])
    assert sass["moe down"].count("BAR.SYNC") <= 8
    assert "STG.E.128" in sass["state step"]  # the state tile written back wide too


def test_on_a_gpu_without_a_c_compiler_or_python_headers_the_pytorch_ways_run(monkeypatch):
    """Triton builds its launcher with $CC/gcc/clang and Python.h the first time a kernel runs; a bare
    GPU image without them gets the PyTorch ways, and the run's versions say why."""
    pytest.importorskip("triton")
    cuda = torch.device("cuda")
    monkeypatch.setattr(triton_support.shutil, "which", lambda name: None)
    monkeypatch.delenv("CC", raising=False)
    assert triton_support.missing_toolchain() == "no C compiler (gcc, clang or $CC)"
    assert not triton_support.available(cuda)
    assert versions()["triton_toolchain"] == "no C compiler (gcc, clang or $CC)"
    monkeypatch.setenv("CC", "cc")
    monkeypatch.setattr(triton_support.sysconfig, "get_paths", lambda: {"include": "/nowhere"})
    assert "no Python.h in /nowhere" in triton_support.missing_toolchain()
    assert not triton_support.available(cuda)
    monkeypatch.undo()
    monkeypatch.setenv("CC", "cc")
    include = Path(sysconfig.get_paths()["include"])
    if (include / "Python.h").is_file():  # this machine has both: Triton can build here
        assert triton_support.missing_toolchain() is None and triton_support.available(cuda)
