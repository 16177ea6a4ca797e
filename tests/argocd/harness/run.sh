#!/usr/bin/env bash
# Runs a go command (test or vet) on the harness with gitops-engine's pkg/sync extended by
# overlay/sync_order.go.overlay, the one way to call its unexported sync order (syncTasks.Sort).
# Go refuses overlays of files in the module cache, so the pinned gitops-engine module is copied, once, into
# the harness cache folder, and a go.mod there (this one, plus a replace to that copy) is used with -modfile.
# The copy's path never changes, so Go's build cache keeps what it compiled between runs.
# Usage: run.sh test [go test flags]   |   run.sh vet
set -euo pipefail
cd "$(dirname "$0")"
module=github.com/argoproj/argo-cd/gitops-engine
cache=${KRC_HARNESS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/krc-argocd-harness}
mkdir -p "$cache"
go mod download "$module"
source_dir=$(go list -m -f '{{if .Replace}}{{.Replace.Dir}}{{else}}{{.Dir}}{{end}}' "$module")
copy="$cache/$(basename "$source_dir")"
if [ ! -f "$copy/go.mod" ]; then
  rm -rf "$copy.partial"
  cp -r "$source_dir" "$copy.partial"
  chmod -R u+w "$copy.partial"
  mv "$copy.partial" "$copy"
fi
cp go.mod "$cache/go.mod"
cp go.sum "$cache/go.sum"
go mod edit -modfile="$cache/go.mod" -replace "$module=$copy"
printf '{"Replace":{"%s/pkg/sync/zz_krc_order.go":"%s/overlay/sync_order.go.overlay"}}\n' "$copy" "$PWD" \
  > "$cache/overlay.json"
command=$1
shift
exec go "$command" -modfile="$cache/go.mod" -overlay="$cache/overlay.json" -tags krcsync "$@" .
