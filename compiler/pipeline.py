"""The whole pipeline, top to bottom: load environment -> validate -> render -> check -> write or compare.

Every command of the CLI calls one function here, and this is the only module that loops over environments:
the stages below it (lint, policy, review, argocd, crddiff, output) each work on one compiled environment or
one set of CRDs. Nothing here prints or exits; bad input raises KrcError.
"""
from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import argocd, crddiff, inventory, output, review, scaffold, yamlio
from . import explain as explaining
from .argocd.validation import crds_path, environment_problems
from .autoscaler import AutoscalerView, Batch, autoscaler_views, valid_ray_version
from .charts import vendor
from .environment.model import Environment, load_environment
from .k8s.secrets import redact_at
from .lint import (
    LintContext,
    LintObject,
    environment_context,
    lint_objects,
    lint_validated,
    paths_context,
    validate_objects,
)
from .policy import CueEngine, find_engine, policy_files, policy_findings, policy_input
from .policy.engine import cue_on_path, wasm_engine
from .policy.evaluate import evaluate_policies
from .policy.limits import capacity_limits
from .problems import KrcError, Location, Problem, sorted_problems
from .project import Project, find_project, shown_name
from .render import Render, render_environment
from .review.ray_view import ClusterRows, cluster_rows, two_views
from .rules import describe, summaries
from .rules.support.destinations import Destination, destination_of


def chart_pin(env: Environment) -> vendor.ChartPin:
    chart = env.data["operator"]["chart"]
    name, version = str(chart["name"]), str(chart["version"])
    problem = vendor.chart_pin_problem(name, version)
    if problem:  # before the name or version touches a path
        field = "name" if "name" in problem.split(" is ")[0] else "version"
        raise KrcError(problem, env.location_of(("operator", "chart", field)))
    return vendor.ChartPin(name, version, str(chart["repository"]))


def compile_environment(project: Project, name: str) -> Render:
    env = load_environment(project, name)
    pin = chart_pin(env)
    chart = vendor.load_vendored_chart(project.vendor_dir, pin.name, pin.version)
    return render_environment(project, env, chart)


@dataclass(frozen=True)
class Validated:
    """A render with its objects as the API server stores them (CRD defaults applied) and the schema findings."""

    render: Render
    context: LintContext
    schema_problems: tuple[Problem, ...]


def validate_render(render: Render, peers: tuple[Destination, ...] = ()) -> Validated:
    """`peers`: where the project's other environments deploy (the destination-collision rule reads them)."""
    context, problems = validate_objects(environment_context(render, peers))
    return Validated(render, context, tuple(problems))


def ray_version(env: Environment) -> str:
    ray = env.data.get("ray")
    return str(ray.get("version") or "") if isinstance(ray, dict) else ""


def autoscaler_of(project: Project, validated: Sequence[Validated]) -> list[AutoscalerView]:
    """What Ray's autoscaling-config generator (of each environment's ray.version) makes of every cluster spec
    the environments render, stored objects as the autoscaler reads them: one process for all of them."""
    return autoscaler_views(project.root, [Batch(ray_version(v.render.environment),
                                                 tuple(o.document for o in v.context.objects)) for v in validated])


def _generator_missing(render: Render, view: AutoscalerView) -> Problem:
    where = render.environment.location_of(("ray", "version")) or Location(f"environment {render.environment.name}")
    return Problem(f"the autoscaler's view was not checked: {view.unavailable}", where, "error",
                   "autoscaler/generator", object=f"environment/{render.environment.name}",
                   segments=("ray", "version"))


def validated_findings(validated: Validated, project: Project | None = None, argocd_crds: str | None = None,
                       view: AutoscalerView | None = None) -> list[Problem]:
    """Every finding about what an environment renders: schema and rules against the pinned CRDs (with the
    autoscaler's view when given), and (given the project) its Argo CD objects against the Argo CD CRDs it names
    or `argocd_crds`. A view without a generator is an error: CI must not pass as if it had been checked."""
    context = dataclasses.replace(validated.context, autoscaler=view) if view is not None else validated.context
    findings = lint_validated(context, list(validated.schema_problems))
    render = validated.render
    if view is not None and view.unavailable:
        findings.append(_generator_missing(render, view))
    if project is not None:
        findings += environment_problems(project, render.environment, render.objects, argocd_crds)
    return sorted_problems(findings)


def project_destinations(project: Project) -> tuple[Destination, ...]:
    """Where every environment of the project deploys (files that fail to load are reported on their own)."""
    found = []
    for name in project.environment_names():
        try:
            env = load_environment(project, name)
        except KrcError:
            continue
        destination = destination_of(name, env.data, env.files[-1] if env.files else f"environments/{name}.yaml")
        if destination is not None:
            found.append(destination)
    return tuple(found)


def environment_findings(render: Render, project: Project | None = None, argocd_crds: str | None = None,
                         peers: tuple[Destination, ...] | None = None) -> list[Problem]:
    """The findings `krc render` stops on: everything but the autoscaler's view (render never needs Ray); the
    environment's destination is compared with `peers` (read from the project when not given)."""
    if peers is None:
        peers = project_destinations(project) if project is not None else ()
    return validated_findings(validate_render(render, peers), project, argocd_crds)


def check_environment(render: Render, project: Project | None = None, argocd_crds: str | None = None,
                      peers: tuple[Destination, ...] | None = None) -> Render:
    """The render with its findings; error-level findings stop the pipeline."""
    findings = environment_findings(render, project, argocd_crds, peers)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        raise KrcError(errors)
    return dataclasses.replace(render, findings=tuple(findings))


def compile_environments(project: Project, names: Sequence[str], lint: bool = True) -> list[Render]:
    """Every named environment, checked, or every problem of all of them (one bad file does not hide another)."""
    renders: list[Render] = []
    problems: list[Problem] = []
    peers = project_destinations(project) if lint else ()
    for name in names:
        try:
            render = compile_environment(project, name)
            renders.append(check_environment(render, project, peers=peers) if lint else render)
        except KrcError as err:
            problems.extend(err.problems)
    if problems:
        # a shared template or layer fails the same way for every environment: say it once
        raise KrcError(sorted_problems(set(problems)))
    return renders


def vendor_charts(project: Project, names: Sequence[str]) -> list[vendor.VendorResult]:
    """Download every chart the environments pin (and only what the cache lacks)."""
    pins = [chart_pin(load_environment(project, name)) for name in names]
    if vendor.up_to_date(project.vendor_dir, pins):
        return vendor.vendor(project.vendor_dir, pins)  # writes nothing: a read-only checkout works
    with output.project_lock(project):
        project.checked_output_dir(project.vendor_dir / "charts")
        return vendor.vendor(project.vendor_dir, pins)


def render_to_disk(project: Project, names: Sequence[str]) -> list[Render]:
    """rendered/<env>/ for every environment, written only once all of them compiled cleanly."""
    renders = compile_environments(project, names)
    output.replace_trees({project.rendered_dir / r.environment.name: output.render_files(r, include_crds=True)
                          for r in renders}, project)
    return renders


def accept_golden(project: Project, names: Sequence[str]) -> list[Render]:
    """golden/<env>/ becomes the current render, CRD lock included, for environments without error-level
    findings: lint errors stop the compile, and policy violations are refused here too unless the environment
    lowers the policy in `lint.rules` with a reason. Nothing is written when any environment is refused."""
    renders = compile_environments(project, names)
    refused = [p for found in lint_policies(project, renders).values() for p in found if p.severity == "error"]
    if refused:
        raise KrcError([*dict.fromkeys(refused), Problem(
            "golden/ not updated: fix the findings above, or lower a policy for one environment with "
            "lint.rules.policy/<name>: {severity: warning, reason: ...} in its file")])
    output.replace_trees({project.golden_dir / r.environment.name: output.render_files(r, include_crds=False)
                          for r in renders}, project)
    return renders


@dataclass(frozen=True)
class GoldenMismatch:
    environment: str
    changed: tuple[str, ...]
    added: tuple[str, ...]  # rendered but not in golden
    removed: tuple[str, ...]  # in golden but no longer rendered
    orphaned: bool = False  # golden/<env>/ of an environment whose file is gone
    pruned: tuple[str, ...] = ()  # what deleting the removed objects does, one line per object

    @property
    def clean(self) -> bool:
        return not (self.changed or self.added or self.removed)


def _mismatch(name: str, current: output.Files, golden: output.Files, orphaned: bool = False) -> GoldenMismatch:
    removed = tuple(sorted(golden.keys() - current.keys()))
    return GoldenMismatch(name, tuple(sorted(p for p in current.keys() & golden.keys() if current[p] != golden[p])),
                          tuple(sorted(current.keys() - golden.keys())), removed, orphaned,
                          tuple(review.pruned_objects(name, golden, removed)))


def compare_with_golden(render: Render, golden_dir: Path) -> GoldenMismatch:
    return _mismatch(render.environment.name, output.render_files(render, include_crds=False),
                     output.read_tree(golden_dir / render.environment.name))


def _covers_all(project: Project, names: Sequence[str]) -> bool:
    """Removed environments are reported when every environment is compared (no names, or all of them)."""
    return set(names) >= set(project.environment_names())


def check_golden(project: Project, names: Sequence[str]) -> list[GoldenMismatch]:
    """Each environment's render against golden/, then every golden/<env>/ whose environment file is gone."""
    mismatches = [compare_with_golden(r, project.golden_dir) for r in compile_environments(project, names)]
    if _covers_all(project, names):
        source = review.golden_source(project, None)
        mismatches += [_mismatch(name, {}, source.files(name), orphaned=True)
                       for name in sorted(set(source.environments()) - set(project.environment_names()))]
    return mismatches


def review_project(project: Project, names: Sequence[str], base: str | None = None) -> review.Review:
    """`krc diff`: the named environments against golden/ (the working tree, or as committed at `base`), each
    with Ray's view of its capacity, and each changed one with its checks (lint and policy findings) and its
    capacity against the limits policies state; with every environment selected, also the environments golden/
    has and environments/ no longer has."""
    source = review.golden_source(project, base)
    renders = compile_environments(project, names)
    goldens = [source.files(r.environment.name) for r in renders]
    stored_after = [[o.document for o in validate_render(r).context.objects] for r in renders]
    stored_before = [_stored_golden(r, files) for r, files in zip(renders, goldens, strict=True)]
    versions = [ray_version(r.environment) for r in renders] * 2
    batches = [Batch(v, tuple(d)) for v, d in zip(versions, stored_after + stored_before, strict=True)]
    views = autoscaler_views(project.root, batches)  # after and before: one generator process
    after, before = views[:len(renders)], views[len(renders):]
    limits = capacity_limits(project.policies_dir, project.relative)
    reviews = {r.environment.name: dataclasses.replace(review.review_environment(
        project, r, files, limits=[lim for lim in limits if lim.applies(r.environment.data.get("production") is True)]),
        ray_view=two_views([o.document for o in r.objects], view, before=(old, old_view)))
        for r, files, view, old, old_view in zip(renders, goldens, after, stored_before, before, strict=True)}
    changed = [r for r in renders if reviews[r.environment.name].changed]
    policies = lint_policies(project, changed)
    for render in changed:
        name = render.environment.name
        reviews[name] = review.with_checks(reviews[name], [*render.findings, *policies.get(name, [])])
    if _covers_all(project, names):
        for name in sorted(set(source.environments()) - set(project.environment_names())):
            reviews[name] = review.removed_environment(name, source.files(name))
    return review.Review(source.description, base, tuple(reviews[name] for name in sorted(reviews)))


def _stored_golden(render: Render, files: output.Files) -> list[dict[str, Any]]:
    """golden's Ray objects as the API server stores them under the render's CRDs (so Ray's view before and
    after compare like with like); files krc diff itself reports as unreadable are left out here."""
    shown = f"golden/{render.environment.name}"
    objects = []
    for path, content in sorted(files.items()):
        if not path.startswith(f"{output.MANIFESTS_DIR}/"):
            continue
        try:
            document = yamlio.load(content.decode("utf-8"), f"{shown}/{path}")
        except (KrcError, UnicodeDecodeError):
            continue
        if isinstance(document, dict) and str(document.get("apiVersion", "")).startswith("ray.io/"):
            objects.append(LintObject(document, Location(f"{shown}/{path}")))
    context = LintContext(tuple(objects), render.chart.version, {}, render.chart)
    return [o.document for o in validate_objects(context)[0].objects]




def approve_crd_upgrade(project: Project, name: str, reason: str, base: str | None = None) -> review.ApprovalWritten:
    """`krc approve ENV --reason TEXT`: approvals/<env>.crd-upgrade.yaml for the environment's current CRD
    change (against golden/ in the working tree, or as committed at `base`)."""
    review.check_reason(reason)
    source = review.golden_source(project, base)
    [render] = compile_environments(project, [name])
    env_review = review.review_environment(project, render, source.files(name))
    return review.write_approval(project.root, env_review.gate, name, reason, source.description)


def explain(project: Project, name: str, path: str) -> explaining.Explanation:
    """`krc explain`: an environment value (with its layers or krc's default), or a rendered field
    (`Kind/name:field`, with its template and the environment line behind it)."""
    project.select([name])
    if explaining.is_rendered_path(path):
        result = explaining.explain_rendered(compile_environment(project, name), path)
        kind, _, field = result.path.partition(":")
        # credentials are shown as *** (files keep them)
        return dataclasses.replace(result, value=redact_at(field, result.value, kind.split("/", 1)[0]))
    result = explaining.explain_environment(load_environment(project, name), path)
    return dataclasses.replace(result, value=redact_at(result.path, result.value))


@dataclass(frozen=True)
class AutoscalerNodes:
    environment: str
    ray_version: str
    clusters: tuple[ClusterRows, ...]


def autoscaler_nodes(project: Project, names: Sequence[str], cluster: str = "") -> list[AutoscalerNodes]:
    """`krc autoscaler ENV... [--cluster NAME]`: every cluster's (or the named object's) node types as Ray's
    autoscaler sees them, beside Kubernetes' figures. A Ray version without its generator is bad input (exit 2)
    saying how to install it, and so is a cluster name no environment renders."""
    renders = compile_environments(project, project.select(list(names)), lint=False)
    views = autoscaler_of(project, [validate_render(r) for r in renders])
    missing = [Problem(view.unavailable, r.environment.location_of(("ray", "version")))
               for r, view in zip(renders, views, strict=True) if view.unavailable]
    if missing:
        raise KrcError(sorted_problems(set(missing)))
    found = [AutoscalerNodes(r.environment.name, view.ray_version, tuple(cluster_rows(
        (o.document for o in r.objects if not cluster or (o.document.get("metadata") or {}).get("name") == cluster),
        view))) for r, view in zip(renders, views, strict=True)]
    if cluster and not any(env.clusters for env in found):
        raise KrcError(f"no RayCluster, RayJob, RayService or RayCronJob named '{cluster}' in "
                       f"{', '.join(r.environment.name for r in renders)}; run 'krc autoscaler' to list them")
    return found


def ray_versions(project: Project) -> list[str]:
    """The Ray versions the environments name (`make ray-generators` installs one generator for each); a value
    that is not a release version is left to `krc lint` to report, never handed to a shell or pip."""
    versions = {ray_version(load_environment(project, name)) for name in project.environment_names()}
    return sorted(v for v in versions if valid_ray_version(v))


# ---- lint and policies ---------------------------------------------------------------------------------------

def _looks_like_path(target: str) -> bool:
    return "/" in target or target.endswith((".yaml", ".yml", ".json")) or target in (".", "..")


def lint_targets(targets: Sequence[str], project_root: Path | None = None, kuberay_version: str | None = None,
                 feature_gates: str = "", cwd: Path | None = None, argocd_crds: str | None = None) -> list[Problem]:
    """`krc lint`: paths when every target exists on disk, else environment names (none given: every
    environment). `argocd_crds` (a CRD file or folder) also validates Argo CD objects: in paths, and over each
    environment's own `argocd.crds`."""
    cwd = cwd or Path.cwd()
    paths = [cwd / t for t in targets]
    exists = [p.exists() for p in paths]
    if targets and all(exists):
        context = paths_context(paths, kuberay_version, feature_gates, cwd)
        return lint_objects(dataclasses.replace(context, extra_crds=argocd_crds) if argocd_crds else context)
    missing = [t for t, e in zip(targets, exists, strict=True) if not e and _looks_like_path(t)]
    if missing:
        raise KrcError(f"{missing[0]} does not exist; pass existing YAML files or directories")
    if any(exists):
        raise KrcError("pass either paths or environment names, not both; lint them in two runs")
    if kuberay_version or feature_gates:
        raise KrcError("--kuberay-version and --feature-gates apply to paths; an environment pins its chart and "
                       "sets operator.featureGates")
    return sorted_problems(lint_environments(find_project(project_root or cwd), targets, argocd_crds))


def lint_environments(project: Project, names: Sequence[str], argocd_crds: str | None = None) -> list[Problem]:
    """Every finding of each environment: schema and rules over what it renders, its Argo CD objects against
    the Argo CD CRDs it names, and the organisation's policies. Every environment's input errors are reported
    together."""
    problems: list[Problem] = []
    validated: list[Validated] = []
    peers = project_destinations(project)
    for name in project.select(list(names)):
        try:
            validated.append(validate_render(compile_environment(project, name), peers))
        except KrcError as err:
            problems.extend(err.problems)
    if problems:
        raise KrcError(problems)
    findings: list[Problem] = []
    for entry, view in zip(validated, autoscaler_of(project, validated), strict=True):
        findings.extend(validated_findings(entry, project, argocd_crds, view))
    policies = lint_policies(project, [v.render for v in validated])
    return findings + list(dict.fromkeys(p for found in policies.values() for p in found))


def lint_policies(project: Project, renders: Sequence[Render]) -> dict[str, list[Problem]]:
    """The organisation's CUE policies (policies/*.cue) by environment, in one engine run for all of them.

    An environment may lower a policy like a lint rule (`lint.rules.policy/<name>` with a severity and a reason).
    Without a CUE engine the other findings are still reported, plus an error saying the policies were not
    checked: a CI job without the engine must not pass as if they had been.
    """
    if not renders or not policy_files(project.policies_dir):
        return {}
    try:
        engine = find_engine([project.root])
    except KrcError as err:
        missing = Problem(f"the policies in policies/ were not checked: {err.problems[0].message}",
                          Location(project.relative(project.policies_dir)), "error", "policy/engine")
        return {r.environment.name: [missing] for r in renders}
    return policy_findings(project, renders, engine)


@dataclass(frozen=True)
class PolicyCheck:
    policies: tuple[str, ...]
    environments: tuple[str, ...]
    findings: tuple[Problem, ...]


def check_policies(project: Project, names: Sequence[str] = (), engine: CueEngine | None = None) -> PolicyCheck:
    """`krc policy [ENV...]`: the policies in policies/ over what the environments render."""
    policies = policy_files(project.policies_dir)
    selected = project.select(tuple(names))
    if not policies:
        return PolicyCheck((), tuple(selected), ())
    engine = engine or find_engine([project.root])  # before compiling: no engine means nothing to do
    # policies judge what the environment renders; lint findings are `krc lint`'s to report
    inputs = [policy_input(r) for r in compile_environments(project, selected, lint=False)]
    problems = evaluate_policies(project.policies_dir, inputs, engine=engine, show_path=project.relative)
    return PolicyCheck(tuple(p.stem for p in policies), tuple(selected), tuple(problems))


# ---- CRDs and Argo CD ----------------------------------------------------------------------------------------

def compare_crd_sources(old: str, new: str, project_root: Path | None) -> list[crddiff.CrdChange]:
    """`krc crd-diff OLD NEW`: every change between two CRD sets (files, folders, chart archives, NAME@VERSION)."""
    return crddiff.compare_crds(crddiff.load_crd_source(old, project_root),
                                crddiff.load_crd_source(new, project_root))


def validate_argocd(project: Project, names: Sequence[str], override: str | None) -> list[Problem]:
    """`krc argocd validate`: every environment's Argo CD objects against the named or configured CRDs."""
    problems: list[Problem] = []
    for render in compile_environments(project, project.select(list(names)), lint=False):
        if override is None and crds_path(project, render.environment) is None:
            raise KrcError(f"environment {render.environment.name} names no Argo CD CRDs: pass --crds or set "
                           "argocd.crds")
        problems.extend(environment_problems(project, render.environment, render.objects, override))
    return problems


def argocd_generate(project: Project, environ: Mapping[str, str], options: Mapping[str, str | None],
                    argocd_crds: str | None = None) -> argocd.Generated:
    """`krc argocd generate`: one environment compiled and checked as for `krc render` (error-level findings
    raise), then the documents the plugin request selects."""
    request = argocd.read_request(environ, options)
    name = argocd.chosen_environment(project, request)
    render = check_environment(compile_environment(project, name), project, argocd_crds)
    return argocd.generated(render, request)


def argocd_init(project: Project, environ: Mapping[str, str],
                options: Mapping[str, str | None]) -> list[vendor.VendorResult]:
    """`krc argocd init`: vendor the charts generate needs: the chosen environment's, or every environment's
    when none is chosen. Already vendored charts that match the lock are not downloaded again."""
    request = argocd.read_request(environ, options)
    names = [argocd.chosen_environment(project, request)] if request.environment else project.environment_names()
    return vendor_charts(project, names)


# ---- the everyday commands: envs, show, init, --version ---------------------------------------------------------

def list_environments(project: Project) -> list[inventory.EnvironmentSummary]:
    """`krc envs`: every environment with its layers, destination and chart (loaded, not rendered)."""
    return [inventory.summarize(load_environment(project, name)) for name in project.environment_names()]


def show_environment(project: Project, name: str, kinds: tuple[str, ...]) -> list[dict[str, object]]:
    """`krc show`: the objects one environment renders (validated and linted as by render), some kinds only."""
    [render] = compile_environments(project, project.select([name]))
    objects = inventory.select_objects(render, kinds)
    if kinds and not objects:
        raise KrcError(Problem(f"environment {name} renders no {', '.join(kinds)}",
                               help=f"kinds it renders: {', '.join(inventory.known_kinds(render))}"))
    return objects


def init_environment(project: Project, name: str, extends: str, destination: str | None,
                     namespace: str | None) -> Path:
    """`krc init`: a new environment file extending `extends`, checked by loading it; nothing is left behind
    when it does not load."""
    if not scaffold.ENVIRONMENT_NAME.match(name):
        raise KrcError(Problem(f"'{shown_name(name)}' is not a usable environment name",
                               help="use lowercase letters, digits and '-', e.g. staging or prod-eu"))
    path = project.environment_file(name)  # checks the name again before it becomes a path
    if path.exists():
        raise KrcError(Problem(f"{project.relative(path)} already exists", help="choose another name, or edit it"))
    if extends not in project.layer_names():
        close = difflib.get_close_matches(extends, project.layer_names(), n=1, cutoff=0.5)
        raise KrcError(Problem(f"there is no environment or layer '{extends}' to extend",
                               help=f"did you mean --extends {close[0]}?" if close else
                               f"extend one of: {', '.join(project.layer_names())}"))
    text = scaffold.new_environment(name, extends, destination, namespace)
    with path.open("x", encoding="utf-8") as handle:  # never replaces a file that appeared meanwhile
        handle.write(text)
    try:
        load_environment(project, name)
    except KrcError:
        path.unlink()
        raise
    return path


def versions(project: Project | None) -> list[tuple[str, str]]:
    """`krc --version`: krc and the engines it would use here."""
    return inventory.tool_versions(cue_on_path() or wasm_engine([project.root] if project else []))


def describe_rule(project: Project | None, rule_id: str) -> str:
    """`krc rules ID`: a lint rule's document, or `policy/NAME`: the policy file policies/NAME.cue."""
    if not rule_id.startswith("policy/"):
        return describe(rule_id)
    name = rule_id.removeprefix("policy/")
    known = sorted(p.stem for p in project.policies_dir.glob("*.cue")) if project else []
    if name not in known:  # also keeps the name inside policies/: only listed files are read
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        raise KrcError(Problem(f"no policy '{name}' in policies/",
                               help=f"did you mean 'policy/{close[0]}'?" if close else
                               f"policies: {', '.join('policy/' + k for k in known) or 'none'}"))
    assert project is not None
    path = project.policies_dir / f"{name}.cue"
    return f"policy/{name}  (error; CUE policy {project.relative(path)}, checked by krc policy and krc lint)\n\n" \
           + path.read_text(encoding="utf-8")


def rule_list(project: Project | None) -> list[tuple[str, str, str]]:
    """`krc rules`: every lint rule, then the project's policies, as (id, severity, summary)."""
    policies = sorted(project.policies_dir.glob("*.cue")) if project else []
    return summaries() + [(f"policy/{p.stem}", "error", _policy_summary(p)) for p in policies]


def _policy_summary(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("//"):
            return line.removeprefix("//").strip()
    return "organisation policy"
