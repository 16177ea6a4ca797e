"""The render stage: run every template of the project for one environment.

templates/values/kuberay-operator.jsonnet  -> the operator chart's Helm values (one map; a `.yaml.j2` is read too)
templates/objects/*.{jsonnet,j2}           -> Kubernetes objects (each template returns a list of documents)
templates/lib/                             -> libraries the templates import; never rendered on their own
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..charts import crds_ahead, vendored
from ..charts.helm_template import TemplateRequest, start_ahead, template_chart
from ..charts.package import Chart
from ..diagnostics.problems import KrcError, Location, Problem
from ..engines import SUFFIXES, engine_for, engine_of_suffix
from ..engines.jsonnet import JsonnetEngine
from ..environment.layering import merge_values
from ..environment.model import Environment
from ..k8s.names import file_name_problem
from ..k8s.objects import ObjectKey, RenderedObject, key_of
from ..project.paths import Project

# The values are data: a Jsonnet template builds them and the dumper writes them. A Jinja2 template is accepted
# for projects that have one, but then its text is YAML pasted together, so krc ships the Jsonnet one.
VALUES_TEMPLATES = (Path("values") / "kuberay-operator.jsonnet", Path("values") / "kuberay-operator.yaml.j2")
OBJECTS_DIR = "objects"
# Every rendered object names the environment item it came from, so findings can point at the file:line.
SOURCE_ANNOTATION = "krc.dev/source"


@dataclass(frozen=True)
class Render:
    """One environment compiled in memory: what its templates made from it and its pinned chart."""

    environment: Environment
    chart: Chart
    helm_values: dict[str, Any]
    objects: tuple[RenderedObject, ...]
    findings: tuple[Problem, ...] = ()  # schema and lint findings below error level (errors stop the pipeline)
    # what `helm template` makes of the pinned chart with helm_values, as the operator Application deploys it
    chart_objects: tuple[RenderedObject, ...] = ()


def template_context(env: Environment, chart: Chart) -> dict[str, Any]:
    """What every template sees: the resolved environment and facts about the pinned chart."""
    return {
        "env": env.data,
        "environment": env.name,
        "chart": {"name": chart.name, "version": chart.version, "appVersion": chart.app_version,
                  "defaults": chart.values, "kinds": sorted(c.kind for c in chart.crds)},
    }


@dataclass(frozen=True)
class ObjectTemplate:
    """A template under templates/objects/ and its name in messages."""

    path: Path
    shown: str

    @property
    def suffix(self) -> str:
        return self.path.suffix


def object_templates(project: Project) -> tuple[ObjectTemplate, ...]:
    """The object templates, sorted; KrcError for a link leading outside templates/ (before any engine starts).
    Listed once per batch of environments (rendered_together), not twice per environment: resolving each path
    walks every component with a system call."""
    folder = project.templates_dir / OBJECTS_DIR
    found = sorted(p for p in folder.rglob("*") if p.suffix in SUFFIXES and (p.is_file() or p.is_symlink()))
    templates = project.templates_dir.resolve()
    listed = tuple(ObjectTemplate(path, project.relative(path)) for path in found)
    for template in listed:  # the engines read through the same confinement
        if not template.path.resolve().is_relative_to(templates):
            raise KrcError(f"{template.shown} leads outside templates/; krc reads only files inside the project: "
                           "replace the link with the file", Location(template.shown))
    return listed


def _check_object(doc: Any, shown: str) -> None:
    if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
        raise KrcError("a template returned something that is not a Kubernetes object (apiVersion and kind "
                       "are required); return a list of objects", Location(shown))
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict) or not metadata.get("name"):
        raise KrcError(f"a {doc['kind']} without metadata.name; give it a name", Location(shown))
    # kind and name become file names under rendered/ and golden/
    problem = file_name_problem(doc["kind"], metadata["name"], metadata.get("namespace"))
    if problem:
        raise KrcError(f"{problem}; fix the template or the environment value it reads", Location(shown))


def _located(env: Environment, doc: dict[str, Any]) -> Location | None:
    source = ((doc.get("metadata") or {}).get("annotations") or {}).get(SOURCE_ANNOTATION)
    if not source:
        return None
    try:
        return env.location_of(env.resolve_dotted(source))
    except KrcError:
        return None


def _values_template(project: Project) -> Path:
    templates = project.templates_dir
    values_template = next((templates / t for t in VALUES_TEMPLATES if (templates / t).exists()), None)
    if values_template is None:
        raise KrcError(f"missing templates/{VALUES_TEMPLATES[0].as_posix()}: it renders the operator's Helm values")
    return values_template


def _helm_values(project: Project, env: Environment, values_template: Path, docs: list[Any]) -> dict[str, Any]:
    if len(docs) != 1 or not isinstance(docs[0], dict):
        raise KrcError("the values template must render exactly one YAML map",
                       Location(project.relative(values_template)))
    values: dict[str, Any] = merge_values(docs[0], (env.data.get("operator") or {}).get("values") or {},
                                          null_for_absent=True)
    return values


# What a batch rendered of one environment: the values template's documents ("values") and, per object template
# engine (".jsonnet"), each template's documents.
Prepared = dict[str, list[list[Any]]]


def render_environment(project: Project, env: Environment, chart: Chart, prepared: Prepared | None = None,
                       templates: tuple[ObjectTemplate, ...] | None = None) -> Render:
    """`prepared`: what a batch (prepare_templates) already rendered of this environment; `templates`: the
    object templates as object_templates listed them for the batch."""
    prepared = prepared or {}
    crds_ahead.send(chart.crds)  # compiled by the engine while this renders and the validation is loaded
    context = template_context(env, chart)
    templates_dir = project.templates_dir
    values_template = _values_template(project)
    [docs] = prepared.get("values") or engine_for(values_template).render([values_template], templates_dir, context,
                                                                         project.root)
    helm_values = _helm_values(project, env, values_template, docs)
    # object templates see the final Helm values (the Argo CD operator Application carries them inline)
    context = {**context, "helmValues": helm_values}

    objects: list[RenderedObject] = []
    listed = object_templates(project) if templates is None else templates
    for suffix in SUFFIXES:
        batch = [t for t in listed if t.suffix == suffix]
        rendered = prepared.get(suffix) if batch else []
        if rendered is None:
            rendered = engine_of_suffix(suffix).render([t.path for t in batch], templates_dir, context, project.root)
        for template, documents in zip(batch, rendered, strict=True):
            for doc in documents:
                _check_object(doc, template.shown)
                objects.append(RenderedObject(doc, template.shown, _located(env, doc)))
    _check_unique(objects)
    return Render(env, chart, helm_values, tuple(objects),
                  chart_objects=chart_objects(project, env, chart, helm_values))


# Environments per Jsonnet run of prepare_templates: go-jsonnet's memory grows with a run's batch (a run of 25
# environments, a lint job's, held three times the heap of a run of 5 in every compiling process), while
# parsing the templates once per 5 environments instead of once per 25 costs no measurable CPU.
JSONNET_BATCH = 5


def prepare_templates(project: Project, pairs: list[tuple[Environment, Chart]],
                      templates: tuple[ObjectTemplate, ...] | None = None) -> list[Prepared]:
    """The Jsonnet templates of many environments evaluated together, JSONNET_BATCH at a time: one engine run for
    the values of those and one for their objects (templates and libraries parsed once), for render_environment
    to take: the same results as its own runs. An environment gets nothing where a run failed:
    render_environment then evaluates its templates itself, so its error is exactly the one its own run
    reports."""
    return [prepared for start in range(0, len(pairs), JSONNET_BATCH)
            for prepared in _prepare_together(project, pairs[start:start + JSONNET_BATCH], templates)]


def _prepare_together(project: Project, pairs: list[tuple[Environment, Chart]],
                      templates: tuple[ObjectTemplate, ...] | None) -> list[Prepared]:
    prepared: list[Prepared] = [{} for _ in pairs]
    jsonnet = engine_of_suffix(".jsonnet")
    try:
        values_template = _values_template(project)
        listed = object_templates(project) if templates is None else templates
        objects = [t.path for t in listed if t.suffix == ".jsonnet"]
    except KrcError:
        return prepared
    if len(pairs) < 2 or values_template.suffix != ".jsonnet" or not isinstance(jsonnet, JsonnetEngine):
        return prepared
    templates_dir = project.templates_dir
    contexts = [template_context(env, chart) for env, chart in pairs]
    values = jsonnet.render_many([values_template], templates_dir, contexts, project.root)
    if values is None:
        return prepared
    try:
        helm_values = [_helm_values(project, env, values_template, docs[0])
                       for (env, _), docs in zip(pairs, values, strict=True)]
    except KrcError:
        return prepared
    _start_helm_ahead(project, pairs, helm_values)
    rendered = jsonnet.render_many(objects, templates_dir, [{**context, "helmValues": helm}
                                                        for context, helm in zip(contexts, helm_values, strict=True)],
                                   project.root)
    for index, mine in enumerate(prepared):
        mine["values"] = values[index]
        if rendered is not None:
            mine[".jsonnet"] = rendered[index]
    return prepared


# Argo CD's default when the destination cluster's version is unknown to krc; environments set kubernetesVersion
DEFAULT_KUBERNETES_VERSION = "1.33"
CHART_TEMPLATE = "helm template"


def kubernetes_version(env: Environment) -> str:
    return str(env.data.get("kubernetesVersion") or DEFAULT_KUBERNETES_VERSION)


def template_request(project: Project, env: Environment, chart: Chart, helm_values: dict[str, Any]) -> TemplateRequest:
    """How krc runs `helm template` for the environment: chart archive and digest, release, namespace, Kubernetes
    version and values."""
    operator = env.data.get("operator") or {}
    digest = vendored.read_lock(project.vendor_dir).get((chart.name, chart.version), "")
    return TemplateRequest(vendored.archive_path(project.vendor_dir, chart.name, chart.version), digest,
                           chart.name, str(operator.get("namespace") or "default"), kubernetes_version(env),
                           helm_values)


def _start_helm_ahead(project: Project, pairs: list[tuple[Environment, Chart]],
                      helm_values: list[dict[str, Any]]) -> None:
    """The engine renders the batch's charts on its own threads while the environments compile (helm_template)."""
    try:
        requests = [template_request(project, env, chart, values)
                    for (env, chart), values in zip(pairs, helm_values, strict=True)]
    except KrcError:
        return  # each environment's own run reports it
    start_ahead(requests)
    charts = {chart.name + chart.version: chart for _, chart in pairs}
    crds_ahead.send(crd for chart in charts.values() for crd in chart.crds)


def chart_objects(project: Project, env: Environment, chart: Chart,
                  helm_values: dict[str, Any]) -> tuple[RenderedObject, ...]:
    """The operator chart rendered by the engine's Helm with the release name and namespace of the operator
    Application (templates/objects/argocd.jsonnet: release = chart name), CRDs skipped (the CRDs app owns them).
    Each object points at operator.values (else operator) of the environment: that is what shapes it."""
    where = _operator_location(env)
    request = template_request(project, env, chart, helm_values)
    shown = f"{CHART_TEMPLATE} {chart.name} {chart.version}"
    return tuple(RenderedObject(doc, shown, where) for doc in template_chart(request, where))


def _operator_location(env: Environment) -> Location:
    return (env.location_of(("operator", "values")) or env.location_of(("operator",))
            or Location(env.files[-1] if env.files else f"environments/{env.name}.yaml"))


def _check_unique(objects: list[RenderedObject]) -> None:
    seen: dict[ObjectKey, RenderedObject] = {}
    problems = []
    for obj in objects:
        key = key_of(obj.document)
        if key in seen:
            problems.append(Problem(f"{obj.ref} is rendered twice ({seen[key].template} and {obj.template}); "
                                    "rename one of them", obj.location or Location(obj.template)))
        seen[key] = obj
    if problems:
        raise KrcError(problems)
