"""The model protocol (core/models/protocol.py): the tiny GPT-2, mini-K3 and every recall model
answer the same calls, survive a save/load round trip, and their one-token `step` traces give the
same logits as one full forward pass over the text (parity); a forward pass in eval mode, as the app
serves a model shared by every reader, changes no parameter or buffer (the MoE load counter included);
and a checkpoint that fits the model only in part is refused in one clear line (strict loading)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.models.gpt2 import GPT2, GPT2Config
from core.models.mini_k3 import MiniK3, MiniK3Config
from core.models.protocol import CheckpointMismatch, LiveModel
from core.recall.config import MIXERS, RecallModelConfig
from core.recall.models import RecallModel, build_model
from core.trace import Trace

TOKENS = [5, 17, 3, 9, 30, 2, 11, 7, 1, 4, 26, 8, 13]  # < every vocabulary; crosses mini-K3's chunk edge


def _gpt2() -> GPT2:
    torch.manual_seed(0)
    return GPT2(GPT2Config(block_size=32, n_layer=2, n_head=2, d_model=32)).eval()


def _mini_k3() -> MiniK3:
    torch.manual_seed(0)
    return MiniK3(MiniK3Config(chunk_size=8)).eval()


BUILDERS = {
    "gpt2": _gpt2,
    "mini_k3": _mini_k3,
    **{f"recall_{m}": (lambda m=m: build_model(m, 16, n_heads=2).eval()) for m in MIXERS},
}


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("name", list(BUILDERS))
def test_each_model_satisfies_the_protocol_and_round_trips(name, tmp_path):
    model = BUILDERS[name]()
    assert isinstance(model, LiveModel)
    path = tmp_path / "model.pt"
    model.save(path, meta={"note": name})
    loaded = type(model).load(path)
    assert isinstance(loaded, LiveModel) and not loaded.training
    assert loaded.meta == {"note": name}
    assert loaded.num_params() == model.num_params() == sum(p.numel() for p in model.parameters())
    idx = torch.tensor([TOKENS])
    with torch.no_grad():
        torch.testing.assert_close(loaded(idx), model(idx), rtol=2e-2, atol=2e-2)  # mini-K3 saves bf16
    with pytest.raises(FileNotFoundError, match="python -m core.train"):
        type(model).load(tmp_path / "missing.pt")


@pytest.mark.parametrize("name", list(BUILDERS))
def test_decode_step_traces_match_the_full_forward(name):
    model = BUILDERS[name]()
    with torch.no_grad():
        full = model(torch.tensor([TOKENS]))[0]  # (T, vocab)
    cache = model.new_cache()
    for t, token in enumerate(TOKENS):
        trace = model.step(token, cache)
        assert isinstance(trace, Trace)
        assert trace.position == t and trace.positions_computed == 1
        np.testing.assert_allclose(trace.logits, full[t].numpy(), rtol=1e-4, atol=1e-4)
        assert trace.token == int(full[t].argmax())
        assert trace.memory_bytes == model.memory_bytes(t + 1)
        assert trace.cache_bytes == (t + 1) * model.cache_bytes_per_token()
        assert trace.state_bytes == model.state_bytes()
        assert sum(layer.memory_bytes for layer in trace.layers) <= trace.memory_bytes


def test_memory_accounting_is_the_same_rule_everywhere():
    gpt2, k3 = _gpt2(), _mini_k3()
    assert gpt2.state_bytes() == 0 and gpt2.cache_bytes_per_token() == 2 * 2 * 32 * 4
    cfg = k3.cfg
    assert k3.cache_bytes_per_token() == 3 * cfg.latent_bytes_per_token()  # three MLA layers grow
    assert k3.state_bytes() == 6 * cfg.board_bytes()  # six KDA boards stay
    recall = build_model("kda", 16)
    assert isinstance(recall, RecallModel) and recall.cache_bytes_per_token() == 0
    assert recall.memory_bytes(10) == recall.memory_bytes(1000) == recall.state_bytes()


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


def test_mini_k3_forward_in_eval_mode_leaves_every_parameter_and_buffer_unchanged():
    from core.models.mini_k3_trace import live_run, route_text

    torch.manual_seed(0)
    model = MiniK3(MiniK3Config()).eval()  # as the app serves it (MiniK3.load returns it in eval)
    ids = list(b"the cat sat on the mat")
    before = _snapshot(model)
    assert any(name.endswith(".load") for name in before), "the MoE load counter is checked too"
    with torch.no_grad():
        model(torch.tensor([ids]))  # a whole text (Experts' router picture)
    route_text(model, ids)
    live_run(model, ids[:8], new_tokens=4)  # byte by byte (Kimi K3)
    _assert_unchanged(before, model)


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
