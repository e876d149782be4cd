"""The course's Qwen3 (core/models/qwen3.py) over its static cache computes what transformers' Qwen3 computes.

Tiny random Qwen3 folders (bench/hf_tiny_qwen3.py, written here, never downloaded), fp32: the logits
of a 30-token greedy generation stepped one token at a time equal transformers' with its own cache at
every step (≤ 1e-5 relative), a prompt read at once equals transformers' full forward pass, and what
the module does not do is refused in one line.
"""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from core.models.hf_tokenizer import CheckpointError
from core.models.qwen3 import load_qwen3, qwen3_config

transformers = pytest.importorskip("transformers")

STEPS = 30
RTOL = 1e-5


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    from bench.hf_tiny_qwen3 import make_checkpoint

    root = tmp_path_factory.mktemp("qwen3")
    return {
        "untied": make_checkpoint(root / "untied"),
        "tied": make_checkpoint(root / "tied", tied=True, seed=1),
    }


def relative(ours: torch.Tensor, theirs: torch.Tensor) -> float:
    return float((ours - theirs).abs().max() / theirs.abs().max())


@pytest.mark.parametrize("layout", ["untied", "tied"])
def test_steps_equal_transformers_through_a_generation(folders, layout):
    ours_model = load_qwen3(folders[layout])
    hf = transformers.Qwen3ForCausalLM.from_pretrained(folders[layout]).eval()
    assert ours_model.config.tie_word_embeddings == (layout == "tied")
    cache = ours_model.new_cache(room=STEPS)
    token = 5
    with torch.no_grad():
        out = hf(torch.tensor([[token]]), use_cache=True)
        for t in range(STEPS):
            ours = ours_model(torch.tensor([[token]]), cache)[0, -1]  # (V,)
            theirs = out.logits[0, -1]
            assert relative(ours, theirs) <= RTOL, f"step {t}"
            token = int(theirs.argmax())
            assert int(ours.argmax()) == token
            if t + 1 < STEPS:
                out = hf(torch.tensor([[token]]), cache=out.cache, use_cache=True)
    assert cache.position == STEPS


def test_a_prompt_at_once_equals_transformers_full_pass(folders):
    ours_model = load_qwen3(folders["untied"])
    hf = transformers.Qwen3ForCausalLM.from_pretrained(folders["untied"]).eval()
    ids = torch.randint(0, 300, (1, 17), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        theirs = hf(ids).logits[0]  # (T, V)
    cache = ours_model.new_cache(room=20)
    assert relative(ours_model(ids, cache)[0], theirs) <= RTOL
    nxt = torch.tensor([[int(theirs[-1].argmax())]])
    with torch.no_grad():
        after = hf(torch.cat([ids, nxt], 1)).logits[0, -1]
    assert relative(ours_model(nxt, cache)[0, -1], after) <= RTOL  # and continues from the cache


def test_what_the_module_does_not_do_is_refused_in_one_line(folders, tmp_path):
    config = json.loads((folders["untied"] / "config.json").read_text())
    for change, words in [
        ({"use_sliding_window": True}, "sliding-window"),
        ({"rope_parameters": {"rope_type": "yarn", "factor": 4.0}}, "rotary scaling"),
        ({"model_type": "llama"}, "not a Qwen3"),
        ({"num_key_value_heads": 3}, "heads do not fit"),
    ]:
        with pytest.raises(CheckpointError, match=words) as caught:
            qwen3_config({**config, **change})
        assert "\n" not in str(caught.value)
    bad = tmp_path / "wider"
    shutil.copytree(folders["untied"], bad)
    (bad / "config.json").write_text(json.dumps({**config, "intermediate_size": 80}))
    with pytest.raises(CheckpointError, match="do not fit config.json"):
        load_qwen3(bad)
