"""Finding released GPT-2 weights on this machine, and fetching them on request.

    python -m core.models.fetch gpt2            # GPT-2 small, about 548 MB, into the HF cache
    python -m core.models.fetch gpt2-medium     # also gpt2-large, gpt2-xl
    python -m core.models.fetch --list          # what is already here (no network)
    python -m core.models.fetch --check FOLDER  # can this folder be loaded? (one line either way)

Weights come from OpenAI's releases as Hugging Face hosts them (huggingface.co/openai-community/
gpt2 …) through `huggingface_hub`, into the reader's Hugging Face cache (HF_HOME / HF_HUB_CACHE
respected). Looking for them never touches the network (`local_files_only=True`); only
`download` does, and never when `HF_HUB_OFFLINE` is set. A folder named by the environment
variable COURSE_GPT2_PATH (any local GPT-2 checkpoint) is offered first.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core.models.hf_tokenizer import CheckpointError

ENV_FOLDER = "COURSE_GPT2_PATH"
FILES = ("config.json", "tokenizer.json", "model.safetensors")


@dataclass(frozen=True)
class Release:
    """One released GPT-2 size: where it lives on the Hub and how big its weights file is."""

    key: str
    repo_id: str
    label: str
    params: str
    download_bytes: int  # config + tokenizer + model.safetensors, as listed on the Hub


# Sizes of model.safetensors (+ about 1.4 MB of config and tokenizer) from the file listings of
# huggingface.co/openai-community/gpt2{,-medium,-large,-xl}/tree/main.
RELEASES = {
    r.key: r
    for r in (
        Release("gpt2", "openai-community/gpt2", "GPT-2 small", "124M", 549_500_000),
        Release("gpt2-medium", "openai-community/gpt2-medium", "GPT-2 medium", "355M", 1_521_400_000),
        Release("gpt2-large", "openai-community/gpt2-large", "GPT-2 large", "774M", 3_248_600_000),
        Release("gpt2-xl", "openai-community/gpt2-xl", "GPT-2 XL", "1.5B", 6_433_200_000),
    )
}


def is_offline() -> bool:
    """True when the reader asked for no network (HF_HUB_OFFLINE, read now, not at import)."""
    value = os.environ.get("HF_HUB_OFFLINE", "")
    if value.strip().upper() in ("1", "ON", "YES", "TRUE"):
        return True
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def find_cached(key: str = "gpt2", cache_dir: Path | str | None = None) -> Path | None:
    """The snapshot folder holding all of a release's files in the HF cache, or None (no network)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    release = RELEASES[key]
    folders = set()
    for name in FILES:
        try:
            path = hf_hub_download(release.repo_id, name, cache_dir=cache_dir, local_files_only=True)
        except (LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError):
            return None
        folders.add(Path(path).parent)
    return folders.pop() if len(folders) == 1 else None


@dataclass(frozen=True)
class Found:
    """A GPT-2 checkpoint on this machine that a page can offer."""

    key: str  # release key, or "local" for COURSE_GPT2_PATH
    label: str
    folder: Path


def local_checkpoints(cache_dir: Path | str | None = None, env: dict | None = None) -> list[Found]:
    """COURSE_GPT2_PATH (if set) and every release already in the HF cache, smallest first."""
    env = os.environ if env is None else env
    found = []
    if env.get(ENV_FOLDER):
        folder = Path(env[ENV_FOLDER]).expanduser()
        found.append(Found("local", f"local checkpoint ({folder.name})", folder))
    for key, release in RELEASES.items():
        folder = find_cached(key, cache_dir)
        if folder is not None:
            found.append(Found(key, f"{release.label}, real weights", folder))
    return found


def _progress_class(report: Callable[[int, int], None]):
    """A tqdm subclass that hands (bytes done, bytes total) to `report` as the download runs."""
    from tqdm.auto import tqdm

    class Reporting(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs["disable"] = False
            kwargs["file"] = open(os.devnull, "w")  # noqa: SIM115 — closed in close()
            super().__init__(*args, **kwargs)

        def update(self, n=1):
            out = super().update(n)
            if self.total:
                report(int(self.n), int(self.total))
            return out

        def close(self):
            fp = self.fp
            super().close()
            fp.close()

    return Reporting


def download(
    key: str = "gpt2",
    cache_dir: Path | str | None = None,
    report: Callable[[str, int, int], None] | None = None,
) -> Path:
    """Fetch a release's three files into the HF cache; returns the snapshot folder.

    `report(file, done, total)` is called as bytes arrive. Raises CheckpointError (one line)
    when offline or when the Hub cannot be reached — no traceback for the reader.
    """
    if key not in RELEASES:
        raise CheckpointError(f"unknown GPT-2 size {key!r}; choose one of {', '.join(RELEASES)}")
    if is_offline():
        raise CheckpointError(
            "HF_HUB_OFFLINE is set, so nothing is downloaded; unset it on a machine with internet"
        )
    from huggingface_hub import hf_hub_download

    release = RELEASES[key]
    folder = None
    for name in FILES:
        tqdm_class = _progress_class(lambda done, total, n=name: report(n, done, total)) if report else None
        try:
            path = hf_hub_download(release.repo_id, name, cache_dir=cache_dir, tqdm_class=tqdm_class)
        except Exception as error:  # network, disk, permission: one line, never a traceback
            message = " ".join(str(error).split())[:160]
            raise CheckpointError(
                f"could not download {name} from huggingface.co/{release.repo_id}: {message}"
            ) from None
        folder = Path(path).parent
    return folder


def check(folder: Path | str) -> int:
    """Load a folder as the pages would; print one line (what it is, or what is wrong)."""
    from core.models.hf_gpt2 import load_gpt2

    try:
        loaded = load_gpt2(folder)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    c = loaded.config
    print(
        f"ok: {loaded.name}: {loaded.model.num_params():,} parameters, {c.n_layer} layers, "
        f"{c.n_head} heads, width {c.d_model}, {c.block_size}-token window, {loaded.tokenizer.name}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("size", nargs="?", default="gpt2", choices=list(RELEASES))
    parser.add_argument("--list", action="store_true", help="show what is already on this machine")
    parser.add_argument("--cache-dir", default=None, help="Hugging Face cache folder (default: HF_HUB_CACHE)")
    parser.add_argument("--check", metavar="FOLDER", help="load a local GPT-2 folder and report")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.check)
    if args.list:
        found = local_checkpoints(args.cache_dir)
        for item in found:
            print(f"{item.label}: {item.folder}")
        if not found:
            print("no GPT-2 weights on this machine yet; fetch them with `python -m core.models.fetch gpt2`")
        return 0
    release = RELEASES[args.size]
    here = find_cached(args.size, args.cache_dir)
    if here is not None:
        print(f"{release.label} is already here: {here}")
        return 0
    print(
        f"{release.label} ({release.params} parameters): about {release.download_bytes / 1e6:,.0f} MB from "
        f"huggingface.co/{release.repo_id}"
    )
    from tqdm.auto import tqdm

    bars: dict[str, tqdm] = {}

    def report(name: str, done: int, total: int) -> None:
        bar = bars.setdefault(name, tqdm(total=total, desc=name, unit="B", unit_scale=True))
        bar.update(done - bar.n)

    try:
        folder = download(args.size, args.cache_dir, report)
    except CheckpointError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    finally:
        for bar in bars.values():
            bar.close()
    print(f"done: {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
