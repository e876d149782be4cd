"""The measured device's name as the page shows it, in the reader's language.

A run stores the device as the benchmark names it, in English ('NVIDIA H200', 'CPU (x86_64, 2 threads)':
core.gpu.timing.bench_env.BenchEnv.device_label); a GPU's product name stays as it is, a CPU's line is
translated where it is shown ('CPU（x86_64、2スレッド）')."""

from __future__ import annotations

import re

from core.i18n import ngettext

_CPU = re.compile(r"CPU \((?P<cpu>.+), (?P<n>\d+) threads?\)")


def shown_device(name: str) -> str:
    """'CPU (x86_64, 1 thread)' in the reader's words; any other device name as it is."""
    found = _CPU.fullmatch(name)
    if found is None:
        return name
    n = int(found["n"])
    return ngettext("CPU ({cpu}, {n} thread)", "CPU ({cpu}, {n} threads)", n).format(cpu=found["cpu"], n=n)
