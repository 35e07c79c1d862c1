#!/usr/bin/env python3
"""Validates the rendered Kubernetes manifests offline and against the binary.

usage: check_kubernetes.py NEWSFLOW_BINARY BASE_RENDERED.yaml PODMONITOR_RENDERED.yaml

Structure: the fields each kind requires, with their types; selectors that select the pod
template; ports, probes and volumes that refer to things that exist. Consistency with the
binary: the ConfigMap's config passes `newsflow check-config`, its http.listen port is the
container port, the grace period exceeds its drain limit, and the daemon, started with that
config, answers on every path the probes and scrape settings name.
"""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import yaml

problems = []


def check(cond, msg):
    if not cond:
        problems.append(msg)
    return cond


def need(obj, path, typ, where):
    node = obj
    for key in path.split("."):
        if not isinstance(node, dict) or key not in node:
            problems.append(f"{where}: missing {path}")
            return None
        node = node[key]
    if not isinstance(node, typ):
        problems.append(f"{where}: {path} must be {typ.__name__}, is {type(node).__name__}")
        return None
    return node


DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")
API = {"ConfigMap": "v1", "Service": "v1", "Deployment": "apps/v1",
       "PodDisruptionBudget": "policy/v1", "PodMonitor": "monitoring.coreos.com/v1",
       "NetworkPolicy": "networking.k8s.io/v1"}


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def validate(docs, label):
    by_kind = {}
    for d in docs:
        where = f"{label}: {d.get('kind')}/{d.get('metadata', {}).get('name')}"
        kind = need(d, "kind", str, where)
        check(d.get("apiVersion") == API.get(kind), f"{where}: apiVersion {d.get('apiVersion')}")
        name = need(d, "metadata.name", str, where)
        if name:
            check(DNS1123.match(name) and len(name) <= 63, f"{where}: bad name {name}")
        by_kind.setdefault(kind, []).append(d)
    for kind in ("ConfigMap", "Service", "Deployment", "PodDisruptionBudget"):
        check(len(by_kind.get(kind, [])) == 1, f"{label}: expected one {kind}")
    if problems:
        return None
    dep = by_kind["Deployment"][0]
    where = f"{label}: Deployment"
    sel = need(dep, "spec.selector.matchLabels", dict, where) or {}
    tmpl_labels = need(dep, "spec.template.metadata.labels", dict, where) or {}
    check(selects(sel, tmpl_labels), f"{where}: selector does not select the pod template")
    check(dep["spec"].get("replicas", 1) == 1, f"{where}: one consumer holds the window")
    pod = need(dep, "spec.template.spec", dict, where) or {}
    containers = need(pod, "containers", list, where) or []
    check(len(containers) == 1, f"{where}: one container")
    c = containers[0]
    need(c, "name", str, where)
    need(c, "image", str, where)
    ports = {p.get("name"): p for p in need(c, "ports", list, where) or []}
    for p in ports.values():
        check(isinstance(p.get("containerPort"), int) and 0 < p["containerPort"] < 65536,
              f"{where}: containerPort {p.get('containerPort')}")
    probes = {}
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        pr = need(c, probe, dict, where) or {}
        path = need(pr, "httpGet.path", str, f"{where} {probe}")
        port = pr.get("httpGet", {}).get("port")
        check(port in ports or isinstance(port, int), f"{where} {probe}: port {port} is not a container port")
        probes[probe] = path
    check(probes.get("livenessProbe") == "/healthz", f"{where}: liveness must not depend on Kafka (/healthz)")
    check(probes.get("readinessProbe") == "/readyz", f"{where}: readiness on /readyz")
    for section in ("requests", "limits"):
        for res, q in (need(c, f"resources.{section}", dict, where) or {}).items():
            check(QUANTITY.match(str(q)), f"{where}: {section}.{res} = {q}")
    check("memory" in c.get("resources", {}).get("requests", {}), f"{where}: no memory request")
    psc = pod.get("securityContext", {})
    csc = c.get("securityContext", {})
    check(psc.get("runAsNonRoot") is True and psc.get("runAsUser", 0) != 0, f"{where}: must run as non-root")
    check(csc.get("allowPrivilegeEscalation") is False, f"{where}: allowPrivilegeEscalation")
    check(csc.get("readOnlyRootFilesystem") is True, f"{where}: readOnlyRootFilesystem")
    check("ALL" in csc.get("capabilities", {}).get("drop", []), f"{where}: capabilities not dropped")
    volumes = {v.get("name"): v for v in pod.get("volumes", [])}
    for m in c.get("volumeMounts", []):
        check(m.get("name") in volumes, f"{where}: mount of unknown volume {m.get('name')}")
    cm = by_kind["ConfigMap"][0]
    # A managed Kafka's password comes from a Secret; the ConfigMap holds none.
    env = {e.get("name"): e for e in c.get("env", [])}
    password = env.get("NEWSFLOW_KAFKA__CLIENT__SASL_PASSWORD", {})
    check("secretKeyRef" in password.get("valueFrom", {}),
          f"{where}: NEWSFLOW_KAFKA__CLIENT__SASL_PASSWORD must come from a Secret")
    config_text = "\n".join(str(v) for v in cm.get("data", {}).values())
    check(not re.search(r"^\s*[\w.]*(password|secret)[\w.]*\s*:", config_text, re.M | re.I),
          f"{label}: a password or secret in the ConfigMap")
    cm_vol = [v for v in volumes.values() if "configMap" in v]
    check(cm_vol and cm_vol[0]["configMap"]["name"] == cm["metadata"]["name"],
          f"{where}: config volume does not name the generated ConfigMap")
    svc = by_kind["Service"][0]
    check(selects(svc["spec"].get("selector", {}), tmpl_labels), f"{label}: Service selects no pod")
    for sp in svc["spec"].get("ports", []):
        check(sp.get("targetPort") in ports, f"{label}: Service targetPort {sp.get('targetPort')}")
    pdb = by_kind["PodDisruptionBudget"][0]
    check(selects(pdb["spec"].get("selector", {}).get("matchLabels", {}), tmpl_labels),
          f"{label}: PodDisruptionBudget selects no pod")
    for np in by_kind.get("NetworkPolicy", []):
        # The ops port is open only to what the policy admits: it must select the pods and
        # name a port they have.
        check(selects(np["spec"]["podSelector"].get("matchLabels", {}), tmpl_labels),
              f"{label}: NetworkPolicy selects no pod")
        for rule in np["spec"].get("ingress", []):
            check(bool(rule.get("from")), f"{label}: NetworkPolicy admits everyone")
            for p in rule.get("ports", []):
                check(p.get("port") in ports, f"{label}: NetworkPolicy port {p.get('port')}")
    check(label != "base" or len(by_kind.get("NetworkPolicy", [])) == 1,
          f"{label}: expected one NetworkPolicy limiting the ops port")
    for pm in by_kind.get("PodMonitor", []):
        check(selects(pm["spec"]["selector"]["matchLabels"], tmpl_labels), f"{label}: PodMonitor selects no pod")
        for ep in pm["spec"]["podMetricsEndpoints"]:
            check(ep.get("port") in ports, f"{label}: PodMonitor port {ep.get('port')}")
    return dep, cm, ports, probes


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def main():
    binary, base, podmonitor = sys.argv[1:4]
    base_docs = [d for d in yaml.safe_load_all(open(base)) if d]
    pm_docs = [d for d in yaml.safe_load_all(open(podmonitor)) if d]
    found = validate(base_docs, "base")
    validate(pm_docs, "podmonitor")
    check(any(d["kind"] == "PodMonitor" for d in pm_docs), "podmonitor: no PodMonitor")
    if not found or problems:
        return report()
    dep, cm, ports, probes = found
    pod = dep["spec"]["template"]
    config_text = cm["data"]["newsflow.yaml"]
    config = yaml.safe_load(config_text)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "newsflow.yaml")
        open(path, "w").write(config_text)
        r = subprocess.run([binary, "check-config", path], capture_output=True, text=True)
        check(r.returncode == 0, f"ConfigMap config fails check-config: {r.stdout}{r.stderr}")
        listen = config.get("http", {}).get("listen", "127.0.0.1:9464")
        port = int(listen.rsplit(":", 1)[1])
        check(listen.startswith("0.0.0.0:"), f"http.listen {listen} is not reachable from the kubelet")
        check(port in [p["containerPort"] for p in ports.values()],
              f"http.listen port {port} is not a container port")
        ann = pod["metadata"].get("annotations", {})
        check(ann.get("prometheus.io/port") == str(port), "prometheus.io/port is not the http port")
        drain = config.get("kafka", {}).get("drain_timeout_ms", 20000) / 1000
        grace = pod["spec"].get("terminationGracePeriodSeconds", 30)
        check(grace >= drain + 10, f"terminationGracePeriodSeconds {grace} leaves no margin over "
              f"the {drain:.0f} s drain")

        # The binary with this config (embedded Kafka instead of the cluster's brokers).
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
        s.close()
        env = dict(os.environ, NEWSFLOW_KAFKA__BROKERS="", NEWSFLOW_KAFKA__EMBEDDED_PARTITIONS="2",
                   NEWSFLOW_HTTP__LISTEN=f"127.0.0.1:{free}")
        proc = subprocess.Popen([binary, *dep["spec"]["template"]["spec"]["containers"][0]["args"][:1],
                                 "--config", path], env=env, stdout=subprocess.DEVNULL,
                                stderr=open(os.path.join(tmp, "run.log"), "w"))
        try:
            paths = set(probes.values()) | {ann.get("prometheus.io/path", "/metrics")}
            status = {}
            deadline = time.time() + 30
            while time.time() < deadline:
                status = {p: get(f"http://127.0.0.1:{free}{p}") for p in paths}
                if all(v == 200 for v in status.values()):
                    break
                time.sleep(0.2)
            for p, v in status.items():
                check(v == 200, f"the daemon answers {v} on {p}")
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    return report()


def report():
    for p in problems:
        print("PROBLEM:", p)
    if not problems:
        print("Kubernetes manifests: valid and consistent with the binary")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
