"""The ways the MoE reads its chosen experts (core.gpu.ffn): the fused Triton kernels equal the
gathered path (run in Triton's CPU interpreter), the benchmark keeps the fastest way a card ran,
and a missing Triton or a way that fails only removes that way."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import pytest
import torch

from core.gpu import ffn, graphs, moe_bench, moe_triton
from core.gpu.ffn import IMPLS, MoEFFN
from core.gpu.models import build
from core.gpu.moe_bench import MoeResult, MoeRow
from core.gpu.presets import PRESETS
from core.gpu.report import moe_impl_note
from core.gpu.timing import Timing

ROOT = Path(__file__).resolve().parent.parent
TINY = PRESETS["tiny"]
pytestmark = pytest.mark.usefixtures("one_thread")

# Triton's interpreter must be switched on before Triton is first imported, so it runs apart.
_PARITY = r"""
import json, torch
import torch.nn.functional as F
from core.gpu.ffn import MoEFFN
from core.gpu.models import build
from core.gpu.moe_triton import fused_experts, scratch_bytes
from core.gpu.presets import PRESETS

torch.set_num_threads(1)
out = {"layers": [], "models": []}
for dtype in (torch.float32, torch.bfloat16):
    # widths that are not multiples of the kernels' tiles, and one wider than a tile in each direction
    for d, experts, top_k, fe in ((64, 9, 2, 32), (300, 12, 3, 50), (520, 6, 4, 130)):
        torch.manual_seed(0)
        layer = MoEFFN(d, experts, 1, top_k, fe, torch.device("cpu"), dtype)
        h = torch.randn(1, d, dtype=dtype)
        gathered = layer(h).float()
        layer.use("triton")
        fused = layer(h).float()
        out["layers"].append({"dtype": str(dtype), "d": d, "fe": fe, "top_k": top_k,
                              "diff": float((fused - gathered).abs().max()), "scale": float(gathered.abs().max()),
                              "scratch": layer.traffic().scratch, "scratch_bytes": scratch_bytes(d, fe, top_k)})
torch.manual_seed(0)
gathered = build("attention", PRESETS["tiny"], "cpu", torch.float32, ffn="moe")
fused = build("attention", PRESETS["tiny"], "cpu", torch.float32, ffn="moe_triton")
fused.load_state_dict(gathered.state_dict())
for model in (gathered, fused):
    model.allocate(16)
    torch.manual_seed(1)
    model.fill(5)
token = torch.tensor([3])
a, b = gathered.step(token), fused.step(token)
out["models"] = {"diff": float((a - b).abs().max()), "scale": float(a.abs().max()),
                 "weights": [gathered.traffic(5).weights, fused.traffic(5).weights],
                 "scratch": [gathered.traffic(5).scratch, fused.traffic(5).scratch]}
try:
    fused_experts(torch.randn(1, 8), torch.tensor([0]), torch.ones(1), torch.randn(2, 8, 4),
                  torch.randn(2, 8, 4), torch.zeros(1, 8))
except ValueError as error:
    out["bad_shapes"] = str(error)
print(json.dumps(out))
"""


@pytest.mark.slow
def test_the_fused_triton_kernels_compute_what_the_gathered_experts_compute():
    pytest.importorskip("triton")
    env = os.environ | {"TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _PARITY], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for layer in out["layers"]:
        # fp32: summation order only; bf16: the output's own rounding (8 bits of mantissa)
        tolerance = 1e-5 if layer["dtype"] == "torch.float32" else 2**-7
        assert layer["diff"] <= tolerance * max(1.0, layer["scale"]), layer
        assert (
            layer["scratch"] == layer["scratch_bytes"] > 0
        )  # the fp32 hidden: zeroed, added into, read back
    models = out["models"]
    assert models["diff"] <= 1e-5 * max(1.0, models["scale"])
    assert models["weights"][0] == models["weights"][1]  # the same experts read, in place
    assert 0 < models["scratch"][1] < models["scratch"][0]  # partial sums, not two copies of the experts
    assert "shapes do not fit" in out["bad_shapes"]


def test_without_triton_the_triton_way_is_not_offered(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)  # import triton now raises ImportError
    assert not moe_triton.available(torch.device("cpu"))
    assert not moe_triton.available(torch.device("cuda"))
    layer = MoEFFN(64, 9, 1, 2, 32, torch.device("cpu"), torch.float32)
    assert "triton" not in layer.runnable_impls() and "gather" in layer.runnable_impls()
    with pytest.raises(ValueError, match="cannot run"):
        layer.use("triton")
    with pytest.raises(ValueError, match="unknown MoE implementation"):
        layer.use("fused")


def test_on_the_cpu_triton_runs_only_interpreted(monkeypatch):
    pytest.importorskip("triton")
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert not moe_triton.available(torch.device("cpu"))
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert moe_triton.available(torch.device("cpu"))


class _FakeCudaEnv:
    """What pick_moe_impl asks of a BenchEnv, with the device type of a GPU (the model stays on the CPU)."""

    device = types.SimpleNamespace(type="cuda")

    def free_memory(self) -> None:
        pass


def _fake_trials(monkeypatch, speeds: dict[str, float | Exception]) -> list[str]:
    """time_graphed answers `speeds[impl]` tokens/s (or raises it) for the impl the model uses."""
    seen: list[str] = []

    def time_graphed(model, depth, tokens, n_steps, repeats, should_stop, deadline=None):
        impl = model.moe_layers()[0].impl
        seen.append(impl)
        if isinstance(speeds[impl], Exception):
            raise speeds[impl]
        return Timing([speeds[impl]] * repeats, "CUDA graph")

    monkeypatch.setattr(graphs, "time_graphed", time_graphed)
    monkeypatch.setattr(ffn, "impl_available", lambda impl, *args: impl in speeds)
    return seen


def test_the_fastest_way_is_kept_and_a_failing_way_is_reported(monkeypatch):
    seen = _fake_trials(
        monkeypatch, {"gather": 300.0, "grouped": RuntimeError("CUTLASS says no\nmore"), "triton": 900.0}
    )
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe")
    tokens = torch.arange(8)
    impl, trials = moe_bench.pick_moe_impl(model, TINY, _FakeCudaEnv(), tokens, 4)
    assert seen == ["gather", "grouped", "triton"]
    assert impl == "triton" and model.moe_layers()[0].impl == "triton"
    assert trials["gather"] == 300.0 and trials["triton"] == 900.0
    assert trials["grouped"] == "RuntimeError: CUTLASS says no"  # one line
    assert all(layer.impl == "triton" for layer in model.moe_layers())
    assert model.cache.dev == []  # the trial's cache is released


def test_out_of_memory_in_a_trial_is_raised_not_swallowed(monkeypatch):
    _fake_trials(monkeypatch, {"gather": 300.0, "grouped": torch.OutOfMemoryError("CUDA out of memory")})
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe")
    with pytest.raises(torch.OutOfMemoryError):
        moe_bench.pick_moe_impl(model, TINY, _FakeCudaEnv(), torch.arange(8), 4)


def test_off_cuda_the_gathered_copy_is_kept_untried(monkeypatch):
    seen = _fake_trials(monkeypatch, {"gather": 1.0, "grouped": 2.0})
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe_grouped")
    env = types.SimpleNamespace(device=torch.device("cpu"))
    assert moe_bench.pick_moe_impl(model, TINY, env, torch.arange(8), 4) == ("gather", {})
    assert seen == [] and model.moe_layers()[0].impl == "gather"


def _row(impl: str | None, trials: dict | None) -> MoeRow:
    return MoeRow("experts (MoE)", 10, 2, 4, 1.0, 0.1, 2.0, moe_impl=impl, impl_trials=trials)


def test_the_page_says_how_the_experts_were_read():
    result = MoeResult("large", "H200", 1024, "2 shared + 6 of 254 routed", None, [_row(None, None)])
    assert moe_impl_note(result) is None  # the dense row, or an older saved result
    result.rows.append(_row("triton", {"gather": 337.4, "grouped": "RuntimeError: no", "triton": 905.2}))
    note = moe_impl_note(result)
    assert "fused Triton kernels, the fastest" in note
    assert "gathered copy (index_select + bmm): 337.4 tokens/s" in note
    assert "grouped GEMM (torch._grouped_mm): could not run (RuntimeError: no)" in note
    cpu = MoeResult("tiny", "CPU", 64, "", None, [_row("gather", {})])
    assert "through a gathered copy" in moe_impl_note(cpu) and "NVIDIA GPU" in moe_impl_note(cpu)
    assert set(IMPLS) == {"gather", "grouped", "triton"}


def test_stop_during_the_trials_gives_the_trial_cache_back(monkeypatch):
    _fake_trials(monkeypatch, {"gather": 300.0, "triton": 900.0})
    model = build("attention", TINY, "cpu", torch.float32, ffn="moe")
    with pytest.raises(moe_bench.Stopped):
        moe_bench.pick_moe_impl(model, TINY, _FakeCudaEnv(), torch.arange(8), 4, should_stop=lambda: True)
    assert model.cache.dev == []


def test_out_of_memory_in_the_trials_falls_back_to_the_gathered_copy_and_still_times(monkeypatch):
    from tests.fake_nvml import FakeNvml

    def trials_run_out(model, *args, **kwargs):
        model.use_moe("grouped")
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

    monkeypatch.setattr(moe_bench, "pick_moe_impl", trials_run_out)
    env = moe_bench.timing.make_env("cpu", nvml_module=FakeNvml(init_error="LibraryNotFound"))
    result = moe_bench.run_moe(TINY, env, moe_bench.Bandwidth(1e10, 1e9, "test"))
    dense, moe = result.rows
    assert dense.moe_impl is None and moe.moe_impl == "gather" and moe.impl_trials is None
    assert moe.tokens_per_s > 0 and moe.oom_message is None


def test_building_the_page_s_moe_does_not_import_triton():
    """Triton (hundreds of MB) is imported only when its way is tried, never for the gathered copy."""
    code = (
        "import sys, torch\n"
        "from core.gpu.models import build\nfrom core.gpu.presets import PRESETS\n"
        "m = build('attention', PRESETS['tiny'], 'cpu', torch.float32, ffn='moe')\n"
        "m.allocate(8); m.step(torch.tensor([1]))\n"
        "print('triton' in sys.modules)"
    )
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def _sass(capability: int, top_k: int, expert_hidden: int) -> dict[str, str]:
    """Both kernels compiled for an NVIDIA GPU of this compute capability (no GPU needed: Triton's
    own ptxas), with the hints Triton's launcher gives arguments divisible by 16; the SASS and the
    resource usage of each, from the wheel's own nvdisasm and cuobjdump."""
    triton = pytest.importorskip("triton")
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    up, down = moe_triton._kernels(False)
    tools = Path(triton.__file__).parent / "backends" / "nvidia" / "bin"
    const = "constexpr"
    kernels = {
        "up": (up, {"x": "*bf16", "w1": "*bf16", "ids": "*i64", "hidden": "*fp32", "D": "i32", "FE": "i32",
                    "BLOCK_D": const, "BLOCK_F": const},
               {"BLOCK_D": moe_triton.BLOCK_D_UP, "BLOCK_F": moe_triton.BLOCK_F}),
        "down": (down, {"hidden": "*fp32", "gate": "*bf16", "ids": "*i64", "w2": "*bf16", "base": "*bf16",
                        "out": "*bf16", "D": "i32", "K": const, "FE": const, "BLOCK_F": const, "BLOCK_D": const},
                 {"K": top_k, "FE": expert_hidden, "BLOCK_F": moe_triton.BLOCK_F, "BLOCK_D": moe_triton.BLOCK_D_DOWN}),
    }  # fmt: skip
    out = {}
    for name, (fn, signature, constants) in kernels.items():
        hints = {
            (fn.arg_names.index(a),): [["tt.divisibility", 16]] for a, t in signature.items() if t != const
        }
        source = ASTSource(fn=fn, signature=signature, constexprs=constants, attrs=hints)
        cubin = triton.compile(source, target=GPUTarget("cuda", capability, 32)).asm["cubin"]
        path = Path(tempfile.mkdtemp()) / f"{name}.cubin"
        path.write_bytes(cubin)
        run = lambda *a: subprocess.run(a, capture_output=True, text=True, check=True).stdout  # noqa: E731
        out[name] = run(str(tools / "nvdisasm"), str(path)) + run(
            str(tools / "cuobjdump"), "-res-usage", str(path)
        )
    return out


@pytest.mark.slow
@pytest.mark.parametrize("capability", [90, 80])
def test_the_kernels_compile_for_hopper_and_ampere_without_spills_and_with_wide_loads(
    capability, monkeypatch
):
    """What the interpreter cannot show: the compiled kernels (the `large` preset's shapes) keep
    everything in registers and read the weights 16 bytes at a time; `_down` reduces across
    threads once, not once per expert."""
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")  # Triton 3.9 asks which default to use
    sass = _sass(capability, top_k=PRESETS["large"].moe_top_k, expert_hidden=PRESETS["large"].expert_hidden)
    for name, text in sass.items():
        assert re.search(r"LOCAL:0\b", text), f"{name} spills to local memory"
        assert "LDG.E.128" in text, f"{name} reads its weights in narrow loads"
    assert "ATOMG.E.ADD.F32" in sass["up"] or "RED.E.ADD.F32" in sass["up"]
    assert sass["down"].count("BAR.SYNC") <= 8
