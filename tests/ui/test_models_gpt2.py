"""The GPT-2 and KV cache pages compute a run once per setting that changes it: at temperature 0 top-k and the seed
change nothing, so they share one key (ui.models.gpt2.run_key) — and the runs really are the same."""

from __future__ import annotations

from core.generation import Sampling, run_generation
from core.models.gpt2 import GPT2
from core.models.hf_tokenizer import ByteTokenizer
from ui.models.gpt2 import TINY, run_key

PROMPT = tuple(ByteTokenizer().prepare("The cache ", 256).ids)


def test_greedy_settings_share_one_key_and_one_run():
    model = GPT2.load()
    assert run_key(TINY, PROMPT, 20, 0.0, 7, 42) == run_key(TINY, PROMPT, 20, 0.0, 0, 0)
    a = run_generation(model, list(PROMPT), 20, sampling=Sampling(temperature=0.0, top_k=7, seed=42))
    b = run_generation(model, list(PROMPT), 20, sampling=Sampling(temperature=0.0, top_k=None, seed=0))
    assert a.new_ids == b.new_ids


def test_sampling_settings_keep_their_own_keys():
    assert run_key(TINY, PROMPT, 20, 0.8, 7, 42) != run_key(TINY, PROMPT, 20, 0.8, 0, 42)
    assert run_key(TINY, PROMPT, 20, 0.8, 7, 42) != run_key(TINY, PROMPT, 20, 0.8, 7, 1)
    assert run_key(TINY, PROMPT, 30, 0.0, 0, 0) != run_key(TINY, PROMPT, 20, 0.0, 0, 0)
