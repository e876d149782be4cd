"""The size of the CPU's last-level cache, read from Linux sysfs: a step that reads no more runs from it."""

from __future__ import annotations

from pathlib import Path


def last_level_cache_bytes(root: Path = Path("/sys/devices/system/cpu/cpu0/cache")) -> int | None:
    """The size of the CPU's outermost cache, from Linux sysfs (`index*/level`, `index*/size` such
    as '32768K'); None where the files are missing or unreadable (macOS, Windows, containers)."""
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    best: tuple[int, int] | None = None
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text().strip())
            kind = (index / "type").read_text().strip() if (index / "type").exists() else "Unified"
            size = (index / "size").read_text().strip()
            nbytes = int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)
        except (OSError, ValueError, IndexError):  # unreadable, or an empty or odd size
            continue
        if kind != "Instruction" and nbytes > 0 and (best is None or level > best[0]):
            best = (level, nbytes)
    return None if best is None else best[1]
