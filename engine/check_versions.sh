#!/usr/bin/env bash
# The module resolves to the versions krc promises (issue: Helm at Argo CD 3.5.1's version, one k8s minor, and
# the cel-go that minor was released with: newer cel-go changes CEL cost figures and has broken k8s.io/apiserver).
set -euo pipefail
cd "$(dirname "$0")"
want=(
  "helm.sh/helm/v4 v4.2.1"
  "k8s.io/apiextensions-apiserver v0.36.1"
  "k8s.io/apiserver v0.36.1"
  "k8s.io/apimachinery v0.36.1"
  "k8s.io/client-go v0.36.1"
  "github.com/google/cel-go v0.26.0"
  "cuelang.org/go v0.17.1"
)
status=0
for line in "${want[@]}"; do
  module=${line% *}
  got=$(go list -m "$module" 2>/dev/null || echo "$module missing")
  if [ "$got" != "$line" ]; then echo "engine/go.mod resolves $got, want $line" >&2; status=1; fi
done
[ $status -eq 0 ] && echo "engine: resolved versions as pinned (${#want[@]} modules)"
exit $status
