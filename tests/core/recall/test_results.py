"""The trained-recall protocol (core/recall/results.py, core/train/recipes/recall.py): choosing a cell's
number, flagging plateau runs, stopping early, resuming, and the shipped file's schema."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from core.recall import results as rr
from core.recall.task import DEFAULT_VOCAB
from core.train.recipes import recall as recipe


def _run(lr: float, seed: int, accs: tuple[float, ...], loss: float) -> dict:
    pairs = ("4", "8")
    return {
        "name": rr.run_name("delta", 16, lr, seed),
        "mixer": "delta",
        "d_model": 16,
        "lr": lr,
        "seed": seed,
        "accuracy": dict(zip(pairs, accs, strict=True)),
        "final_loss": loss,
        "plateau": rr.on_plateau(loss, DEFAULT_VOCAB.n_values),
        "params": 1,
        "state_elements": 512,
        "cache_elements_per_token": 0,
        "memory_bytes_at_seq_len": 2048,
        "loss_curve": [4.6, loss],
    }


def test_plateau_is_near_the_loss_of_guessing_among_the_values():
    guess = math.log(DEFAULT_VOCAB.n_values)  # 4.61 nats for 100 values
    assert rr.on_plateau(guess, DEFAULT_VOCAB.n_values)
    assert rr.on_plateau(4.35, DEFAULT_VOCAB.n_values)  # the old kda_d16 run: flagged
    assert not rr.on_plateau(2.3, DEFAULT_VOCAB.n_values)  # a run that learned part of the task


def test_cell_reports_the_best_clean_learning_rate_mean_and_spread():
    runs = [
        _run(1e-3, 0, (0.5, 0.3), 2.0),
        _run(1e-3, 1, (0.7, 0.5), 1.8),
        # the best single run sits at 1e-2, but its other seed never learned: never chosen
        _run(1e-2, 0, (1.0, 1.0), 0.0),
        _run(1e-2, 1, (0.01, 0.01), 4.5),
    ]
    cell = rr.summarise_cell(runs, [4, 8])
    assert cell["lr"] == 1e-3 and cell["seeds"] == [0, 1]
    assert cell["accuracy"] == {"4": 0.6, "8": 0.4}
    assert cell["accuracy_min"] == {"4": 0.5, "8": 0.3} and cell["accuracy_max"] == {"4": 0.7, "8": 0.5}
    assert not cell["plateau"] and cell["flags"] == ["some other learning rates stayed on the plateau"]
    plateau_row = next(row for row in cell["lr_table"] if row["lr"] == 1e-2)
    assert plateau_row["plateau_seeds"] == [1]
    assert rr.best_run(cell, runs)["seed"] == 1  # the shipped checkpoint: the better seed of the chosen lr


def test_cell_whose_every_learning_rate_plateaued_is_flagged_not_hidden():
    runs = [_run(1e-3, 0, (0.02, 0.01), 4.5), _run(1e-2, 0, (0.3, 0.1), 3.0), _run(1e-2, 1, (0.02, 0.0), 4.4)]
    cell = rr.summarise_cell(runs, [4, 8])
    assert cell["plateau"] and "every learning rate left a seed on the plateau" in cell["flags"]
    assert cell["lr"] == 1e-2  # still the best mean, shown with its flag


def test_stopper_stops_on_convergence_and_gives_up_on_a_plateau():
    cfg = replace(recipe.SweepConfig(), steps=200, window=10, plateau_check=0.5)
    stop, why = recipe._stopper(cfg)
    assert not stop([0.0] * 9)  # fewer than a window of steps: never
    assert stop([0.001] * 10) and why["why"] == "converged"
    stop, why = recipe._stopper(cfg)
    assert not stop([4.6] * 99)  # on the plateau, but before the check point
    assert stop([4.6] * 100) and why["why"] == "plateau"
    stop, why = recipe._stopper(cfg)
    assert not stop([4.6] * 90 + [2.0] * 10)  # left the plateau in time: trains on
    assert why["why"] == "budget"
    stop, why = recipe._stopper(cfg)
    sliding = [4.6 - 0.004 * i for i in range(100)]  # still above the plateau line, but falling
    assert not stop(sliding) and why["why"] == "budget"


@pytest.mark.slow
def test_tiny_sweep_writes_a_valid_file_resumes_and_prunes(tmp_path):
    cfg = replace(
        recipe.SweepConfig(),
        mixers=("linear", "attention"),
        widths=(16,),
        lrs=(1e-2, 3e-2),
        seeds=(0, 1),
        steps=6,
        warmup=2,
        window=2,
        eval_examples=4,
        check_examples=2,
    )
    results = recipe.run_sweep(cfg, tmp_path, jobs=1)
    rr.check(results)
    assert json.loads((tmp_path / "results.json").read_text()) == json.loads(json.dumps(results))
    assert len(results["runs"]) == 8 and len(results["cells"]) == 2
    for cell in results["cells"]:
        assert cell["complete"] and cell["checkpoint_is_best_run"]
        assert (tmp_path / cell["checkpoint"]).exists()
    assert not list((tmp_path / "runs").glob("*.pt"))  # weights of runs not shipped are pruned
    # an interrupted sweep: one record lost → --resume trains only that run again
    lost = tmp_path / "runs" / f"{rr.run_name('linear', 16, 3e-2, 1)}.json"
    lost.unlink()
    again = recipe.run_sweep(cfg, tmp_path, jobs=1, resume=True)
    assert again["runs_trained_last_invocation"] == 1 and lost.exists()
    assert [r["accuracy"] for r in again["runs"]] == [r["accuracy"] for r in results["runs"]]  # seeded


def test_check_rejects_a_file_the_pages_cannot_read():
    with pytest.raises(ValueError, match="schema"):
        rr.check({"schema": 1})


# --- the shipped file ------------------------------------------------------------------------------


def _shipped() -> dict:
    results = rr.load()
    if results is None:
        pytest.fail("assets/recall/results.json is missing: run `python -m core.train recall`")
    return results


def test_shipped_results_follow_the_protocol():
    results = _shipped()
    rr.check(results)
    sweep = results["sweep"]
    assert len(sweep["lrs"]) >= 3 and min(sweep["lrs"]) <= 1e-3 and max(sweep["lrs"]) >= 3e-2
    assert len(sweep["seeds"]) >= 2
    for cell in results["cells"]:
        assert cell["complete"], f"{cell['mixer']}:{cell['d_model']} is missing runs"
        assert cell["checkpoint_is_best_run"] and (rr.RESULTS.parent / cell["checkpoint"]).exists()
        mine = [r for r in results["runs"] if r["mixer"] == cell["mixer"] and r["d_model"] == cell["d_model"]]
        assert rr.summarise_cell(mine, sweep["pair_counts"])["accuracy"] == cell["accuracy"]  # recomputable
    for run in results["runs"]:
        assert run["plateau"] == rr.on_plateau(run["final_loss"], sweep["vocab"]["n_values"])


def test_shipped_assets_stay_small():
    folder = rr.RESULTS.parent
    total = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    assert total < 4_000_000, f"assets/recall is {total / 1e6:.1f} MB"


def test_model_card_table_is_the_results_file(tmp_path):
    results = _shipped()
    card = (rr.RESULTS.parent / "MODEL_CARD.md").read_text()
    assert rr.card_table(results) in card, "run `python -m core.train recall --resume` to rewrite the card"
    # the rewrite keeps the prose around the markers
    scratch = tmp_path / "card.md"
    scratch.write_text(f"before\n{rr.CARD_BEGIN}\nold\n{rr.CARD_END}\nafter\n")
    assert rr.update_card(scratch, results)
    text = scratch.read_text()
    assert text.startswith("before\n") and text.endswith("after\n") and "old" not in text


@pytest.mark.parametrize("mixer", ["gated_delta", "kda"])
def test_gated_boards_start_close_to_the_ungated_one(mixer):
    """Initial share kept per token exp(g) is near 1 (0.85–1) on every channel, so training starts from
    (almost) the delta rule and learns where to forget (Mamba-2 / fla Gated DeltaNet init)."""
    import torch

    from core.recall.models import build_model

    model = build_model(mixer, 32, seed=3)
    mixer_layer = model.blocks[0].mixer
    x = torch.randn(4, 64, 32)  # (B, T, D) inputs of the layer's scale
    with torch.no_grad():
        keep = mixer_layer.gates(model.blocks[0].norm1(x))["g"].exp()
    assert keep.min() > 0.85 and keep.max() < 1.0  # dt ≤ 0.1 → at most ~10 % fades per token
    assert keep.median() > 0.93
