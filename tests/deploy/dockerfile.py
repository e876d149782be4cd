"""Read the Dockerfile and the .dockerignore without Docker (none on this machine or CI's).

`instructions` splits a Dockerfile into (INSTRUCTION, arguments) with continuation lines joined and
comments dropped; `exec_form` reads a JSON-array argument (ENTRYPOINT, CMD, HEALTHCHECK's CMD);
`env` collects ENV's key=value pairs; `ignored` answers whether .dockerignore keeps a path out of the
build context. Syntax: https://docs.docker.com/reference/dockerfile/#format and
https://docs.docker.com/build/concepts/context/#dockerignore-files
"""

from __future__ import annotations

import json
import re
import shlex


def instructions(text: str) -> list[tuple[str, str]]:
    """The Dockerfile's instructions in order, each as (upper-case name, its argument text)."""
    found, pending = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):  # a comment inside a continued instruction is dropped
            continue
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        name, _, rest = whole.partition(" ")
        found.append((name.upper(), rest.strip()))
    if pending:
        raise ValueError("the Dockerfile ends inside a continued line")
    return found


def exec_form(argument: str) -> list[str]:
    """A JSON-array argument as a list; a shell-form one is refused (it runs under /bin/sh -c)."""
    value = json.loads(argument)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"not the exec form: {argument}")
    return value


def env(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Every ENV key=value the Dockerfile sets, later ones winning."""
    out = {}
    for name, argument in pairs:
        if name == "ENV":
            for item in shlex.split(argument):
                key, sep, value = item.partition("=")
                if not sep:
                    raise ValueError(f"ENV without '=' (the old `ENV key value` form): {argument}")
                out[key] = value
    return out


def _pattern(pattern: str) -> re.Pattern[str]:
    """One .dockerignore pattern as a regex: `**` any number of folders, `*` and `?` within one."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def ignored(dockerignore: str, path: str) -> bool:
    """Whether `path` (relative to the context's root) stays out: a pattern that matches it or a
    folder above it excludes it, a later `!pattern` brings it back."""
    parts = path.strip("/").split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    out = False
    for line in dockerignore.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        regex = _pattern(line.lstrip("!").strip().strip("/"))
        if any(regex.fullmatch(prefix) for prefix in prefixes):
            out = not keep
    return out
