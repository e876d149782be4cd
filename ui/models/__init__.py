"""The released models a page can run: the switch, the one Download offer, the GPT-2 and Qwen3.5 loaders."""
