"""MoE: shared experts always run, exactly k routed ones per token, weights and bias behave as in K3."""

from __future__ import annotations

import torch

from core.models.mini_k3 import MiniK3, MiniK3Config
from core.models.moe import MoE, MoEConfig, route, tokens_per_expert


def _moe(**kw) -> MoE:
    torch.manual_seed(0)
    return MoE(
        MoEConfig(**{"d_model": 12, "num_experts": 8, "top_k": 3, "num_shared": 2, "expert_hidden": 5, **kw})
    )


def test_exactly_k_routed_and_all_shared_experts_run_per_token():
    moe = _moe()
    served = {}

    def count(name):
        def hook(module, inputs, output):
            served[name] = served.get(name, 0) + inputs[0].shape[0]

        return hook

    for i, expert in enumerate(moe.experts):
        expert.register_forward_hook(count(("routed", i)))
    for i, expert in enumerate(moe.shared):
        expert.register_forward_hook(count(("shared", i)))
    x = torch.randn(2, 9, 12)  # 18 tokens
    _, routing = moe(x)
    routed = sum(n for (kind, _), n in served.items() if kind == "routed")
    assert routed == 18 * 3
    assert served[("shared", 0)] == served[("shared", 1)] == 18
    # each token's k choices are distinct, and the counter agrees with the hooks
    assert all(len(set(row.tolist())) == 3 for row in routing.expert_ids)
    load = tokens_per_expert(routing.expert_ids, 8)
    for i in range(8):
        assert load[i].item() == served.get(("routed", i), 0)


def test_output_is_shared_plus_weighted_routed_experts():
    moe = _moe()
    x = torch.randn(5, 12, dtype=torch.float32)
    y, routing = moe(x)
    for n in range(5):
        expected = sum(s(x[n]) for s in moe.shared)
        for slot in range(3):
            e = routing.expert_ids[n, slot].item()
            expected = expected + routing.weights[n, slot] * moe.experts[e](x[n])
        torch.testing.assert_close(y[n], expected, rtol=1e-5, atol=1e-6)


def test_renormalised_weights_sum_to_the_scaling_factor():
    torch.manual_seed(1)
    logits = torch.randn(30, 16)
    for scale in (1.0, 2.5):
        r = route(logits, top_k=4, scaling=scale)
        torch.testing.assert_close(r.weights.sum(-1), torch.full((30,), scale))
    unnormalised = route(logits, top_k=4, renormalize=False)
    torch.testing.assert_close(
        unnormalised.weights, torch.sigmoid(logits).gather(-1, unnormalised.expert_ids)
    )


def test_bias_changes_the_choice_but_not_the_weights_of_the_chosen():
    torch.manual_seed(2)
    logits = torch.randn(40, 8)
    plain = route(logits, top_k=2)
    bias = torch.zeros(8)
    bias[5] = 2.0  # > any sigmoid gap: expert 5 is picked by everyone
    biased = route(logits, top_k=2, bias=bias)
    assert not torch.equal(plain.expert_ids, biased.expert_ids)
    assert (biased.expert_ids == 5).any(dim=-1).all()
    # weights come from the raw scores of whatever was picked — the bias never enters them
    raw = torch.sigmoid(logits).gather(-1, biased.expert_ids)
    torch.testing.assert_close(biased.weights, raw / raw.sum(-1, keepdim=True))
    # tokens whose picks did not change keep exactly the same weights
    same = (plain.expert_ids.sort(-1).values == biased.expert_ids.sort(-1).values).all(-1)
    assert same.any()
    a = plain.weights[same].sort(-1).values
    b = biased.weights[same].sort(-1).values
    torch.testing.assert_close(a, b)


def test_balance_bias_buffer_is_used_by_the_module():
    moe = _moe(top_k=1)
    x = torch.randn(20, 12)
    moe.balance_bias[3] = 5.0
    _, routing = moe(x)
    assert (routing.expert_ids[:, 0] == 3).all()


def test_active_and_total_parameters_match_a_hand_count():
    moe = _moe(d_model=10, num_experts=6, top_k=2, num_shared=1, expert_hidden=4)
    per_expert = 3 * 10 * 4  # gate + up + down
    router = 10 * 6
    assert moe.total_params() == router + (6 + 1) * per_expert == 900
    assert moe.active_params() == router + (2 + 1) * per_expert == 420


def test_the_moe_load_counter_still_counts_in_training():
    torch.manual_seed(0)
    model = MiniK3(MiniK3Config()).train()
    model(torch.tensor([list(b"abcdef")]))
    moes = [layer.ffn for layer in model.layers if isinstance(layer.ffn, MoE)]
    assert moes and all(int(moe.load.sum()) == 6 * moe.cfg.top_k for moe in moes)
