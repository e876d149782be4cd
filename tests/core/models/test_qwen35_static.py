"""Qwen3.5 over preallocated memory (core/models/qwen35_static.py) computes what `Qwen35.step` computes.

A tiny random released-format Qwen3.5 (bench/hf_tiny_qwen35.py, made here, never downloaded) is
stepped both ways through a 30-token greedy generation: the logits agree at every step (fp32, ≤ 5e-5 of
the largest: the single-token step is the lean one), the buffers never move (the condition for a CUDA
graph), and a prompt read in chunks into the static memory continues exactly like the eager one.
"""

from __future__ import annotations

import pytest
import torch

from core.models.qwen35 import load_qwen35
from core.models.qwen35_layers import BoardMemory
from core.models.qwen35_static import new_static_cache, run_static
from core.models.static_kv import StaticKV

pytest.importorskip("transformers")  # only to write the tiny folder

STEPS = 30
RTOL = 5e-5  # the single-token step is the lean one: its sums run in another order, and this random
# model amplifies that (tests/core/models/test_qwen35_lean.py holds it to 1e-5 on the trained miniature)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from bench.hf_tiny_qwen35 import make_checkpoint

    return load_qwen35(make_checkpoint(tmp_path_factory.mktemp("qwen35") / "tiny")).model


def relative(ours: torch.Tensor, theirs: torch.Tensor) -> float:
    return float((ours - theirs).abs().max() / theirs.abs().max())


def test_static_steps_equal_the_eager_steps_through_a_generation(model):
    eager = model.new_cache()
    static = new_static_cache(model, room=STEPS)
    addresses = [t.data_ptr() for t in static.kv_tensors() + static.board_tensors()]
    token = 7
    for t in range(STEPS):
        theirs = model.next_logits(token, eager)  # (V,)
        ours = run_static(model, torch.tensor([[token]]), static)[0, -1]  # (V,)
        assert relative(ours, theirs) <= RTOL, f"step {t}"
        token = int(theirs.argmax())
        assert int(ours.argmax()) == token
    assert static.position == eager.position == STEPS
    assert [t.data_ptr() for t in static.kv_tensors() + static.board_tensors()] == addresses
    boards = [m for m in static.memory if isinstance(m, BoardMemory)]
    their_boards = [m for m in eager.memory if isinstance(m, BoardMemory)]
    assert boards and len(boards) == len(their_boards)
    # the single-token step is the lean one (core/models/qwen35_lean.py): the same maths with fp32 sums in
    # another order, so the memories agree as the logits do, to RTOL of their largest entry
    for ours_m, theirs_m in zip(boards, their_boards, strict=True):
        assert relative(ours_m.board, theirs_m.board) <= RTOL
        assert relative(ours_m.conv_window, theirs_m.conv_window) <= RTOL
    kv = [m for m in static.memory if isinstance(m, StaticKV)][0]
    their_kv = [m for m in eager.memory if not isinstance(m, BoardMemory)][0]
    assert relative(kv.keys[:, :, :STEPS], their_kv.keys) <= RTOL
    assert relative(kv.values[:, :, :STEPS], their_kv.values) <= RTOL


def test_a_chunked_prompt_then_steps_equal_the_eager_path(model):
    prompt = torch.randint(0, model.config.vocab_size, (1, 21), generator=torch.Generator().manual_seed(2))
    eager = model.new_cache()
    theirs = model.prefill(prompt[0].tolist(), eager, chunk_size=8)  # (T, V)
    static = new_static_cache(model, room=32)
    ours = run_static(model, prompt, static, chunk_size=8)[0]  # (T, V)
    assert relative(ours, theirs) <= 1e-4  # the chunked form: the same sums in another order
    for token in (3, 11, 5):
        ours_next = run_static(model, torch.tensor([[token]]), static)[0, -1]
        assert relative(ours_next, model.next_logits(token, eager)) <= 1e-4


def test_a_step_past_the_room_is_refused(model):
    static = new_static_cache(model, room=2)
    run_static(model, torch.tensor([[1, 2]]), static)
    with pytest.raises(ValueError, match="holds 2 positions"):
        run_static(model, torch.tensor([[3]]), static)


def test_a_step_moves_each_board_only_through_the_in_place_update(model):
    """Issue 42: the static step used to copy a fresh board into the fixed one after every token. Now the
    op updates the fixed board itself: traced on the boards alone (core/gpu/decode/traffic.py), one token
    moves each board the in-place step's passes (core/ops/in_place.py) and not a byte more."""
    from core.gpu.decode.traffic import trace_persistent_bytes
    from core.ops.in_place import BOARD_READS, BOARD_WRITES

    static = new_static_cache(model, room=4)
    run_static(model, torch.tensor([[1, 2]]), static)
    boards = [m.board for m in static.memory if isinstance(m, BoardMemory)]
    moved, ops = trace_persistent_bytes(lambda: run_static(model, torch.tensor([[3]]), static), boards)
    assert moved == (BOARD_READS + BOARD_WRITES) * sum(b.numel() * b.element_size() for b in boards), ops
    assert "copy_" not in ops
