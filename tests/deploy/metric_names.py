#!/usr/bin/env python3
"""Fails when the Grafana dashboard or the Prometheus rules name a newsflow metric that the
running binary does not expose.

usage: metric_names.py [--series] METRICS_TEXT DASHBOARD_JSON RULES_YAML...

--series: a metric counts only when it has at least one sample line, not only its # TYPE (a
freshly started daemon must already carry a series of every metric the panels and rules query).
"""
import json
import re
import sys

import yaml

NAME = re.compile(r"\bnewsflow_[a-zA-Z0-9_]+")


def exposed(path, series_only=False):
    names = set()
    for line in open(path, encoding="utf-8"):
        if line.startswith("# TYPE "):
            if not series_only:
                names.add(line.split()[2])
        elif line.strip() and not line.startswith("#"):
            names.add(re.split(r"[{ ]", line, 1)[0])
    return names


def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)


def dashboard_exprs(path):
    dash = json.load(open(path, encoding="utf-8"))
    for panel in dash.get("panels", []):
        for target in panel.get("targets", []):
            yield f"panel '{panel.get('title')}'", target.get("expr", "")
    for var in dash.get("templating", {}).get("list", []):
        for s in strings(var.get("query", "")):
            yield f"variable '{var.get('name')}'", s


def rule_exprs(path):
    for group in yaml.safe_load(open(path, encoding="utf-8"))["groups"]:
        for rule in group["rules"]:
            yield f"rule '{rule.get('alert') or rule.get('record')}'", rule["expr"]


def main():
    args = sys.argv[1:]
    series_only = args[:1] == ["--series"]
    if series_only:
        args = args[1:]
    metrics, dashboard, rules = args[0], args[1], args[2:]
    have = exposed(metrics, series_only)
    used, missing = set(), []
    sources = list(dashboard_exprs(dashboard))
    for r in rules:
        sources += list(rule_exprs(r))
    for where, expr in sources:
        for name in NAME.findall(expr):
            used.add(name)
            if name not in have:
                missing.append(f"{where} uses {name}")
    print(f"{len(have)} metric names exposed, {len(used)} used by {len(sources)} expressions")
    for m in missing:
        print("MISSING:", m)
    unused = sorted(n for n in have if n.startswith("newsflow_") and n not in used
                    and n + "_bucket" not in used
                    and not re.search(r"_(bucket|sum|count)$", n))
    if unused:
        print("exposed but on no panel or rule:", ", ".join(unused))
    sys.exit(1 if missing or not used else 0)


if __name__ == "__main__":
    main()
