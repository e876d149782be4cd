"""Reproducible training of the tiny checkpoints shipped in `assets/`.

    python -m core.train gpt2        # the tiny GPT-2 of the GPT-2 and KV cache pages
    python -m core.train mini_k3     # the miniature Kimi K3 of the Kimi K3 and Experts lessons
    python -m core.train qwen35_mini # the Qwen3.5 miniature of the A real hybrid lesson
    python -m core.train recall      # the MQAR sweep of the Collisions lesson

Each target is a recipe module in `core/train/recipes/` with `main(argv)`; `loop.py` holds the one
training loop they share, `corpus.py` the English text the byte models read (`python -m core.train.corpus`).
"""
