#!/bin/sh
# The sidecar image's build steps, in one place: deploy/argocd/Dockerfile runs them inside its stages, and CI
# (.ci/run) runs the same steps on the machine itself, since there is no Docker daemon to build the image with.
#   image-steps.sh wheel SOURCE OUT    krc's wheel, its engine built in by setup.py (needs Go on PATH)
#   image-steps.sh install WHEELS      krc installed from that wheel, then checked: run from outside any
#                                      checkout, it must find the engine inside the installed package
# PIP and KRC name the pip and krc to use (CI: those of a scratch virtual environment).
set -eu
pip=${PIP:-pip}
krc=${KRC:-krc}
case "${1:-}" in
  wheel)
    "$pip" wheel --no-cache-dir --disable-pip-version-check --no-deps "$2" -w "$3"
    ;;
  install)
    "$pip" install --no-cache-dir --disable-pip-version-check "$2"/krc-*.whl
    versions=$(cd / && "$krc" --version)
    echo "$versions"
    echo "$versions" | grep -q '^engine .*/site-packages/compiler/native/bin/krc-engine ' || {
      echo "image-steps: the installed krc does not run the engine inside its package" >&2; exit 1; }
    echo "$versions" | grep -q '^Helm .*v4\.2\.1' || { echo "image-steps: the engine's Helm is not v4.2.1" >&2; exit 1; }
    ;;
  *)
    echo "usage: image-steps.sh wheel SOURCE OUT | install WHEELS" >&2
    exit 2
    ;;
esac
