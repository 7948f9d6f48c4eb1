#!/usr/bin/env bash
# Validates every Kubernetes manifest in docs/deploy/ against the Kubernetes
# API schemas, strictly (an unknown or misspelt field fails), with the
# `kubernetes-validate` package from PyPI, which ships the schemas: no
# cluster is needed. The manifests use `lifecycle.preStop.sleep`, so they are
# checked against the oldest version that has it and against the newest the
# package knows.
#
# Installs the pinned package into a virtualenv under ~/.cache/moat-ci (once).
set -euo pipefail
cd "$(dirname "$0")/.."

version=1.37.0
venv="$HOME/.cache/moat-ci/kubernetes-validate-$version"
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet "kubernetes-validate==$version"
fi
validate() { "$venv/bin/kubernetes-validate" --strict --quiet "$@"; }

# The check itself must be able to fail: a manifest with a misspelt field is
# refused.
broken=$(mktemp --suffix=.yaml)
trap 'rm -f "$broken"' EXIT
cat >"$broken" <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: broken}
spec:
  selector: {matchLabels: {app: broken}}
  template:
    metadata: {labels: {app: broken}}
    spec:
      containers:
        - name: broken
          image: broken
          lifecycle: {preStop: {sleep: {second: 5}}}
YAML
if validate -k 1.30 "$broken" >/dev/null 2>&1; then
  echo "kubernetes-validate accepted a misspelt field: the check cannot fail" >&2
  exit 1
fi

manifests=(docs/deploy/*.yaml)
for k in 1.30 "${version%.*}"; do
  validate -k "$k" "${manifests[@]}"
  echo "  ${manifests[*]}: valid against Kubernetes $k (strict)"
done
