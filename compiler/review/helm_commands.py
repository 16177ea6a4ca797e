"""For people who deploy with plain Helm: the ordered commands of a chart change, and what a downgrade means.

Helm installs a chart's crds/ only on first install and never upgrades, downgrades or deletes them, so the CRDs go
first, server-side (KubeRay's exceed the client-side annotation limit), then the release, with the values file
krc rendered and `--skip-crds`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..output import layout


@dataclass(frozen=True)
class Release:
    """The operator's Helm release as the operator Application deploys it."""

    name: str  # the release name (the chart's name, as in templates/objects/argocd.jsonnet)
    namespace: str
    repository: str


def _numbers(version: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", version.split("-")[0])[:3])


def is_downgrade(old_version: str, new_version: str) -> bool:
    return _numbers(new_version) < _numbers(old_version)


def upgrade_commands(environment: str, chart: str, version: str, release: Release) -> list[str]:
    rendered = f"rendered/{environment}"
    return [f"krc render {environment}",
            f"kubectl apply --server-side --force-conflicts -f {rendered}/crds/",
            (f"helm upgrade --install {release.name} {chart} --repo {release.repository} --version {version} "
             f"--namespace {release.namespace} --skip-crds --values {rendered}/{layout.VALUES_FILE}")]


def downgrade_statements(chart: str, old_version: str, new_version: str) -> list[str]:
    if not is_downgrade(old_version, new_version):
        return []
    return [(f"This is a DOWNGRADE of {chart} ({old_version} -> {new_version}). Helm won't downgrade CRDs: "
             f"`helm upgrade` leaves the {old_version} CRDs in place, and the {new_version} operator then runs "
             f"against them. Applying the {new_version} CRDs (as below, or the Argo CD CRDs application) removes "
             f"the fields only {old_version} knows: the API server prunes them from stored objects at their next "
             "write, silently, and a CRD only the newer chart has stays in the cluster (Helm never deletes one).")]
