"""The model protocol (core/models/protocol.py): the tiny GPT-2, mini-K3 and every recall model
answer the same calls, survive a save/load round trip, and their one-token `step` traces give the
same logits as one full forward pass over the text (parity)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.models.gpt2 import GPT2, GPT2Config
from core.models.mini_k3 import MiniK3, MiniK3Config
from core.models.protocol import LiveModel
from core.models.recall_models import MIXERS, RecallModel, build_model
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
