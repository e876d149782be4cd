"""The Kubernetes manifests (deploy/kubernetes/): valid against Kubernetes' own schemas, offline, and
saying what one course process per pod behind a sticky Ingress needs (README.md, "Past one machine").

No cluster and no kubectl here: tests/deploy/kustomize.py renders the base and the public overlay,
and `kubernetes-validate` (requirements-dev.txt) checks each object against the OpenAPI schemas it
ships, strict (an unknown field is an error). https://github.com/willthames/kubernetes-validate
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import kubernetes_validate
import pytest

from core import public
from deploy.nginx_conf import render
from tests.deploy.dockerfile import instructions
from tests.deploy.kustomize import build, merge

ROOT = Path(__file__).resolve().parents[2]
KUBERNETES = ROOT / "deploy" / "kubernetes"
VARIANTS = {"base": KUBERNETES / "base", "public": KUBERNETES / "overlays" / "public"}
INGRESS_NGINX = "nginx.ingress.kubernetes.io/"
HEALTH = "/_stcore/health"
DOCKERFILE = instructions((ROOT / "Dockerfile").read_text(encoding="utf-8"))
NGINX = render("/state", "127.0.0.1:8080", [8081, 8082])  # the one-host path's config


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def rendered(request) -> tuple[str, dict[str, dict]]:
    objects = build(VARIANTS[request.param])
    kinds = [o["kind"] for o in objects]
    assert len(kinds) == len(set(kinds)), kinds  # one of each: looked up by kind below
    return request.param, {o["kind"]: o for o in objects}


def _container(objects: dict[str, dict]) -> dict:
    containers = objects["Deployment"]["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1, "one course process per pod"
    return containers[0]


def _env(objects: dict[str, dict]) -> dict[str, str]:
    return {item["name"]: item.get("value") for item in _container(objects).get("env", [])}


def test_every_object_validates_against_kubernetes_own_schemas(rendered):
    _, objects = rendered
    version = kubernetes_validate.utils.latest_version()
    assert set(objects) == {"Deployment", "Service", "Ingress", "HorizontalPodAutoscaler"}
    for obj in objects.values():
        kubernetes_validate.validate(obj, version, strict=True)  # raises on an error


def test_the_validator_rejects_a_broken_object():
    deployment = next(o for o in build(VARIANTS["base"]) if o["kind"] == "Deployment")
    broken = merge(
        deployment, {"spec": {"template": {"spec": {"containers": [{"name": "course", "prots": []}]}}}}
    )
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, kubernetes_validate.utils.latest_version(), strict=True)


def test_the_loader_merges_lists_by_key_and_replaces_the_others():
    base = {"containers": [{"name": "a", "env": [{"name": "X", "value": "1"}], "args": ["p"]}], "keep": 1}
    patch = {"containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}], "args": ["q"]}], "keep": None}
    assert merge(base, patch) == {
        "containers": [
            {"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}], "args": ["q"]}
        ]
    }
    with pytest.raises(NotImplementedError):
        merge({"ports": [{"port": 1}]}, {"ports": [{"port": 2}]}, "ports")


def test_the_loader_sets_the_image_as_kustomize_edit_set_image_writes_it(tmp_path):
    base = os.path.relpath(VARIANTS["public"], tmp_path)
    (tmp_path / "kustomization.yaml").write_text(
        f"resources:\n  - {base}\nimages:\n  - name: gpt2-to-k3\n"
        "    newName: registry.example.org:5000/course/gpt2-to-k3\n    newTag: v1\n"
    )
    deployment = next(o for o in build(tmp_path) if o["kind"] == "Deployment")
    image = deployment["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.example.org:5000/course/gpt2-to-k3:v1"


def test_one_course_process_per_pod_on_one_core_as_the_image_runs_it(rendered):
    _, objects = rendered
    container = _container(objects)
    assert "command" not in container and "args" not in container  # the image's ENTRYPOINT: run.sh's
    resources = container["resources"]
    assert resources["requests"]["cpu"] == resources["limits"]["cpu"] == "1"
    assert _bytes(resources["requests"]["memory"]) <= _bytes(resources["limits"]["memory"])
    expose = next(argument for step, argument in DOCKERFILE if step == "EXPOSE")
    assert [p["containerPort"] for p in container["ports"]] == [int(expose)]
    assert "replicas" not in objects["Deployment"]["spec"]  # the autoscaler owns the count


def _bytes(quantity: str) -> int:
    number, unit = re.fullmatch(r"(\d+)([KMGT]i)?", quantity).groups()
    return int(number) * 1024 ** ("_KMGT".index(unit[0]) if unit else 0)


def test_readiness_liveness_and_startup_probes_ask_streamlit_s_health_route(rendered):
    _, objects = rendered
    container = _container(objects)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        get = container[probe]["httpGet"]
        assert get["path"] == HEALTH and get["port"] in ports, probe
    # a restart ends every session on the pod: liveness gives up later than readiness
    live, ready = container["livenessProbe"], container["readinessProbe"]
    assert (
        live["periodSeconds"] * live["failureThreshold"] > ready["periodSeconds"] * ready["failureThreshold"]
    )


def test_the_pod_runs_as_the_image_s_non_root_user(rendered):
    _, objects = rendered
    pod = objects["Deployment"]["spec"]["template"]["spec"]["securityContext"]
    user = [argument for step, argument in DOCKERFILE if step == "USER"][-1]
    assert pod["runAsNonRoot"] is True
    assert f"{pod['runAsUser']}:{pod['runAsGroup']}" == user
    assert _container(objects)["securityContext"]["allowPrivilegeEscalation"] is False


def test_the_service_and_the_ingress_reach_the_pods(rendered):
    _, objects = rendered
    labels = objects["Deployment"]["spec"]["template"]["metadata"]["labels"]
    assert objects["Deployment"]["spec"]["selector"]["matchLabels"].items() <= labels.items()
    service = objects["Service"]
    assert service["spec"]["selector"].items() <= labels.items()
    port_names = {p["name"] for p in _container(objects)["ports"]}
    assert all(p["targetPort"] in port_names for p in service["spec"]["ports"])
    for rule in objects["Ingress"]["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            backend = path["backend"]["service"]
            assert backend["name"] == service["metadata"]["name"]
            assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}


def test_the_ingress_is_sticky_by_cookie_and_keeps_websockets_as_the_one_host_nginx_does(rendered):
    _, objects = rendered
    ingress = objects["Ingress"]
    notes = {k.removeprefix(INGRESS_NGINX): v for k, v in ingress["metadata"]["annotations"].items()}
    assert ingress["spec"]["ingressClassName"] == "nginx"
    assert notes["affinity"] == "cookie"
    assert notes["affinity-mode"] == "persistent"  # "balanced" moves live sessions when pods are added
    assert f"{notes['session-cookie-name']}=" in NGINX  # the one-host nginx's cookie, course_backend
    assert notes["proxy-read-timeout"] == notes["proxy-send-timeout"] == "3600"
    assert "proxy_read_timeout 1h;" in NGINX and "proxy_send_timeout 1h;" in NGINX
    assert notes["proxy-buffering"] == "off"
    assert f"client_max_body_size {notes['proxy-body-size']};" in NGINX


def test_every_host_the_ingress_answers_is_one_streamlit_allows(rendered):
    name, objects = rendered
    allowed = _env(objects)["STREAMLIT_SERVER_ALLOWED_HOSTS"].split()
    ingress = objects["Ingress"]["spec"]
    hosts = {rule["host"] for rule in ingress["rules"]}
    assert hosts and hosts <= set(allowed), "Streamlit would refuse these readers' websockets"
    assert "*" not in allowed
    if name == "public":
        assert {h for tls in ingress["tls"] for h in tls["hosts"]} == hosts
        annotations = objects["Ingress"]["metadata"]["annotations"]
        assert annotations[INGRESS_NGINX + "session-cookie-secure"] == "true"


def test_public_mode_only_in_the_public_overlay(rendered, monkeypatch):
    name, objects = rendered
    value = _env(objects).get(public.ENV_VAR)
    if value is None:
        monkeypatch.delenv(public.ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(public.ENV_VAR, value)
    assert public.public_mode() == (name == "public")


def test_the_autoscaler_scales_the_deployment_on_cpu_and_slowly_down(rendered):
    _, objects = rendered
    hpa = objects["HorizontalPodAutoscaler"]
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", objects["Deployment"]["metadata"]["name"])
    (metric,) = hpa["spec"]["metrics"]
    assert metric["type"] == "Resource" and metric["resource"]["name"] == "cpu"
    assert metric["resource"]["target"]["type"] == "Utilization"
    assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
    assert hpa["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] >= 600
