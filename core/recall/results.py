"""The trained-recall results file (assets/recall/results.json): how a cell's number is chosen.

Zoology's protocol (Arora et al., arXiv 2312.04927, Appendix): every (mixer, width) cell is
trained at several learning rates and seeds; a cell reports its best learning rate — the mean
over seeds and their spread. Two rules of ours keep a failed run from hiding as a result:

* a run whose final training loss is still near the loss of guessing among the values
  (ln n_values) never left the starting **plateau**; it is flagged, never averaged silently;
* the best learning rate is chosen among those whose seeds all left the plateau, by mean
  accuracy over pair counts; only if none did is a plateau learning rate reported, flagged.

Pages read every number they show through this module (`cell`, `quote`), never typed in.
"""

from __future__ import annotations

import json
import math
import os
import statistics
from pathlib import Path

# COURSE_RECALL_RESULTS points the pages at another sweep's output (e.g. a --quick run in /tmp)
RESULTS = Path(
    os.environ.get(
        "COURSE_RECALL_RESULTS", Path(__file__).resolve().parents[2] / "assets" / "recall" / "results.json"
    )
)
PLATEAU_FRACTION = 0.85  # final loss above this share of ln(n_values) = still on the plateau
SCHEMA_VERSION = 2


def plateau_loss(n_values: int) -> float:
    """The loss of a model that knows an answer is a value but not which: ln(n_values) nats."""
    return math.log(n_values)


def on_plateau(final_loss: float, n_values: int) -> bool:
    """True when a run ended without leaving the starting plateau."""
    return final_loss > PLATEAU_FRACTION * plateau_loss(n_values)


def run_name(mixer: str, width: int, lr: float, seed: int) -> str:
    return f"{mixer}_d{width}_lr{lr:.0e}_s{seed}"


def cell_name(mixer: str, width: int) -> str:
    return f"{mixer}_d{width}"


def summarise_cell(runs: list[dict], pair_counts: list[int]) -> dict:
    """One cell's reported numbers from its runs (all one mixer and width, every lr and seed)."""
    pairs = [str(p) for p in pair_counts]
    by_lr: dict[float, list[dict]] = {}
    for run in runs:
        by_lr.setdefault(run["lr"], []).append(run)

    def mean_acc(group: list[dict]) -> float:
        return statistics.fmean(statistics.fmean(r["accuracy"][p] for p in pairs) for r in group)

    lr_table = [
        {
            "lr": lr,
            "seeds": sorted(r["seed"] for r in group),
            "mean_accuracy": round(mean_acc(group), 4),
            "plateau_seeds": sorted(r["seed"] for r in group if r["plateau"]),
        }
        for lr, group in sorted(by_lr.items())
    ]
    clean = [row for row in lr_table if not row["plateau_seeds"]]
    best = max(clean or lr_table, key=lambda row: row["mean_accuracy"])
    chosen = sorted(by_lr[best["lr"]], key=lambda r: r["seed"])
    accs = {p: [r["accuracy"][p] for r in chosen] for p in pairs}
    first = chosen[0]
    flags = []
    if best["plateau_seeds"]:
        flags.append("every learning rate left a seed on the plateau")
    elif any(row["plateau_seeds"] for row in lr_table):
        flags.append("some other learning rates stayed on the plateau")
    return {
        "mixer": first["mixer"],
        "d_model": first["d_model"],
        "lr": best["lr"],
        "seeds": [r["seed"] for r in chosen],
        "accuracy": {p: round(statistics.fmean(v), 4) for p, v in accs.items()},
        "accuracy_min": {p: min(v) for p, v in accs.items()},
        "accuracy_max": {p: max(v) for p, v in accs.items()},
        "accuracy_std": {p: round(statistics.pstdev(v), 4) for p, v in accs.items()},
        "final_loss": round(statistics.fmean(r["final_loss"] for r in chosen), 4),
        "plateau": bool(best["plateau_seeds"]),
        "flags": flags,
        "lr_table": lr_table,
        "runs": [r["name"] for r in chosen],
        "checkpoint": f"{cell_name(first['mixer'], first['d_model'])}.pt",
        "params": first["params"],
        "state_elements": first["state_elements"],
        "cache_elements_per_token": first["cache_elements_per_token"],
        "memory_bytes_at_seq_len": first["memory_bytes_at_seq_len"],
    }


def best_run(cell: dict, runs: list[dict]) -> dict:
    """The chosen learning rate's run with the highest mean accuracy: the one shipped as a checkpoint."""
    chosen = [r for r in runs if r["name"] in cell["runs"]]
    return max(chosen, key=lambda r: (statistics.fmean(r["accuracy"].values()), -r["seed"]))


# --- reading the shipped file -----------------------------------------------------------------------


def load(path: Path = RESULTS) -> dict | None:
    """The results, or None when the sweep has not been run."""
    return json.loads(path.read_text()) if path.exists() else None


def check(results: dict) -> None:
    """Raise ValueError when the file lacks what the pages read (a stale or hand-edited file)."""
    if results.get("schema") != SCHEMA_VERSION:
        raise ValueError(f"results.json schema {results.get('schema')!r}, expected {SCHEMA_VERSION}")
    sweep = results["sweep"]
    pairs = {str(p) for p in sweep["pair_counts"]}
    names = {r["name"] for r in results["runs"]}
    for c in results["cells"]:
        for field in ("accuracy", "accuracy_min", "accuracy_max", "accuracy_std"):
            if set(c[field]) != pairs:
                raise ValueError(f"cell {c['mixer']}:{c['d_model']} {field} lacks pair counts")
        if not set(c["runs"]) <= names:
            raise ValueError(f"cell {c['mixer']}:{c['d_model']} names runs that are not in the file")
        if c["lr"] not in sweep["lrs"]:
            raise ValueError(f"cell {c['mixer']}:{c['d_model']} chose a learning rate outside the sweep")
    for r in results["runs"]:
        if not r["loss_curve"]:
            raise ValueError(f"run {r['name']} has no loss curve")


def cell(results: dict, mixer: str, width: int) -> dict | None:
    for c in results["cells"]:
        if c["mixer"] == mixer and c["d_model"] == width:
            return c
    return None


def quote(results: dict, mixer: str, width: int, pairs: int) -> float | None:
    """A cell's reported accuracy (mean over seeds at its best learning rate) at `pairs` pairs."""
    c = cell(results, mixer, width)
    return None if c is None else c["accuracy"][str(pairs)]


# --- the model card's results table, written from the file (never typed in) -------------------------

CARD_BEGIN, CARD_END = "<!-- results:begin -->", "<!-- results:end -->"


def card_table(results: dict) -> str:
    """Markdown: per cell the chosen learning rate, mean (lowest–highest seed) per pair count, flags."""
    pairs = [str(p) for p in results["sweep"]["pair_counts"]]
    head = "| mixer | d | lr chosen | " + " | ".join(f"{p} pairs" for p in pairs) + " | final loss | notes |"
    rule = "|---|---|---|" + "---|" * len(pairs) + "---|---|"
    rows = [head, rule]
    for c in results["cells"]:
        accs = " | ".join(
            f"{c['accuracy'][p]:.3f} ({c['accuracy_min'][p]:.3f}–{c['accuracy_max'][p]:.3f})" for p in pairs
        )
        notes = "; ".join(c["flags"]) or "—"
        rows.append(
            f"| {c['mixer']} | {c['d_model']} | {c['lr']:g} | {accs} | {c['final_loss']:.3f} | {notes} |"
        )
    return "\n".join(rows)


def update_card(card: Path, results: dict) -> bool:
    """Replace the table between the card's markers with `card_table(results)`; False if no markers."""
    if not card.exists():
        return False
    text = card.read_text()
    if CARD_BEGIN not in text or CARD_END not in text:
        return False
    before, rest = text.split(CARD_BEGIN, 1)
    _, after = rest.split(CARD_END, 1)
    card.write_text(f"{before}{CARD_BEGIN}\n{card_table(results)}\n{CARD_END}{after}")
    return True


def compare(results: dict, a: str, b: str, width: int, pairs: int) -> str:
    """'ahead', 'behind' or 'tie': is mixer a's worst seed above b's best (or the reverse)? Seeds that
    overlap are a tie — the difference is within what a different random start changes."""
    ca, cb = cell(results, a, width), cell(results, b, width)
    p = str(pairs)
    if ca["accuracy_min"][p] > cb["accuracy_max"][p]:
        return "ahead"
    if ca["accuracy_max"][p] < cb["accuracy_min"][p]:
        return "behind"
    return "tie"
