"""mini-K3: step-by-step decoding equals the full pass, memory grows only in attention layers,
and its layer schedule, built from K3's real config, reproduces K3's 93 layers."""

from __future__ import annotations

import pytest
import torch

from core.models.mini_k3 import CHECKPOINT, MiniK3, MiniK3Config
from core.models.mini_k3_trace import route_text
from core.models.moe import MoE, expert_params
from core.specs import K3_FULL_ATTN_LAYERS, SPECS, full_attention_layers
from tests.conftest import tracked_asset


@pytest.fixture(scope="module")
def model() -> MiniK3:
    torch.set_num_threads(1)  # the CI box is small and shared
    torch.manual_seed(0)
    return MiniK3(MiniK3Config(chunk_size=8)).eval()


def _perturb(model: MiniK3) -> MiniK3:
    """Random non-zero AttnRes queries, so the depth mixes are not plain averages in the tests."""
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("_query"):
                p.copy_(torch.randn(p.shape, generator=gen))
    return model


def test_step_by_step_decoding_equals_the_full_sequence(model):
    _perturb(model)
    idx = torch.randint(0, 256, (2, 21), generator=torch.Generator().manual_seed(1))  # crosses chunk edges
    with torch.no_grad():
        full = model(idx)  # (B, T, V), chunked KDA + causal latent attention
        cache = model.new_cache(batch=2)
        stepped = torch.stack([model.decode(idx[:, t], cache)[0] for t in range(idx.shape[1])], dim=1)
    torch.testing.assert_close(stepped, full, rtol=1e-4, atol=1e-4)


def test_only_attention_layers_memory_grows(model):
    traces = model.run([72, 101, 108, 108, 111], new_tokens=6)
    cfg = model.cfg
    per_token = (cfg.kv_latent_dim + cfg.shared_key_dim) * 4  # fp32 latent + shared key
    board = cfg.kda_heads * cfg.kda_head_dim * cfg.kda_head_dim * 4
    for t, trace in enumerate(traces, start=1):
        for layer in trace.layers:
            if layer.kind == "kda":
                assert layer.memory == "state" and layer.memory_bytes == board
                assert layer.state.shape == (cfg.kda_heads, cfg.kda_head_dim, cfg.kda_head_dim)
            else:
                assert layer.memory == "cache" and layer.memory_bytes == t * per_token
                assert layer.latent.shape == (t, cfg.kv_latent_dim)
                assert layer.attention.shape == (cfg.mla_heads, t)
        assert trace.state_bytes == 6 * board
        assert trace.cache_bytes == 3 * t * per_token


def test_traces_carry_experts_and_attn_res_weights(model):
    traces = model.run(list(b"memory"), new_tokens=2)
    block = model.cfg.attn_res_block_size
    for trace in traces:
        for i, layer in enumerate(trace.layers):
            if i < model.cfg.first_k_dense:
                assert layer.experts is None
            else:
                assert len(set(layer.experts)) == model.cfg.top_k
                assert sum(layer.expert_weights) == pytest.approx(model.cfg.routed_scaling_factor, abs=1e-5)
            # sources before the mixer: embedding + completed blocks (+ the partial sum mid-block)
            completed = i // block
            expected = 1 + completed + (0 if i % block == 0 else 1)
            assert layer.attn_res_weights.shape == (expected,)
            assert layer.attn_res_weights.sum() == pytest.approx(1.0, abs=1e-5)
            assert layer.parts["attn_res_ffn"].shape == (1 + completed + 1,)
        assert trace.layers[-1].parts["attn_res_output"].shape == (1 + -(-model.cfg.num_layers // block),)


def test_kda_gate_is_lower_bounded(model):
    x = torch.randn(2, 9, model.cfg.d_model) * 30
    g = model.layers[0].mixer.inputs(x).g
    assert (g < 0).all() and (g > model.cfg.gate_lower_bound).all()


def test_active_params_are_total_minus_the_idle_experts(model):
    cfg = model.cfg
    moe_layers = sum(isinstance(layer.ffn, MoE) for layer in model.layers)
    assert moe_layers == cfg.num_layers - cfg.first_k_dense
    idle = moe_layers * (cfg.num_experts - cfg.top_k) * expert_params(cfg.d_model, cfg.expert_hidden)
    assert model.active_params() == model.num_params() - idle
    assert model.active_params() < 0.5 * model.num_params()


def test_schedule_from_k3_config_reproduces_k3():
    k3 = SPECS["kimi_k3"]
    cfg = MiniK3Config(num_layers=k3.num_layers)  # same rule: every 4th + the final layer
    kinds = cfg.layer_kinds()
    assert len(kinds) == 93
    assert kinds == k3.layer_kinds()
    assert full_attention_layers(kinds) == list(K3_FULL_ATTN_LAYERS)
    assert full_attention_layers(kinds)[:3] == [4, 8, 12] and full_attention_layers(kinds)[-2:] == [92, 93]
    assert kinds.count("kda") == 69 and kinds.count("mla") == 24
    assert MiniK3Config().layer_kinds() == ["kda"] * 3 + ["mla"] + ["kda"] * 3 + ["mla", "mla"]


def test_route_text_matches_the_step_traces(model):
    ids = list(b"the cat sat")
    table = route_text(model, ids)
    traces = model.run(ids)
    assert [r.layer for r in table] == list(range(1, model.cfg.num_layers))
    for r in table:
        assert r.load.sum() == len(ids) * model.cfg.top_k
        for t, trace in enumerate(traces):
            assert sorted(r.expert_ids[t].tolist()) == sorted(trace.layers[r.layer].experts)


def test_shipped_checkpoint_loads_and_is_small():
    tracked_asset("assets/mini_k3/model.pt")
    assert CHECKPOINT.stat().st_size < 5_000_000
    trained = MiniK3.load()
    assert trained.meta["heldout_loss"] < 3.0  # far below a uniform guess (ln 256 = 5.55)
    # the shipped card is exactly what the recipe writes for the shipped weights: its words cannot drift
    from core.train.recipes.mini_k3 import model_card

    assert (CHECKPOINT.parent / "MODEL_CARD.md").read_text() == model_card(trained, trained.meta)
    trace = trained.step(ord("T"), trained.new_cache())
    assert trace.logits.shape == (256,)
