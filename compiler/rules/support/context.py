"""The record every rule reads: the objects under lint and the facts about where they will run."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, cast

from ...charts.package import Chart
from ...diagnostics import fieldpath
from ...diagnostics.problems import Location, Problem
from ...documents.yamlio import Path, PositionLookup
from ...k8s.destinations import Destination
from ...k8s.objects import object_ref
from .autoscaler_view import AutoscalerView

Mode = Literal["paths", "environment"]
T = TypeVar("T")


@dataclass(frozen=True)
class LintObject:
    """One manifest: the document rules see (defaulted once schemas run), and where it came from."""

    document: dict[str, Any]
    location: Location  # where the object starts (paths) or the environment item that produced it
    positions: PositionLookup | None = None  # every field's place, when loaded from a file

    @property
    def kind(self) -> str:
        return str(self.document.get("kind") or "")

    @property
    def api_version(self) -> str:
        return str(self.document.get("apiVersion") or "")

    @property
    def metadata(self) -> dict[str, Any]:
        return mapping(self.document.get("metadata"))

    @property
    def name(self) -> str:
        return str(self.metadata.get("name") or self.metadata.get("generateName") or "")

    @property
    def namespace(self) -> str:
        return str(self.metadata.get("namespace") or "")

    @property
    def ref(self) -> str:
        """Kind/namespace/name, or Kind/name without a namespace (as schema validation writes it)."""
        return object_ref(self.document)

    @property
    def is_kuberay(self) -> bool:
        return self.api_version.startswith("ray.io/") and self.kind in KUBERAY_KINDS

    def locate(self, path: Path) -> Location:
        """The closest recorded place for a field: itself, else its nearest parent, else the object."""
        found = fieldpath.nearest_location(self.positions, tuple(path)) if self.positions else None
        return found or self.location

    def problem(self, message: str, path: Path = ()) -> Problem:
        """A finding about this object; the runner fills in the rule id and severity."""
        return Problem(message, self.locate(path), object=self.ref, segments=tuple(path))


KUBERAY_KINDS = frozenset({"RayCluster", "RayJob", "RayService", "RayCronJob"})


@dataclass(frozen=True)
class RuleSetting:
    """An environment's decision about one rule: turned off or given a lower severity, and why."""

    severity: str  # off | info | warning | error
    reason: str
    location: Location | None = None


@dataclass(frozen=True)
class LintContext:
    objects: tuple[LintObject, ...]
    operator_version: str
    feature_gates: dict[str, bool]
    chart: Chart | None = None
    mode: Mode = "paths"
    # more CRDs to validate objects the chart's CRDs do not define (e.g. Argo CD's, given with --argocd-crds)
    extra_crds: str | None = None
    # environment mode only
    environment_name: str = ""
    environment: dict[str, Any] = field(default_factory=dict)
    helm_values: dict[str, Any] | None = None
    production: bool = False
    cpu_only: bool = False
    rule_settings: dict[str, RuleSetting] = field(default_factory=dict)
    # where an environment path (tuple of keys) was written; None when unknown
    locate_environment: Callable[[Path], Location | None] | None = None
    environment_file: str = ""
    # where the project's other environments deploy, those this one's findings read: the ones it shares a cluster
    # namespace with and those its layers are (environment/destination-collision; PeerIndex.relevant_to)
    peer_destinations: tuple[Destination, ...] = ()
    environment_accepted: bool = False  # golden/<env>/ holds this environment's accepted render
    # the operator chart's objects as `helm template` renders them (environment mode), and the Kubernetes minor
    # version of the destination cluster
    chart_objects: tuple[LintObject, ...] = ()
    kubernetes_version: str = ""
    # what Ray's autoscaling-config generator made of each cluster spec; filled by the pipeline (None: not run)
    autoscaler: AutoscalerView | None = None
    # what `derived` computed from this context, no part of its value (neither compared nor shown): made empty by
    # every __init__, so a context made by dataclasses.replace never sees another's
    _derived: dict[Callable[[LintContext], Any], Any] = field(default_factory=dict, init=False, repr=False,
                                                             compare=False)

    def gate(self, name: str) -> bool:
        return self.feature_gates.get(name, False)

    def derived(self, compute: Callable[[LintContext], T]) -> T:
        """compute(self), computed once: what many rules read of the context (its KubeRay objects, their cluster
        specs and groups). Sound because a context and its objects never change once made: the rules only read
        them, and what `compute` makes (tuples of views over the documents) is only read too."""
        if compute in self._derived:
            return cast(T, self._derived[compute])
        value = self._derived[compute] = compute(self)
        return value

    def kuberay_objects(self) -> tuple[LintObject, ...]:
        return self.derived(_kuberay_objects)

    def environment_location(self, path: Path) -> Location:
        """Where a value of the environment was set, falling back to its nearest parent, then the file."""
        found = fieldpath.nearest(self.locate_environment, tuple(path)) if self.locate_environment else None
        return found or Location(self.environment_file or f"environment {self.environment_name}")

    def environment_problem(self, message: str, path: Path = ()) -> Problem:
        """A finding about the environment as a whole (Helm values, gates, namespaces)."""
        return Problem(message, self.environment_location(path),
                       object=f"environment/{self.environment_name}", segments=tuple(path))


def _kuberay_objects(context: LintContext) -> tuple[LintObject, ...]:
    return tuple(o for o in context.objects if o.is_kuberay)


def mapping(value: Any) -> dict[str, Any]:
    """A field that should hold a mapping, as the rules read it: {} when it is absent or of another type (schema
    validation reports the type)."""
    return value if isinstance(value, dict) else {}


def get_in(data: Any, path: Path, default: Any = None) -> Any:
    """data[path[0]][path[1]]... or default when any step is missing or of the wrong type."""
    for step in path:
        if isinstance(data, dict) and not isinstance(step, int):
            data = data.get(step)
        elif isinstance(data, list) and isinstance(step, int) and -len(data) <= step < len(data):
            data = data[step]
        else:
            return default
        if data is None:
            return default
    return data
