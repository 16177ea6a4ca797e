"""Views over KubeRay objects: every Ray cluster spec and RayJob spec, wherever it is nested.

A RayCluster spec appears in a RayCluster, a RayJob (`rayClusterSpec`), a RayService (`rayClusterConfig`) and a
RayCronJob (`jobTemplate.rayClusterSpec`); a RayJob spec also appears in a RayCronJob (`jobTemplate`). The operator
runs the same checks on each, so rules iterate these views rather than kinds. Readers return the value the
operator would see after the API server's CRD defaults, so rules behave the same on raw and defaulted YAML.

Each context's views are made once (LintContext.derived) and each view's readers are computed once
(cached_property): some forty rules walk the same specs. Lists of views are tuples; the mappings they hand out
are the documents' own data (or made from it, as `env`), which no rule changes.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...documents.yamlio import Path
from ...k8s.ray_cluster_specs import autoscaled, cluster_specs
from .context import LintContext, LintObject, get_in, mapping


@dataclass(frozen=True)
class GroupView:
    """The head group or one worker group of a cluster spec."""

    name: str  # "Head" for the head group, as the operator words it, else the groupName
    spec: dict[str, Any]
    path: Path
    is_head: bool

    @cached_property
    def template_spec(self) -> dict[str, Any]:
        return mapping(get_in(self.spec, ("template", "spec"), {}))

    @cached_property
    def containers(self) -> tuple[dict[str, Any], ...]:
        value = self.template_spec.get("containers")
        return tuple(c for c in value if isinstance(c, dict)) if isinstance(value, list) else ()

    @cached_property
    def container(self) -> dict[str, Any]:
        """The Ray container: the operator always takes the first one."""
        containers = self.containers
        return containers[0] if containers else {}

    @property
    def container_path(self) -> Path:
        return self.path + ("template", "spec", "containers", 0)

    @cached_property
    def ray_start_params(self) -> dict[str, Any]:
        return mapping(self.spec.get("rayStartParams"))

    @cached_property
    def env(self) -> dict[str, dict[str, Any]]:
        return env_by_name(self.container.get("env"))

    @property
    def replica_bounds(self) -> tuple[int | None, int | None]:
        """A worker group's minReplicas and maxReplicas as the rules read them (defaulted_int)."""
        return defaulted_int(self.spec.get("minReplicas")), defaulted_int(self.spec.get("maxReplicas"))

    def env_index(self, name: str) -> int:
        for i, entry in enumerate(self.container.get("env") or []):
            if isinstance(entry, dict) and entry.get("name") == name:
                return i
        return 0


@dataclass(frozen=True)
class ClusterView:
    obj: LintObject
    spec: dict[str, Any]
    path: Path  # where the cluster spec sits in the document
    owner: str  # kind of the object holding it
    annotations: dict[str, Any]  # the annotations the operator passes to cluster validation

    @cached_property
    def head(self) -> GroupView:
        return GroupView("Head", mapping(self.spec.get("headGroupSpec")), self.path + ("headGroupSpec",), True)

    @cached_property
    def workers(self) -> tuple[GroupView, ...]:
        groups = self.spec.get("workerGroupSpecs")
        if not isinstance(groups, list):
            return ()
        return tuple(GroupView(str(g.get("groupName") or ""), g, self.path + ("workerGroupSpecs", i), False)
                     for i, g in enumerate(groups) if isinstance(g, dict))

    @cached_property
    def groups(self) -> tuple[GroupView, ...]:
        return (self.head, *self.workers)

    @property
    def autoscaling(self) -> bool:
        return autoscaled(self.spec)

    @property
    def autoscaler_options(self) -> dict[str, Any]:
        return mapping(self.spec.get("autoscalerOptions"))

    @property
    def autoscaler_v2(self) -> bool:
        """v2 as the operator decides it for per-group options: explicit version or the head env switch."""
        if self.autoscaler_options.get("version") == "v2":
            return True
        value = get_in(self.head.env, ("RAY_enable_autoscaler_v2", "value"))
        return str(value) in ("1", "true")

    @property
    def ray_version(self) -> str:
        return str(self.spec.get("rayVersion") or "")

    def at(self, *steps: Any) -> Path:
        return self.path + tuple(steps)


@dataclass(frozen=True)
class JobView:
    obj: LintObject
    spec: dict[str, Any]
    path: Path
    in_cron: bool  # a RayCronJob's jobTemplate

    @cached_property
    def cluster(self) -> ClusterView | None:
        spec = self.spec.get("rayClusterSpec")
        if not isinstance(spec, dict):
            return None
        annotations = {} if self.in_cron else self.obj.metadata.get("annotations") or {}
        return ClusterView(self.obj, spec, self.path + ("rayClusterSpec",), self.obj.kind, annotations)

    @property
    def cluster_selector(self) -> dict[str, Any]:
        return mapping(self.spec.get("clusterSelector"))

    @property
    def submission_mode(self) -> str:
        return str(self.spec.get("submissionMode") or "K8sJobMode")

    @property
    def shutdown(self) -> bool:
        return self.spec.get("shutdownAfterJobFinishes") is True

    def at(self, *steps: Any) -> Path:
        return self.path + tuple(steps)


def env_by_name(env: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(env, list):
        return {}
    return {str(e["name"]): e for e in env if isinstance(e, dict) and "name" in e}


def _specs(context: LintContext) -> tuple[tuple[LintObject, str, dict[str, Any]], ...]:
    return tuple((obj, obj.kind, spec) for obj in context.kuberay_objects()
                 if isinstance(spec := obj.document.get("spec"), dict))


def objects_of(context: LintContext, *kinds: str) -> Iterator[tuple[LintObject, dict[str, Any]]]:
    """The objects of these kinds that have a spec mapping, with it."""
    return ((obj, spec) for obj, kind, spec in context.derived(_specs) if kind in kinds)


def _job_views(context: LintContext) -> tuple[JobView, ...]:
    views: list[JobView] = []
    for obj, spec in objects_of(context, "RayJob", "RayCronJob"):
        if obj.kind == "RayJob":
            views.append(JobView(obj, spec, ("spec",), False))
        elif isinstance(spec.get("jobTemplate"), dict):
            views.append(JobView(obj, spec["jobTemplate"], ("spec", "jobTemplate"), True))
    return tuple(views)


def job_views(context: LintContext) -> Iterator[JobView]:
    return iter(context.derived(_job_views))


def _cluster_views(context: LintContext) -> tuple[ClusterView, ...]:
    views: list[ClusterView] = []
    for obj in context.kuberay_objects():
        # a RayCronJob's annotations are its own, not those of the RayJobs it creates
        annotations = {} if obj.kind == "RayCronJob" else obj.metadata.get("annotations") or {}
        views.extend(ClusterView(obj, spec, path, obj.kind, annotations) for path, spec in cluster_specs(obj.document))
    return tuple(views)


def cluster_views(context: LintContext) -> Iterator[ClusterView]:
    """Every RayCluster spec of the context's objects, nested ones included (k8s.ray_cluster_specs)."""
    return iter(context.derived(_cluster_views))


def _all_groups(context: LintContext) -> tuple[tuple[ClusterView, GroupView], ...]:
    return tuple((cluster, group) for cluster in cluster_views(context) for group in cluster.groups)


def _worker_groups(context: LintContext) -> tuple[tuple[ClusterView, GroupView], ...]:
    return tuple((cluster, group) for cluster in cluster_views(context) for group in cluster.workers)


def cluster_groups(context: LintContext, workers_only: bool = False) -> Iterator[tuple[ClusterView, GroupView]]:
    """Every group of every cluster spec (the head first, unless workers_only), with its cluster: the loop of
    the rules that judge one group at a time."""
    return iter(context.derived(_worker_groups if workers_only else _all_groups))


def defaulted_int(value: Any) -> int | None:
    """A field the CRD defaults, as the rules see it: schema validation has applied the default, so the value is
    there; None when it is not a number (schema validation reports that). Rules never re-apply CRD defaults."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def int_or(value: Any, default: int) -> int:
    """A number as the operator reads it; absent (or not a number) means the CRD default."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    return int(value)
