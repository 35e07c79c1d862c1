#!/usr/bin/env bash
# Offline checks of the deployment files against the binary:
#   systemd: `systemd-analyze verify` and `systemd-analyze security` at 2.0 or better;
#   Prometheus: `promtool check rules` and the alert unit tests;
#   Kubernetes: `kubectl kustomize` renders both kustomizations and check_kubernetes.py
#     validates them and probes the binary on the paths and port they name;
#   Container: the runtime stage installs the package of every library the binary links.
set -euo pipefail
bin=${NEWSFLOW_BIN}; src=$1; work=$2/deploy_files
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in systemd-analyze promtool kubectl python3 readelf; do
  command -v $tool >/dev/null || fail "$tool is not installed (deploy/install-deps.sh installs it)"
done

# systemd: verify needs the ExecStart binary to exist; point it at this build.
sed "s|/usr/local/bin/newsflow|$bin|" "$src/deploy/systemd/newsflow.service" > "$work/newsflow.service"
systemd-analyze verify "$work/newsflow.service" || fail "systemd-analyze verify"
systemd-analyze security --offline=true "$work/newsflow.service" > "$work/security.txt" 2>&1 || true
score=$(grep -o 'Overall exposure level for newsflow.service: [0-9.]*' "$work/security.txt" | awk '{print $NF}')
echo "systemd-analyze security: exposure $score"
systemd-analyze security --offline=true --threshold=20 "$work/newsflow.service" > /dev/null 2>&1 \
  || fail "exposure $score is above 2.0"

# The per-role template unit, as the extract and dedup instances.
sed "s|/usr/local/bin/newsflow|$bin|" "$src/deploy/systemd/newsflow@.service" > "$work/newsflow@.service"
for role in extract dedup; do
  cp "$work/newsflow@.service" "$work/newsflow@$role.service"
  systemd-analyze verify "$work/newsflow@$role.service" || fail "systemd-analyze verify newsflow@$role"
  systemd-analyze security --offline=true --threshold=20 "$work/newsflow@$role.service" \
    > /dev/null 2>&1 || fail "newsflow@$role: exposure above 2.0"
done

# Prometheus rules.
promtool check rules "$src/deploy/monitoring/newsflow-alerts.yaml" || fail "promtool check rules"
(cd "$src/deploy/monitoring" && promtool test rules newsflow-alerts.test.yaml) || fail "alert unit tests"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$src/deploy/monitoring/newsflow-dashboard.json" \
  || fail "dashboard is not JSON"

# Kubernetes.
kubectl kustomize "$src/deploy/kubernetes/base" > "$work/base.yaml" 2> "$work/kustomize.err" \
  || { cat "$work/kustomize.err"; fail "kubectl kustomize base"; }
kubectl kustomize "$src/deploy/kubernetes/podmonitor" > "$work/podmonitor.yaml" 2>> "$work/kustomize.err" \
  || { cat "$work/kustomize.err"; fail "kubectl kustomize podmonitor"; }
python3 "$src/tests/deploy/check_kubernetes.py" "$bin" "$work/base.yaml" "$work/podmonitor.yaml" \
  || fail "Kubernetes manifests"
kubectl kustomize "$src/deploy/kubernetes/roles" > "$work/roles.yaml" 2>> "$work/kustomize.err" \
  || { cat "$work/kustomize.err"; fail "kubectl kustomize roles"; }
python3 "$src/tests/deploy/check_kubernetes_roles.py" "$bin" "$work/roles.yaml" \
  || fail "Kubernetes roles overlay"
kubectl kustomize "$src/deploy/kubernetes/roles-keda" > "$work/roles-keda.yaml" 2>> "$work/kustomize.err" \
  || { cat "$work/kustomize.err"; fail "kubectl kustomize roles-keda"; }
python3 "$src/tests/deploy/check_kubernetes_roles.py" "$bin" "$work/roles-keda.yaml" --keda \
  || fail "Kubernetes roles overlay with KEDA"

# Container: every NEEDED library's Debian package is installed by the runtime stage.
runtime=$(awk '/^FROM .*slim/ {on=1} on' "$src/deploy/Containerfile")
for so in $(readelf -d "$bin" | awk '/NEEDED/ {gsub(/[\[\]]/, "", $5); print $5}'); do
  # In debian:12-slim, or sanitizer runtimes of an ASan build (not what the image ships).
  case $so in libc.so.*|libm.so.*|libgcc_s.so.*|libstdc++.so.*|libasan.so.*|libubsan.so.*) continue ;; esac
  path=$(ldd "$bin" | awk -v s="$so" '$1 == s {print $3}')
  pkg=$(dpkg -S "$(basename "$(readlink -f "$path")")" 2>/dev/null | head -1 | cut -d: -f1)
  [ -n "$pkg" ] || fail "no Debian package owns $so"
  grep -qw -- "$pkg" <<< "$runtime" || fail "deploy/Containerfile's runtime stage lacks $pkg (for $so)"
done
grep -q '^USER [1-9]' <<< "$runtime" || fail "the runtime stage runs as root"
echo "1 passed, 0 failed"
