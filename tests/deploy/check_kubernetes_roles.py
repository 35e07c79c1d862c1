#!/usr/bin/env python3
"""Validates the rendered roles overlay (deploy/kubernetes/roles) offline and against the binary.

usage: check_kubernetes_roles.py NEWSFLOW_BINARY ROLES_RENDERED.yaml [--keda]

Two Deployments whose selectors pick their own pods and not the other's: the dedup role (two
replicas, owner and hot standby, RollingUpdate that never takes both down, the config naming a
dedup lease and a state changelog) and the extractors (RollingUpdate, scaled by an
autoscaling/v2 HorizontalPodAutoscaler); each role's pods covered by exactly one
PodDisruptionBudget that leaves the dedup role one pod; both run as non-root with a read-only root filesystem and mount the
generated ConfigMap, whose config passes `newsflow check-config` in either role. With --keda
(deploy/kubernetes/roles-keda): a KEDA ScaledObject instead of the HPA, its Kafka triggers on the
config's brokers, the extractors' consumer group and the input topics.
"""
import os
import subprocess
import sys
import tempfile

import yaml

problems = []


def check(cond, msg):
    if not cond:
        problems.append(msg)


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def main():
    binary, rendered = sys.argv[1:3]
    keda = "--keda" in sys.argv[3:]
    docs = [d for d in yaml.safe_load_all(open(rendered)) if d]
    by_kind = {}
    for d in docs:
        by_kind.setdefault(d["kind"], []).append(d)
    for kind, n in (("ConfigMap", 1), ("Service", 1), ("PodDisruptionBudget", 2),
                    ("Deployment", 2), ("HorizontalPodAutoscaler", 0 if keda else 1),
                    ("ScaledObject", 1 if keda else 0)):
        check(len(by_kind.get(kind, [])) == n, f"expected {n} {kind}")
    if problems:
        return report()
    deps = {}
    for d in by_kind["Deployment"]:
        args = d["spec"]["template"]["spec"]["containers"][0].get("args", [])
        role = args[args.index("--role") + 1] if "--role" in args else "all"
        deps[role] = d
    check(set(deps) == {"extract", "dedup"}, f"Deployments for roles {sorted(deps)}")
    if problems:
        return report()
    cm = by_kind["ConfigMap"][0]
    for role, d in deps.items():
        where = f"Deployment/{d['metadata']['name']} ({role})"
        sel = d["spec"]["selector"]["matchLabels"]
        check(selects(sel, d["spec"]["template"]["metadata"]["labels"]),
              f"{where}: selector does not select its pods")
        for other_role, other in deps.items():
            if other_role != role:
                check(not selects(sel, other["spec"]["template"]["metadata"]["labels"]),
                      f"{where}: selector also selects the {other_role} pods")
        pod = d["spec"]["template"]["spec"]
        c = pod["containers"][0]
        check(pod.get("securityContext", {}).get("runAsNonRoot") is True, f"{where}: root")
        check(c.get("securityContext", {}).get("readOnlyRootFilesystem") is True,
              f"{where}: writable root filesystem")
        vols = [v for v in pod.get("volumes", []) if "configMap" in v]
        check(vols and vols[0]["configMap"]["name"] == cm["metadata"]["name"],
              f"{where}: does not mount the generated ConfigMap")
    dedup, extract = deps["dedup"], deps["extract"]
    check(dedup["spec"].get("replicas", 1) == 2, "dedup: two replicas, an owner and a standby")
    strategy = dedup["spec"].get("strategy", {})
    check(strategy.get("type") == "RollingUpdate" and
          strategy.get("rollingUpdate", {}).get("maxUnavailable") == 0,
          "dedup: RollingUpdate with maxUnavailable 0, so a standby is always there")
    check(extract["spec"].get("strategy", {}).get("type") == "RollingUpdate",
          "extract: RollingUpdate keeps ingestion going through a rollout")
    config = yaml.safe_load(cm["data"]["newsflow.yaml"])
    if keda:
        so = by_kind["ScaledObject"][0]
        check(so["apiVersion"] == "keda.sh/v1alpha1", "ScaledObject: keda.sh/v1alpha1")
        check(so["spec"]["scaleTargetRef"].get("name") == extract["metadata"]["name"],
              "ScaledObject: does not scale the extractors")
        kafka = config.get("kafka", {})
        topics = config.get("topics", {})
        group = kafka.get("group_id", "newsflow") + "-extract"
        want = {topics.get("pages", "newsflow.pages"), topics.get("feeds", "newsflow.feeds")}
        seen = set()
        for t in so["spec"].get("triggers", []):
            m = t.get("metadata", {})
            check(t.get("type") == "kafka", "ScaledObject: a trigger that is not kafka")
            check(m.get("bootstrapServers") == kafka.get("brokers"),
                  f"ScaledObject: brokers {m.get('bootstrapServers')} are not the config's")
            check(m.get("consumerGroup") == group, f"ScaledObject: group {m.get('consumerGroup')}, "
                  f"the extractors' is {group}")
            seen.add(m.get("topic"))
        check(seen == want, f"ScaledObject: topics {sorted(seen)}, the inputs are {sorted(want)}")
    else:
        hpa = by_kind["HorizontalPodAutoscaler"][0]
        check(hpa["apiVersion"] == "autoscaling/v2", "HPA: autoscaling/v2")
        ref = hpa["spec"]["scaleTargetRef"]
        check(ref.get("kind") == "Deployment" and ref.get("name") == extract["metadata"]["name"],
              "HPA: does not scale the extractors")
        check(1 <= hpa["spec"].get("minReplicas", 1) <= hpa["spec"]["maxReplicas"],
              "HPA: replica bounds")
    topics = config.get("topics", {})
    check(topics.get("dedup_lease", "newsflow.dedup-lease") and
          topics.get("state", "newsflow.state"),
          "config: the standby needs topics.dedup_lease and topics.state")
    for role, d in deps.items():
        labels = d["spec"]["template"]["metadata"]["labels"]
        covering = [p for p in by_kind["PodDisruptionBudget"]
                    if selects(p["spec"]["selector"]["matchLabels"], labels)]
        check(len(covering) == 1, f"{len(covering)} PodDisruptionBudgets cover the {role} pods "
              "(evictions fail when more than one does)")
        if role == "dedup" and len(covering) == 1:
            spec = covering[0]["spec"]
            keeps = spec.get("minAvailable", 0) >= 1 or (
                spec.get("maxUnavailable", 1) < d["spec"].get("replicas", 1))
            check(keeps, "dedup PodDisruptionBudget lets a drain take owner and standby at once")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "newsflow.yaml")
        open(path, "w").write(cm["data"]["newsflow.yaml"])
        for role in deps:
            r = subprocess.run([binary, "check-config", path], capture_output=True, text=True,
                               env=dict(os.environ, NEWSFLOW_ROLE=role))
            check(r.returncode == 0, f"the config fails check-config as {role}: {r.stdout}{r.stderr}")
    return report()


def report():
    for p in problems:
        print("PROBLEM:", p)
    if not problems:
        print("Kubernetes roles overlay: valid and consistent with the binary")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
