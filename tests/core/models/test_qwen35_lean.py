"""The lean Qwen3.5 decode step (core/models/qwen35_lean.py) against the course's eager step, its oracle.

The shipped miniature (trained, so well conditioned; grouped q/k heads, grouped KV heads) and the tiny random
released-format folder (key and value heads of different widths) are stepped both ways through greedy
generations: fp32 logits equal the eager step's to 1e-5 of their largest entry at every token on the
miniature; bf16 stays as close to the fp32 step as the eager bf16 step does. Besides: fewer than half the
eager step's operations, the weights joined without a byte stored twice, prepared once, made again when the
model moves, laid out per device and dtype, and still saved as the released names.
"""

from __future__ import annotations

import pytest
import torch

from core.gpu.timing.kernels import count_step
from core.models import qwen35_lean
from core.models.qwen35_mini import load_miniature
from core.models.qwen35_static import new_static_cache, run_static

STEPS = 30
RTOL = 1e-5


def relative(ours: torch.Tensor, theirs: torch.Tensor) -> float:
    return float((ours.float() - theirs.float()).abs().max() / theirs.float().abs().max())


def generate(model, steps: int = STEPS, token: int = 7):
    """Greedy from `token` through the eager step and the lean one side by side → per-step (lean, eager)."""
    eager, static = model.new_cache(), new_static_cache(model, room=steps)
    pairs = []
    for _ in range(steps):
        theirs = model.next_logits(token, eager)  # (V,)
        ours = run_static(model, torch.tensor([[token]]), static)[0, -1]  # (V,): the lean step
        pairs.append((ours, theirs))
        token = int(theirs.argmax())
    return pairs


def test_fp32_logits_equal_the_eager_steps_through_a_generation():
    model = load_miniature().model
    for t, (ours, theirs) in enumerate(generate(model)):
        assert relative(ours, theirs) <= RTOL, f"token {t}"
        assert int(ours.argmax()) == int(theirs.argmax())


def test_fp32_on_a_random_folder_with_keys_and_values_of_different_widths(tmp_path):
    """The tiny random folder amplifies any change of summation order (unit-scale random weights: a 1e-7
    nudge of the input table moves the eager step's own logits by ~1e-5 a token later), so its bound is 5e-5;
    what it adds is K ≠ V (8 and 12) and GQA in both kinds of layer."""
    pytest.importorskip("transformers")  # only to write the folder
    from bench.hf_tiny_qwen35 import make_checkpoint
    from core.models.qwen35 import load_qwen35

    model = load_qwen35(make_checkpoint(tmp_path / "tiny")).model
    assert model.config.linear_key_head_dim != model.config.linear_value_head_dim
    for t, (ours, theirs) in enumerate(generate(model, 12)):
        assert relative(ours, theirs) <= 5e-5, f"token {t}"


def test_bf16_is_as_close_to_fp32_as_the_eager_bf16_step():
    exact = load_miniature().model
    model = load_miniature(dtype=torch.bfloat16).model
    reference = exact.new_cache()
    token, lean_err, eager_err = 7, [], []
    pairs = generate(model, 12)
    for ours, theirs in pairs:
        truth = exact.next_logits(token, reference)
        assert relative(ours, theirs) <= 3e-2  # bf16 rounds at 2^-8: a few of those through four layers
        lean_err.append(relative(ours, truth))
        eager_err.append(relative(theirs, truth))
        token = int(truth.argmax())  # generate() followed the bf16 eager argmax: the same tokens here
    assert max(lean_err) <= 2 * max(eager_err)


def test_a_lean_step_runs_under_half_the_eager_steps_operations():
    model = load_miniature().model
    eager, static = model.new_cache(), new_static_cache(model, room=8)
    for t in (3, 5):
        model.next_logits(t, eager), run_static(model, torch.tensor([[t]]), static)
    cpu = torch.device("cpu")
    eager_ops, _ = count_step(lambda: model.next_logits(7, eager), cpu)
    lean_ops, _ = count_step(lambda: run_static(model, torch.tensor([[7]]), static), cpu)
    assert 0 < lean_ops < eager_ops / 2, (lean_ops, eager_ops)


def _stored_bytes(model) -> int:
    storages = {p.untyped_storage().data_ptr(): p.untyped_storage().nbytes() for p in model.parameters()}
    return sum(storages.values())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_joined_weights_are_the_modules_own_storage_prepared_once(dtype):
    model = load_miniature(dtype=dtype).model
    before = _stored_bytes(model)
    lean = qwen35_lean.prepare(model)
    assert _stored_bytes(model) == before  # joined, not copied beside the originals
    layer = model.layers[0].linear_attn
    joined = lean.layers[0].in_t  # (D, C + Vd + 2Hv)
    for proj in (layer.in_proj_qkv, layer.in_proj_z, layer.in_proj_b, layer.in_proj_a):
        assert proj.weight.untyped_storage().data_ptr() == joined.untyped_storage().data_ptr()
    assert joined.shape == (model.config.hidden_size, sum(
        p.weight.shape[0] for p in (layer.in_proj_qkv, layer.in_proj_z, layer.in_proj_b, layer.in_proj_a)
    ))  # fmt: skip
    layout = qwen35_lean.layout_for(torch.device("cpu"), dtype)
    assert layout == ("in_out" if dtype == torch.float32 else "out_in")
    assert (joined if layout == "in_out" else joined.t()).is_contiguous()
    assert model.lm_head.weight is model.embed_tokens.weight  # the tie survives the join
    assert qwen35_lean.prepare(model) is lean  # nothing changed: the same tensors
    assert len(qwen35_lean.matrices(lean)) == 4 * len(model.layers) + 1


def test_a_changed_or_moved_model_is_prepared_again_and_still_matches():
    model = load_miniature().model
    lean = qwen35_lean.prepare(model)
    with torch.no_grad():
        model.layers[1].mlp.down_proj.weight.mul_(1.5)  # written in place: its version moves
        model.norm.weight.add_(0.1)  # a folded constant (1 + w)
    again = qwen35_lean.prepare(model)
    assert again is not lean
    assert (
        again.layers[1].mlp.down_t.untyped_storage().data_ptr()
        == lean.layers[1].mlp.down_t.untyped_storage().data_ptr()
    )
    for ours, theirs in generate(model, 4):
        assert relative(ours, theirs) <= RTOL
    model.to(torch.bfloat16)  # .to() gives every parameter new storage of its own
    retyped = qwen35_lean.prepare(model)
    assert retyped.layers[0].in_t.dtype == torch.bfloat16 and retyped.layers[0].in_t.t().is_contiguous()
    for ours, theirs in generate(model, 4):
        assert relative(ours, theirs) <= 3e-2


def test_a_prepared_model_saves_and_loads_as_before(tmp_path):
    model = load_miniature().model
    state = {name: t.clone() for name, t in model.state_dict().items()}
    qwen35_lean.prepare(model)
    model.save(tmp_path / "saved", meta={"course_training": {}})
    again = load_miniature(tmp_path / "saved").model
    for name, tensor in again.state_dict().items():
        assert torch.equal(tensor, state[name]), name
