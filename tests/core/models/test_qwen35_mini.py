"""The shipped Qwen3.5 miniature (assets/qwen35_mini/): Qwen3.5's own layers at a tiny size, trained here.

It loads through the released-folder checks into the same Qwen35 class, keeps the 3 : 1 layer map, is
small, is trained (not random: its held-out loss is far below a guess), its fades respond to the text,
its card is exactly what the recipe writes, and the recipe is deterministic (slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from core.models.qwen35 import Qwen35
from core.models.qwen35_mini import CHECKPOINT, TEXT_CONFIG, is_miniature, load_miniature
from tests.conftest import tracked_asset
from tests.core.models.recipe_runs import assert_same_weights_twice


@pytest.fixture(scope="module")
def shipped():
    tracked_asset("assets/qwen35_mini/model.safetensors")
    tracked_asset("assets/qwen35_mini/config.json")
    return load_miniature()


def test_the_shipped_miniature_is_qwen35_in_the_3_to_1_pattern(shipped):
    assert type(shipped.model) is Qwen35 and is_miniature(CHECKPOINT)
    c = shipped.config
    assert c.layer_types == ("linear_attention",) * 3 + ("full_attention",)
    assert c.vocab_size == 256 and shipped.tokenizer.unit == "byte"
    assert c.linear_conv_kernel_dim == 4 and c.linear_num_value_heads == TEXT_CONFIG["linear_num_value_heads"]
    assert (CHECKPOINT / "model.safetensors").stat().st_size < 5_000_000


def test_it_is_trained_and_its_card_is_what_the_recipe_writes(shipped):
    from core.train.recipes.qwen35_mini import model_card

    record = shipped.model.meta["training"]
    assert record["heldout_loss"] < 2.0  # far below a uniform guess over 256 bytes (ln 256 = 5.55)
    assert record["total_params"] == shipped.model.num_params()
    assert (CHECKPOINT / "MODEL_CARD.md").read_text(encoding="utf-8") == model_card(shipped.model)


def test_its_fades_and_writes_respond_to_the_text(shipped):
    traces = shipped.model.run(
        list(b"My cat sleeps on the warm sofa all day. Meanwhile, the stock market fell.")
    )
    alpha = np.stack([[tr.layers[i].parts["alpha"] for i in range(3)] for tr in traces])  # (T, 3, Hv)
    beta = np.stack([[tr.layers[i].parts["beta"] for i in range(3)] for tr in traces])
    assert (alpha.std(axis=0) > 0.01).any() and (beta.std(axis=0) > 0.01).any()  # per token, not constants
    assert 0 < alpha.min() and alpha.max() < 1 and 0 < beta.min() and beta.max() < 1


def test_step_by_step_equals_the_whole_pass(shipped):
    ids = list(b"The cat sat.")
    traces = shipped.model.run(ids)
    logits = shipped.model(torch.tensor([ids]), chunk_size=4)[0]
    np.testing.assert_allclose(np.stack([tr.logits for tr in traces]), logits.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.slow
def test_training_recipe_is_deterministic(tmp_path):
    """Same command, same weights: two short runs of the recipe give bit-identical checkpoints."""
    from safetensors.torch import load_file

    from core.train.recipes.qwen35_mini import main

    def read(out: Path) -> dict:
        assert (out / "MODEL_CARD.md").exists() and is_miniature(out)
        return load_file(str(out / "model.safetensors"))

    assert_same_weights_twice(main, [tmp_path / name for name in ("a", "b")], read)
