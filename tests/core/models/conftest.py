"""Fixtures the fetch tests share: no test reaches the network."""

from __future__ import annotations

import huggingface_hub
import pytest


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to download fails the test (a lookup with `local_files_only` still reads the cache)."""

    def refuse(*args, **kwargs):
        if not kwargs.get("local_files_only"):
            raise AssertionError("a network download was attempted")
        return real(*args, **kwargs)

    real = huggingface_hub.hf_hub_download
    monkeypatch.setattr(huggingface_hub, "hf_hub_download", refuse)
