"""`python -m core.train RECIPE`: train one of the shipped checkpoints (the recipes: core/train/recipes/)."""

from __future__ import annotations

import argparse
import importlib

import core.train

RECIPES = ("gpt2", "mini_k3", "qwen35_mini", "recall")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=core.train.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("recipe", choices=RECIPES)
    args, rest = parser.parse_known_args(argv)
    importlib.import_module(f"core.train.recipes.{args.recipe}").main(rest)


if __name__ == "__main__":
    main()
