"""One number for one thing: every page that names Kimi K3's active parameters prints the course's
count (`ModelSpec.active_params`), and NVIDIA's published figure only ever appears named as such."""

from __future__ import annotations

import pytest

from core.specs import SPECS
from core.units import format_params
from tests.app.story import rendered
from tests.app.test_kimi_k3 import needs_mini_k3

K3 = SPECS["kimi_k3"]


def _text(at) -> str:
    return "\n".join(e.value for e in (*at.markdown, *at.caption) if isinstance(e.value, str))


@needs_mini_k3
@pytest.mark.parametrize("slug", ["map", "kimi_k3", "experts"])
def test_every_page_prints_the_same_active_count(slug):
    text = _text(rendered(slug, "engineer", "en", timeout=300))  # the map's count is an engineers' note
    counted, published = format_params(K3.active_params()), format_params(K3.published_active)
    assert counted != published  # otherwise this test could not tell them apart
    assert counted in text, f"{slug} does not print K3's active count {counted}"
    for line in text.splitlines():
        if published in line:
            assert "NVIDIA" in line and counted in line, (
                f"{slug}: {published} shown without the count: {line}"
            )
