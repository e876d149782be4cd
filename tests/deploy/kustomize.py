"""Render a kustomization the way `kubectl kustomize` does, for the few features deploy/kubernetes uses.

There is no kubectl here, so the tests build the base and the overlays themselves: `resources`
(files, or folders holding a kustomization), `patches` given by `path` (strategic-merge patches,
matched to an object by apiVersion group, kind and name) and `images` (a new name, tag or digest for
a container image). Anything else in a kustomization is refused rather than silently skipped, so a
feature added to the manifests needs a line here first.
https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/
Strategic merge: maps merge key by key, a null deletes, lists with a merge key (containers and env
by name, volumeMounts by mountPath, …) merge item by item, other lists are replaced whole.
https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

FIELDS = {"apiVersion", "kind", "resources", "patches", "images"}
MERGE_KEYS = {  # list field → the key its items merge by (the Kubernetes API's patchMergeKey)
    "containers": "name",
    "initContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
}
UNSUPPORTED_LISTS = {"ports"}  # merged by containerPort or port depending on the object: not done here


def load(path: Path) -> list[dict]:
    """Every YAML document in a file (empty ones skipped)."""
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc]


def merge(base, patch, field: str = ""):
    """`patch` applied to `base` as a strategic-merge patch; neither is changed."""
    if isinstance(patch, dict) and isinstance(base, dict):
        if any(key.startswith("$") for key in patch):
            raise NotImplementedError(f"patch directives are not supported: {sorted(patch)}")
        out = copy.deepcopy(base)
        for key, value in patch.items():
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = merge(out[key], value, key)
            else:
                out[key] = copy.deepcopy(value)
        return out
    if isinstance(patch, list) and isinstance(base, list):
        if field in UNSUPPORTED_LISTS:
            raise NotImplementedError(f"patching a `{field}` list is not supported here")
        key = MERGE_KEYS.get(field)
        if key is None:
            return copy.deepcopy(patch)
        out = copy.deepcopy(base)
        for item in patch:
            match = next((i for i, old in enumerate(out) if old.get(key) == item.get(key)), None)
            if match is None:
                out.append(copy.deepcopy(item))
            else:
                out[match] = merge(out[match], item)
        return out
    return copy.deepcopy(patch)


def _group(api_version: str) -> str:
    return api_version.rpartition("/")[0]  # "apps/v1" → "apps", "v1" → "" (the core group)


def _apply_patch(objects: list[dict], patch: dict) -> list[dict]:
    ident = (_group(patch["apiVersion"]), patch["kind"], patch["metadata"]["name"])
    hits = [
        n
        for n, o in enumerate(objects)
        if (_group(o["apiVersion"]), o["kind"], o["metadata"]["name"]) == ident
    ]
    if len(hits) != 1:
        raise ValueError(f"a patch must match exactly one object, {ident} matches {len(hits)}")
    out = list(objects)
    out[hits[0]] = merge(objects[hits[0]], patch)
    return out


def _split(image: str) -> tuple[str, str]:
    """ "registry:5000/name:tag" → ("registry:5000/name", "tag"); no tag → (image, "")."""
    name, sep, tag = image.rpartition(":")
    return (name, tag) if sep and "/" not in tag else (image, "")


def _set_images(objects: list[dict], images: list[dict]) -> list[dict]:
    out = copy.deepcopy(objects)
    for obj in out:
        for container in obj.get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
            name, tag = _split(container["image"])
            for image in (i for i in images if i["name"] == name):
                new, tag = image.get("newName", name), image.get("newTag", tag)
                if "digest" in image:
                    container["image"] = f"{new}@{image['digest']}"
                else:
                    container["image"] = f"{new}:{tag}" if tag else new
    return out


def build(folder: Path) -> list[dict]:
    """The objects the kustomization in `folder` renders to, in kustomize's resource order."""
    spec = load(folder / "kustomization.yaml")[0]
    unknown = set(spec) - FIELDS
    if unknown:
        raise NotImplementedError(f"{folder}: kustomization fields not rendered here: {sorted(unknown)}")
    objects: list[dict] = []
    for entry in spec.get("resources", []):
        path = (folder / entry).resolve()
        objects += build(path) if path.is_dir() else load(path)
    for entry in spec.get("patches", []):
        if set(entry) != {"path"}:
            raise NotImplementedError(f"{folder}: only `patches: - path: FILE` is rendered here, got {entry}")
        for patch in load(folder / entry["path"]):
            objects = _apply_patch(objects, patch)
    if spec.get("images"):
        objects = _set_images(objects, spec["images"])
    return objects
