"""Fixtures shared by the page tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory):
    """A tiny GPT-2 checkpoint in Hugging Face's folder layout (real BPE tokenizer), made once per file."""
    pytest.importorskip("transformers")
    from bench.hf_tiny_gpt2 import make_checkpoint

    return make_checkpoint(tmp_path_factory.mktemp("hf") / "tiny")
