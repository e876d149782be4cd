"""Finding released GPT-2 and Qwen3.5 weights on this machine, and fetching them on request.

    python -m core.models.fetch gpt2            # GPT-2 small, about 550 MB, into the HF cache
    python -m core.models.fetch gpt2-medium     # also gpt2-large, gpt2-xl
    python -m core.models.fetch qwen3.5-0.8b    # Qwen3.5 0.8B (a released hybrid), about 1.7 GB
    python -m core.models.fetch --list          # what is already here (no network)
    python -m core.models.fetch --check FOLDER  # can this folder be loaded? (one line either way)

Weights come from OpenAI's releases as Hugging Face hosts them (huggingface.co/openai-community/
gpt2 …) through `huggingface_hub`, into the reader's Hugging Face cache (HF_HOME / HF_HUB_CACHE
respected). Looking for them never touches the network (`local_files_only=True`); only
`download` does, and never when `HF_HUB_OFFLINE` is set. A folder named by the environment
variable COURSE_GPT2_PATH (any local GPT-2 checkpoint) is offered first; for Qwen3.5 the variable is
COURSE_QWEN35_PATH (the A real hybrid lesson). `local_checkpoints` lists GPT-2s only, `local_qwen35`
Qwen3.5s only, so each page's switch offers its own family.

On a machine without internet `huggingface_hub` retries each request five times with back-off
(20+ s before it gives up), so `download` first asks the Hub endpoint (HF_ENDPOINT respected)
one quick question, bounded at REACH_TIMEOUT_S, and answers in one line when nobody replies.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from core.i18n import _
from core.models.hf_tokenizer import CheckpointError

ENV_FOLDER = "COURSE_GPT2_PATH"
ENV_QWEN35 = "COURSE_QWEN35_PATH"
FILES = ("config.json", "tokenizer.json", "model.safetensors")
WEIGHTS, INDEX = "model.safetensors", "model.safetensors.index.json"  # one file, or shards an index names
REACH_TIMEOUT_S = 3.0  # the whole reachability check, DNS included
GATEWAY_ERRORS = (502, 503, 504)
ETAG_TIMEOUT_S = 10  # each file's metadata request once the Hub answered (HF_HUB_ETAG_TIMEOUT wins)


@dataclass(frozen=True)
class Release:
    """One released GPT-2 size: where it lives on the Hub and how much a download of it is."""

    key: str
    repo_id: str
    label: str
    params: str
    weights_bytes: int  # model.safetensors (or all its shards)
    other_bytes: int = 0  # config.json + tokenizer.json; 0 = GPT-2's (CONFIG_BYTES + TOKENIZER_BYTES)
    env_folder: str = ENV_FOLDER  # the environment variable that names a local folder of this family

    @property
    def download_bytes(self) -> int:
        """The three files `download` fetches: config.json + tokenizer.json + model.safetensors."""
        return (self.other_bytes or CONFIG_BYTES + TOKENIZER_BYTES) + self.weights_bytes


# Sizes of the files on huggingface.co/openai-community/gpt2{,-medium,-large,-xl}, main branch:
# - gpt2: model.safetensors 548,105,171 bytes (sha256 248dfc39…), config.json 665 bytes: the exact
#   sizes public projects pin for revision 607a30d7… in their file manifests; the Hub shows 548 MB.
# - gpt2-medium: model.safetensors 1,519,984,962 bytes (sha256 fc5a354a…), from a public file
#   manifest of the snapshot; the Hub shows 1.52 GB (…/gpt2-medium/blob/refs%2Fpr%2F5/model.safetensors).
# - gpt2-large, gpt2-xl: no exact byte count found. The Hub shows 3.25 GB (sha256 5f47f3e1…,
#   …/gpt2-large/tree/212095d) and 6.43 GB (sha256 0f8b28eb…, …/gpt2-xl/blob/refs%2Fpr%2F5/
#   model.safetensors). Their float32 tensors alone are 3,247,115,264 and 6,431,771,392 bytes
#   (parameters plus each block's 1024² causal-mask buffer, × 4 bytes: the count that gives small's
#   548,090,880 data bytes exactly); the JSON header adds tens of kB, estimated below.
# - tokenizer.json: 1,355,256 bytes (sha256 8414cab9…), the same file in the small, medium and XL
#   manifests; config.json is 665 to some 700 bytes, counted as 1 kB.
CONFIG_BYTES = 1_000
TOKENIZER_BYTES = 1_355_256
RELEASES = {
    r.key: r
    for r in (
        Release("gpt2", "openai-community/gpt2", "GPT-2 small", "124M", 548_105_171),
        Release("gpt2-medium", "openai-community/gpt2-medium", "GPT-2 medium", "355M", 1_519_984_962),
        Release("gpt2-large", "openai-community/gpt2-large", "GPT-2 large", "774M", 3_247_160_000),
        Release("gpt2-xl", "openai-community/gpt2-xl", "GPT-2 XL", "1.5B", 6_431_830_000),
    )
}


# Qwen3.5 0.8B (huggingface.co/Qwen/Qwen3.5-0.8B, Apache 2.0): released as the multimodal
# Qwen3_5ForConditionalGeneration in bf16. No exact byte count could be checked from here (the Hub is
# out of reach); the issue and public model pages give about 1.7 GB for its bf16 weights (some 0.85 B
# parameters, text and vision tower, × 2 bytes), counted as 1.70 GB, and its 248,320-token
# tokenizer.json as about 20 MB. So the size is shown as "about 1.7 GB" and no closer.
QWEN35_RELEASES = {
    r.key: r
    for r in (
        Release(
            "qwen3.5-0.8b", "Qwen/Qwen3.5-0.8B", "Qwen3.5 0.8B", "0.8B", 1_700_000_000, 20_000_000, ENV_QWEN35
        ),
    )
}
ALL_RELEASES = {**RELEASES, **QWEN35_RELEASES}


def approx_size(n_bytes: int) -> str:
    """A download size as a reader says it: 'about 550 MB', 'about 1.5 GB' (decimal units, as the
    Hub lists them); two significant figures, since the count is known to that and no better for
    every size."""
    if n_bytes < 995e6:
        return _("about {n} MB").format(n=f"{round(n_bytes / 1e7) * 10:,}")
    return _("about {n} GB").format(n=f"{n_bytes / 1e9:.1f}")


def is_offline() -> bool:
    """True when the reader asked for no network (HF_HUB_OFFLINE, read now, not at import)."""
    value = os.environ.get("HF_HUB_OFFLINE", "")
    if value.strip().upper() in ("1", "ON", "YES", "TRUE"):
        return True
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def find_cached(key: str = "gpt2", cache_dir: Path | str | None = None) -> Path | None:
    """The snapshot folder holding all of a release's files in the HF cache, or None (no network).
    The weights are one model.safetensors or, failing that, an index and every shard it names."""
    release = ALL_RELEASES[key]
    names = [*FILES[:2]]
    single = _cached(release.repo_id, WEIGHTS, cache_dir)
    if single is not None:
        names.append(WEIGHTS)
    else:
        index = _cached(release.repo_id, INDEX, cache_dir)
        shards = _shard_names(index) if index is not None else None
        if not shards:
            return None
        names += [INDEX, *shards]
    paths = [_cached(release.repo_id, name, cache_dir) for name in names]
    if any(path is None for path in paths):
        return None
    folders = {path.parent for path in paths}
    return folders.pop() if len(folders) == 1 else None


def _cached(repo_id: str, name: str, cache_dir) -> Path | None:
    """One file of a repo in the HF cache (never the network), or None."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return Path(hf_hub_download(repo_id, name, cache_dir=cache_dir, local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError):
        return None


def _shard_names(index: Path) -> list[str] | None:
    """The shard files a safetensors index names, or None when it is not one."""
    import json

    try:
        return sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


@dataclass(frozen=True)
class Found:
    """A GPT-2 or Qwen3.5 checkpoint on this machine that a page can offer."""

    key: str  # release key, or "local" for COURSE_GPT2_PATH / COURSE_QWEN35_PATH
    folder: Path

    @property
    def label(self) -> str:
        """How the checkpoint switch names it, in the reader's language (made when shown, never cached)."""
        if self.key == "local":
            return _("local checkpoint ({folder})").format(folder=self.folder.name)
        return _("{release}, real weights").format(release=ALL_RELEASES[self.key].label)


def local_checkpoints(cache_dir: Path | str | None = None, env: dict | None = None) -> list[Found]:
    """COURSE_GPT2_PATH (if set) and every release already in the HF cache, smallest first."""
    return _found(ENV_FOLDER, RELEASES, cache_dir, env)


def local_qwen35(cache_dir: Path | str | None = None, env: dict | None = None) -> list[Found]:
    """COURSE_QWEN35_PATH (if set) and every Qwen3.5 release already in the HF cache (no network)."""
    return _found(ENV_QWEN35, QWEN35_RELEASES, cache_dir, env)


def _found(variable: str, releases: dict, cache_dir: Path | str | None, env: dict | None) -> list[Found]:
    """The folder the environment `variable` names (if set), then each of `releases` already cached."""
    env = os.environ if env is None else env
    found = []
    if env.get(variable):
        folder = Path(env[variable]).expanduser()
        found.append(Found("local", folder))
    for key in releases:
        folder = find_cached(key, cache_dir)
        if folder is not None:
            found.append(Found(key, folder))
    return found


def fetch_command(key: str) -> str:
    """The command line that fetches a release on the reader's own machine (what public mode shows)."""
    return f"python -m core.models.fetch {key}"


def hub_endpoint() -> str:
    """The Hub's base URL, read now: HF_ENDPOINT (through huggingface_hub) or https://huggingface.co."""
    from huggingface_hub import constants

    return constants.ENDPOINT


def _ask(endpoint: str, timeout_s: float) -> str | None:
    """One HEAD request to the endpoint: None when it answered (a 404 from a mirror's front page is
    an answer), else why not, in a few words. A 502/503/504 counts as no answer: it is a proxy or
    gateway saying the Hub is out of its reach, and huggingface_hub would retry those for 20+ s.
    Proxies from the environment are used, as huggingface_hub does."""
    request = urllib.request.Request(endpoint, method="HEAD")
    try:
        urllib.request.urlopen(request, timeout=timeout_s).close()
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code} {error.reason}" if error.code in GATEWAY_ERRORS else None
    except urllib.error.URLError as error:
        return str(getattr(error, "reason", error))
    except (OSError, ValueError) as error:
        return str(error) or type(error).__name__
    return None


def unreachable_reason(endpoint: str, timeout_s: float = REACH_TIMEOUT_S) -> str | None:
    """None when the Hub endpoint answers within `timeout_s`, else a short reason. The request runs
    on a daemon thread so that a stalled name lookup (which no socket timeout bounds) cannot hold
    the caller — the page's Download button, the command line — past `timeout_s`."""
    outcome: list[str | None] = []
    worker = threading.Thread(target=lambda: outcome.append(_ask(endpoint, timeout_s)), daemon=True)
    worker.start()
    worker.join(timeout_s)
    if not outcome:
        return f"no answer within {timeout_s:g} s"
    return outcome[0]


def unreachable_message(endpoint: str, reason: str, key: str = "gpt2") -> str:
    """The one line a reader sees when the Hub is out of reach, with the way round it."""
    release = ALL_RELEASES[key]
    family = "Qwen3.5" if key in QWEN35_RELEASES else "GPT-2"
    host = urlsplit(endpoint).netloc or endpoint
    reason = " ".join(reason.split())[:80]
    return _(
        "{host} cannot be reached from this machine ({reason}); get the weights another way: copy a {family} "
        "folder ({files}) from a machine that has them and set {variable} to it"
    ).format(host=host, reason=reason, family=family, files=", ".join(FILES), variable=release.env_folder)


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
    when offline or when the Hub cannot be reached — no traceback for the reader, and within
    about REACH_TIMEOUT_S when nothing answers (nothing is written to the cache then).
    """
    if key not in ALL_RELEASES:
        raise CheckpointError(f"unknown release {key!r}; choose one of {', '.join(ALL_RELEASES)}")
    if is_offline():
        raise CheckpointError(
            _("HF_HUB_OFFLINE is set, so nothing is downloaded; unset it on a machine with internet")
        )
    endpoint = hub_endpoint()
    reason = unreachable_reason(endpoint)
    if reason is not None:
        raise CheckpointError(unreachable_message(endpoint, reason, key))
    release = ALL_RELEASES[key]
    folder = None
    for name in FILES[:2]:
        folder = _fetch(release, name, cache_dir, report).parent
    if key in RELEASES:  # GPT-2: always one model.safetensors
        return _fetch(release, WEIGHTS, cache_dir, report).parent
    try:
        return _fetch(release, WEIGHTS, cache_dir, report, missing_ok=True).parent
    except FileNotFoundError:  # a sharded release: the index, then every shard it names
        index = _fetch(release, INDEX, cache_dir, report)
        for shard in _shard_names(index) or ():
            _fetch(release, shard, cache_dir, report)
        return folder


def _fetch(release: Release, name: str, cache_dir, report, missing_ok: bool = False) -> Path:
    """One file of a release into the HF cache, progress to `report`; CheckpointError (one line) on
    any failure, FileNotFoundError for a file the repo lacks when `missing_ok`."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError

    tqdm_class = _progress_class(lambda done, total: report(name, done, total)) if report else None
    try:
        return Path(
            hf_hub_download(
                release.repo_id, name, cache_dir=cache_dir, tqdm_class=tqdm_class, etag_timeout=ETAG_TIMEOUT_S
            )
        )
    except EntryNotFoundError:
        if missing_ok:
            raise FileNotFoundError(name) from None
        raise CheckpointError(
            _("huggingface.co/{repo} has no {name}").format(repo=release.repo_id, name=name)
        ) from None
    except Exception as error:  # network, disk, permission: one line, never a traceback
        message = " ".join(str(error).split())[:160]
        raise CheckpointError(
            _("could not download {name} from huggingface.co/{repo}: {message}").format(
                name=name, repo=release.repo_id, message=message
            )
        ) from None


def check(folder: Path | str) -> int:
    """Load a folder as the pages would; print one line (what it is, or what is wrong)."""
    from core.models.hf_gpt2 import load_gpt2

    try:
        if _is_qwen35(folder):
            return _check_qwen35(folder)
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


def _is_qwen35(folder: Path | str) -> bool:
    """Whether a folder's config.json names a Qwen3.5 family (then --check loads it as one)."""
    from core.models import hf_folder
    from core.models.hf_qwen35 import SUPPORTED_FAMILIES

    try:
        return hf_folder.read_config(folder).get("model_type") in SUPPORTED_FAMILIES
    except CheckpointError:
        return False


def _check_qwen35(folder: Path | str) -> int:
    from core.models.qwen35 import load_qwen35

    loaded = load_qwen35(folder)
    c = loaded.config
    boards = c.layer_types.count("linear_attention")
    print(
        f"ok: {loaded.name}: Qwen3.5, {loaded.model.num_params():,} parameters, {len(c.layer_types)} layers "
        f"({boards} Gated DeltaNet, {len(c.layer_types) - boards} gated attention), width {c.hidden_size}, "
        f"{loaded.tokenizer.name}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("size", nargs="?", default="gpt2", choices=list(ALL_RELEASES))
    parser.add_argument("--list", action="store_true", help="show what is already on this machine")
    parser.add_argument("--cache-dir", default=None, help="Hugging Face cache folder (default: HF_HUB_CACHE)")
    parser.add_argument("--check", metavar="FOLDER", help="load a local GPT-2 or Qwen3.5 folder and report")
    args = parser.parse_args(argv)
    if args.check:
        return check(args.check)
    if args.list:
        found = local_checkpoints(args.cache_dir) + local_qwen35(args.cache_dir)
        for item in found:
            print(f"{item.label}: {item.folder}")
        if not found:
            print("no GPT-2 weights on this machine yet; fetch them with `python -m core.models.fetch gpt2`")
        return 0
    release = ALL_RELEASES[args.size]
    here = find_cached(args.size, args.cache_dir)
    if here is not None:
        print(f"{release.label} is already here: {here}")
        return 0
    print(
        f"{release.label} ({release.params} parameters): {approx_size(release.download_bytes)} from "
        f"{urlsplit(hub_endpoint()).netloc or hub_endpoint()}/{release.repo_id}"
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
