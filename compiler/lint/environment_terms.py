"""Findings on an environment in the words of its file: rules speak KubeRay (they also lint plain manifests), but
whoever fixes an environment edits `cluster:` and `workerGroups:`, not `rayClusterSpec` and `workerGroupSpecs`."""
from __future__ import annotations

import dataclasses
import re

from ..diagnostics.problems import Problem

# KubeRay spec field -> the environment key that renders it (see templates/lib/kuberay.libsonnet)
_TERMS = {
    "enableInTreeAutoscaling: true": "autoscaling: {enabled: true}",
    "enableInTreeAutoscaling": "autoscaling.enabled",
    "rayClusterSpec": "cluster",
    "rayClusterConfig": "cluster",
    "workerGroupSpecs": "workerGroups",
    "headGroupSpec": "head",
    "runtimeEnvYAML": "runtimeEnv",
    "serveConfigV2": "serveConfig",
    "upgradeStrategy": "upgrade",
}
_PATTERN = re.compile("|".join(rf"(?<![\w.]){re.escape(term)}(?![\w])" for term in _TERMS))


def in_environment_terms(problem: Problem) -> Problem:
    """The problem with KubeRay field names replaced by environment keys, in its message and help."""
    message = _PATTERN.sub(lambda m: _TERMS[m.group(0)], problem.message)
    help_text = _PATTERN.sub(lambda m: _TERMS[m.group(0)], problem.help)
    if message == problem.message and help_text == problem.help:
        return problem
    return dataclasses.replace(problem, message=message, help=help_text)
