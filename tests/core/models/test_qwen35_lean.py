"""The lean Qwen3.5 decode step (core/models/qwen35_lean.py) against the course's eager step, its oracle.

The shipped miniature (trained, so well conditioned; grouped q/k heads, grouped KV heads) and the tiny random
released-format folder (key and value heads of different widths) are stepped both ways through greedy
generations: fp32 logits equal the eager step's to 1e-5 of their largest entry at every token on the
miniature; bf16 stays as close to the fp32 step as the eager bf16 step does. Besides: fewer than half the
eager step's operations, the weights joined without a byte stored twice (a oneDNN-packed copy beside them only
on a CPU in bf16, whose products equal the dense ones), prepared once, made again when the model moves, laid
out per device and dtype, and still saved as the released names.
"""

from __future__ import annotations

import pytest
import torch

from core.gpu.timing.kernels import count_step
from core.models import qwen35_lean, qwen35_lean_weights
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
    lean = qwen35_lean_weights.prepare(model)
    assert _stored_bytes(model) == before  # joined, not copied beside the originals
    layer = model.layers[0].linear_attn
    joined = lean.layers[0].in_t.dense  # (D, C + Vd + 2Hv)
    for proj in (layer.in_proj_qkv, layer.in_proj_z, layer.in_proj_b, layer.in_proj_a):
        assert proj.weight.untyped_storage().data_ptr() == joined.untyped_storage().data_ptr()
    assert joined.shape == (model.config.hidden_size, sum(
        p.weight.shape[0] for p in (layer.in_proj_qkv, layer.in_proj_z, layer.in_proj_b, layer.in_proj_a)
    ))  # fmt: skip
    n_in, n_out = joined.shape
    layout = qwen35_lean_weights.layout_for(torch.device("cpu"), dtype, n_in, n_out)
    assert layout == ("in_out" if dtype == torch.float32 and n_out > n_in else "out_in")
    assert (joined if layout == "in_out" else joined.t()).is_contiguous()
    down = lean.layers[0].mlp.down_t.dense  # (I, D): fewer outputs than inputs, so (out, in) rows in every dtype
    assert down.shape[0] > down.shape[1] and down.t().is_contiguous()
    assert model.lm_head.weight is model.embed_tokens.weight  # the tie survives the join
    assert qwen35_lean_weights.prepare(model) is lean  # nothing changed: the same tensors
    assert len(qwen35_lean_weights.matrices(lean)) == 4 * len(model.layers) + 1
    packed = qwen35_lean_weights.packs(torch.device("cpu"), dtype)
    assert all((w.packed is not None) == packed for w in qwen35_lean_weights.matrices(lean))
    assert not packed or dtype == torch.bfloat16  # fp32 keeps the dense matrices alone


@pytest.mark.skipif(
    not qwen35_lean_weights.packs(torch.device("cpu"), torch.bfloat16), reason="this CPU's oneDNN has no bf16"
)
@pytest.mark.parametrize("rows", [1, 3])
def test_a_packed_bf16_product_equals_the_dense_one(rows):
    """oneDNN's packed matrix × vector (and its fused residual add) against torch.mm / addmm on the same bf16
    weights: the same sums in fp32, rounded once to bf16, so at most one bf16 step (2⁻⁸ of the value) apart."""
    torch.manual_seed(rows)
    dense = torch.randn(96, 200).bfloat16()  # (in, out)
    w = qwen35_lean_weights.matrix(dense)
    assert w.packed is not None and w.dense is dense
    h, x = torch.randn(rows, 96).bfloat16(), torch.randn(rows, 200).bfloat16()
    for ours, theirs in (
        (qwen35_lean_weights.times(h, w), torch.mm(h, dense)),
        (qwen35_lean_weights.plus_times(x, h, w), torch.addmm(x, h, dense)),
    ):
        assert ours.dtype == torch.bfloat16 and ours.shape == (rows, 200)
        torch.testing.assert_close(ours.float(), theirs.float(), rtol=2**-7, atol=2**-7)
    out = torch.empty(rows, 200, dtype=torch.bfloat16)
    assert qwen35_lean_weights.times(h, w, out=out) is out
    torch.testing.assert_close(out.float(), torch.mm(h, dense).float(), rtol=2**-7, atol=2**-7)


def test_a_changed_or_moved_model_is_prepared_again_and_still_matches():
    model = load_miniature().model
    lean = qwen35_lean_weights.prepare(model)
    with torch.no_grad():
        model.layers[1].mlp.down_proj.weight.mul_(1.5)  # written in place: its version moves
        model.norm.weight.add_(0.1)  # a folded constant (1 + w)
    again = qwen35_lean_weights.prepare(model)
    assert again is not lean
    assert (
        again.layers[1].mlp.down_t.dense.untyped_storage().data_ptr()
        == lean.layers[1].mlp.down_t.dense.untyped_storage().data_ptr()
    )
    for ours, theirs in generate(model, 4):
        assert relative(ours, theirs) <= RTOL
    model.to(torch.bfloat16)  # .to() gives every parameter new storage of its own
    retyped = qwen35_lean_weights.prepare(model)
    joined = retyped.layers[0].in_t
    assert joined.dense.dtype == torch.bfloat16 and joined.dense.t().is_contiguous()
    assert (joined.packed is not None) == qwen35_lean_weights.packs(torch.device("cpu"), torch.bfloat16)
    for ours, theirs in generate(model, 4):
        assert relative(ours, theirs) <= 3e-2


def test_a_prepared_model_saves_and_loads_as_before(tmp_path):
    model = load_miniature().model
    state = {name: t.clone() for name, t in model.state_dict().items()}
    qwen35_lean_weights.prepare(model)
    model.save(tmp_path / "saved", meta={"course_training": {}})
    again = load_miniature(tmp_path / "saved").model
    for name, tensor in again.state_dict().items():
        assert torch.equal(tensor, state[name]), name


# ------------------------------------------------------------------------------------------------
# The pieces of the fused step against their readable forms
# ------------------------------------------------------------------------------------------------


def _fill_board_inputs(views, generator):
    """Random board, L2-normalised [q, k], v, α ∈ (0, 1), β ∈ (0, 1) written into `views`' buffers."""
    torch.manual_seed(generator)
    views.groups.copy_(torch.randn(views.groups.shape))
    views.qk.copy_(torch.nn.functional.normalize(torch.randn(views.qk.shape), dim=-1))
    views.v.copy_(torch.randn(views.v.shape))
    views.alpha.copy_(torch.rand(views.alpha.shape) * 0.9 + 0.05)
    views.beta.copy_(torch.rand(views.beta.shape))


@pytest.mark.parametrize("shared", [True, False], ids=["value heads share q/k heads", "one q/k head each"])
def test_the_in_place_board_update_equals_the_readable_gated_delta_step(shared):
    """delta_update (fade first, one batched read of [q, k], then the rank-one write, all in place) gives the
    board and read-out of core/ops/gated_delta_rule.step, the written-out rule, on the same inputs."""
    from dataclasses import replace

    from core.ops import gated_delta_rule

    model = load_miniature().model
    lean = qwen35_lean_weights.prepare(model)
    layer = next(x for x in lean.layers if isinstance(x, qwen35_lean_weights.LeanBoard))
    C, Vd, Hk, Hv, K, V = layer.sizes
    if not shared:  # as many q/k heads as value heads: the convolution's channels grow to match
        C, Hk = 2 * Hv * K + Vd, Hv
        layer = replace(layer, sizes=(C, Vd, Hk, Hv, K, V))
    B, G = 2, Hv // Hk
    assert (G > 1) == shared
    board = torch.zeros(B, Hv, K, V)
    views = qwen35_lean.board_views(board, torch.zeros(B, C, 3), layer)
    _fill_board_inputs(views, 0)
    old = board.clone()
    q = views.q.expand(B, Hk, G, 1, K).reshape(B, Hv, K)  # each value head's q/k head
    k = views.k.expand(B, Hk, G, 1, K).reshape(B, Hv, K)
    expected = gated_delta_rule.step(
        old, q, k, views.v.reshape(B, Hv, V), beta_t=views.beta.reshape(B, Hv),
        g_t=views.alpha.reshape(B, Hv).log(), scale=1.0, keep_parts=False,
    )  # fmt: skip
    out = qwen35_lean.delta_update(views)
    assert out.data_ptr() == views.out.data_ptr() and board.data_ptr() == views.heads.data_ptr()
    torch.testing.assert_close(board, expected.state, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(out.reshape(B, Hv, V), expected.output, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("unit", [False, True], ids=["weighted", "L2"])
def test_the_cpu_norm_equals_torchs_rms_norm(dtype, unit):
    """rms's four CPU ops equal F.rms_norm in fp32, and both forms write a preallocated output; a zero row
    stays finite."""
    torch.manual_seed(0)
    d = 96
    weight = torch.full((d,), d**-0.5) if unit else torch.randn(d)
    norm = qwen35_lean_weights.make_norm(weight, 1e-6, unit=unit)
    x = torch.randn(3, 5, d).to(dtype)
    x[1, 2] = 0.0
    expected = torch.nn.functional.rms_norm(x.float(), (d,), weight, 1e-6)
    ours = qwen35_lean.rms(x, norm)
    assert ours.dtype == torch.float32 and torch.isfinite(ours).all()
    torch.testing.assert_close(ours, expected, rtol=1e-5, atol=1e-6)
    for fused in (False, True):  # the CPU's four ops; F.rms_norm, as on CUDA
        into = torch.empty(3, 5, d)
        assert qwen35_lean.rms(x, norm, out=into, fused=fused) is into
        torch.testing.assert_close(into, expected, rtol=1e-5, atol=1e-6)


def test_a_batch_of_two_steps_as_each_sequence_alone():
    """The step's scratch buffers and their views hold a batch: two sequences stepped together give each
    one's logits stepped alone (fp32, to 1e-5 of the largest)."""
    model = load_miniature().model
    prompts, steps = [[5, 9, 2], [7, 1, 4]], 6
    together = new_static_cache(model, room=16, batch=2)
    alone = [new_static_cache(model, room=16) for _ in prompts]
    run_static(model, torch.tensor(prompts), together)
    for prompt, cache in zip(prompts, alone, strict=True):
        run_static(model, torch.tensor([prompt]), cache)
    tokens = [3, 8]
    for _ in range(steps):
        both = run_static(model, torch.tensor([[t] for t in tokens]), together)[:, 0]  # (2, vocab)
        for i, (token, cache) in enumerate(zip(tokens, alone, strict=True)):
            one = run_static(model, torch.tensor([[token]]), cache)[0, 0]
            assert relative(both[i], one) <= RTOL
        tokens = [int(t) for t in both.argmax(-1)]
