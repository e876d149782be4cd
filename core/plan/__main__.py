"""`python -m core.plan --config path/config.json --context 131072 --batch 8 --card h100_80gb`

Prints the plan in one sentence, then its figures, cautions and assumptions for one config (the page's
twin); every context printed has the trained window beside it. `--json` / `--csv` print the figures in
those formats. Exit status 2 for a config it cannot read, with a one-line message.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from core.i18n import DEFAULT, use_language
from core.plan.cards import CARDS
from core.plan.config import MAX_CONFIG_BYTES, SHIPPED_CONFIGS, parse
from core.plan.errors import ConfigError
from core.plan.export import rows, to_csv, to_json
from core.plan.formats import CACHE_FORMATS, STATE_FORMATS, WEIGHT_FORMATS
from core.plan.headline import headline
from core.plan.inputs import PlanInputs
from core.plan.memory import LAYOUTS
from core.plan.plan import plan


def main(argv: list[str] | None = None) -> int:
    with use_language(DEFAULT):  # the command line speaks English, whatever language its caller runs in
        return _run(argv)


def _run(argv: list[str] | None) -> int:
    d = PlanInputs()
    ap = argparse.ArgumentParser(prog="python -m core.plan", description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--config", required=True, help=f"a config.json, or a shipped name: {', '.join(shipped())}"
    )
    ap.add_argument("--context", type=int, default=d.context, help="tokens per sequence")
    ap.add_argument("--batch", type=int, default=d.batch, help="concurrent sequences")
    ap.add_argument("--card", choices=list(CARDS), default=d.card)
    ap.add_argument("--gpus", type=int, default=d.gpus, help="tensor-parallel GPUs")
    ap.add_argument("--weights", choices=list(WEIGHT_FORMATS), default=d.weight_format)
    ap.add_argument("--cache", choices=list(CACHE_FORMATS), default=d.cache_format)
    ap.add_argument("--memory-share", type=float, default=d.memory_share, help="usable share of memory (0.9)")
    ap.add_argument("--layout", choices=list(LAYOUTS), default=d.layout)
    ap.add_argument(
        "--state",
        choices=list(STATE_FORMATS),
        default=d.state_format,
        help="the fixed recurrent state's format",
    )
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--csv", action="store_true")
    args = ap.parse_args(argv)
    try:
        model = parse(read_config(args.config))
        inputs = PlanInputs(args.context, args.batch, args.weights, args.cache, args.memory_share, args.gpus,
                            args.card, args.layout, args.state)  # fmt: skip
        result = plan(model, inputs)
    except (ConfigError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(to_json(result))
    elif args.csv:
        print(to_csv(result), end="")
    else:
        print(headline(model, inputs) + "\n")
        width = max(len(q) for q, _, _ in rows(result))
        for quantity, shown, _ in rows(result):
            print(f"{quantity:<{width}}  {shown}")
        if result.cautions:
            print("\ncautions:")
            for text in result.cautions:
                print(f"- {text}")
        print("\nassumptions:")
        for text in result.assumptions:
            print(f"- {text}")
    return 0


def shipped() -> list[str]:
    return sorted(p.stem for p in SHIPPED_CONFIGS.glob("*.json"))


def read_config(name: str) -> str:
    """A path, or the name of a shipped config; refuses files larger than a config can be."""
    path = Path(name)
    if not path.is_file() and (SHIPPED_CONFIGS / f"{name}.json").is_file():
        path = SHIPPED_CONFIGS / f"{name}.json"
    if path.stat().st_size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path.name} is {path.stat().st_size:,} bytes; a config.json is a few kB")
    return path.read_text(encoding="utf-8", errors="replace")


if __name__ == "__main__":
    raise SystemExit(main())
