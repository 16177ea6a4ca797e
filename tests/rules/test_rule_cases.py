"""Rule tests driven by case files: tests/rules/cases/<rule id with '/' as '__'>.yaml.

A case file holds `rule:` and `cases:`; each case has `name`, `manifests` (a YAML stream, linted as a file),
optional `chartManifests` (the operator chart's objects, as `helm template` renders them), optional `operator`
(version, default 1.7.0), `gates` (overrides of that version's chart defaults), `mode`
(paths | environment), `environment` (the environment dict: production, cpuOnly, namespace, operator...),
`helmValues`, `peers` (where the project's other environments deploy: environment, file, cluster, namespaces, and
`accepted: true` when golden/ holds one; `accepted` on the case: golden/ holds the environment under test),
`setIn` (dotted environment path -> the file that set it, for inherited values), and `expect`: the findings of
this rule, each `{message: <substring>, line: <n>}` (line optional). An empty `expect` is a passing case.

Every case manifest is also validated against the CRDs of the case's operator version, so fixtures keep the
real CRD shape: a field the CRD does not declare fails the case unless the case lists it under
`expectSchema` (`{message: <substring>}` per schema/unknown-field finding), e.g. a field new in a later version.
"""
from __future__ import annotations

import dataclasses
import functools
import tempfile
from pathlib import Path

import pytest

from compiler.autoscaler import Batch, autoscaler_views
from compiler.charts.package import read_chart
from compiler.diagnostics.problems import Location
from compiler.documents.yamlio import load
from compiler.k8s.destinations import Destination
from compiler.lint.manifest_files import load_objects
from compiler.lint.runner import VIEW_RULES, lint_objects, lint_validated, run_rules, validate_objects
from compiler.rules import RULES
from compiler.rules.support.context import LintContext
from compiler.rules.support.feature_gates import chart_default_gates
from compiler.validation import SchemaSet

CASES_DIR = Path(__file__).parent / "cases"
REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT / ".." / "shared"


def case_file(rule_id: str) -> Path:
    return CASES_DIR / (rule_id.replace("/", "__") + ".yaml")


def _chart(version: str):
    return read_chart(SHARED / "kuberay" / "charts" / f"kuberay-operator-{version}.tgz")


def _schemas(version: str) -> SchemaSet:
    return SchemaSet.from_crds(_chart(version).crds)  # compiled once per process, by CRD digest


def unknown_field_findings(case: dict, manifest: Path) -> list:
    """schema/unknown-field problems of the case's manifests under its operator version's CRDs."""
    schemas = _schemas(str(case.get("operator", "1.7.0")))
    results = schemas.validate_text(manifest.read_text(encoding="utf-8"), manifest.name)
    return [p for r in results for p in r.problems if p.rule == "schema/unknown-field"]


def _all_cases() -> list:
    params = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        data = load(path.read_text(encoding="utf-8"), str(path))
        for case in data["cases"]:
            params.append(pytest.param(data["rule"], case, tmp_name(path), id=f"{data['rule']}: {case['name']}"))
    return params


def tmp_name(path: Path) -> str:
    return path.stem + ".manifest.yaml"


@functools.cache
def _generator_answers_cached() -> int:
    """Every autoscaler/ case's clusters through the generator in one process (as `krc lint` does for all
    environments), so each case below reads its answers from the cache instead of starting a process."""
    batches = []
    with tempfile.TemporaryDirectory() as folder:
        for param in _all_cases():
            rule_id, case, file_name = param.values
            if rule_id.startswith("autoscaler/"):
                manifest = Path(folder) / file_name
                manifest.write_text(case.get("manifests") or "", encoding="utf-8")
                defaulted, _ = validate_objects(context_for(case, manifest))
                documents = tuple(o.document for o in defaulted.objects)
                batches.append(Batch(str(case.get("rayVersion", "2.58.0")), documents))
    autoscaler_views(REPO_ROOT, batches)
    return len(batches)


def with_autoscaler(defaulted: LintContext, case: dict) -> LintContext:
    """An autoscaler/ rule sees what the pipeline gives it: the objects as stored (CRD defaults applied) and the
    answers of the real generator of the case's Ray version (`rayVersion`, default 2.58.0) for them."""
    _generator_answers_cached()
    [view] = autoscaler_views(REPO_ROOT, [Batch(str(case.get("rayVersion", "2.58.0")),
                                                tuple(o.document for o in defaulted.objects))])
    assert not view.unavailable, view.unavailable
    return dataclasses.replace(defaulted, autoscaler=view)


def context_for(case: dict, manifest: Path) -> LintContext:
    chart_objects: tuple = ()
    if case.get("chartManifests"):
        chart_manifest = manifest.with_name("chart-" + manifest.name)
        chart_manifest.write_text(case["chartManifests"], encoding="utf-8")
        chart_objects = tuple(load_objects([chart_manifest]))
    version = str(case.get("operator", "1.7.0"))
    chart = _chart(version)
    helm_values = case.get("helmValues")
    gates = chart_default_gates(version, helm_values if helm_values is not None else chart.values)
    gates.update(case.get("gates") or {})
    environment = case.get("environment") or {}
    set_in = {tuple(path.split(".")): Location(file, 1, 1) for path, file in (case.get("setIn") or {}).items()}
    peers = tuple(Destination(p["environment"], p["file"], p["cluster"], tuple(p["namespaces"]),
                              p.get("accepted") is True) for p in case.get("peers") or [])
    return LintContext(objects=load_objects([manifest]), operator_version=version, feature_gates=gates,
                       chart=chart, mode=case.get("mode", "paths"), environment_name="test",
                       environment=environment, helm_values=helm_values,
                       production=environment.get("production") is True, cpu_only=environment.get("cpuOnly") is True,
                       environment_file="environments/test.yaml", locate_environment=set_in.get,
                       peer_destinations=peers, chart_objects=chart_objects,
                       environment_accepted=case.get("accepted") is True)


@pytest.mark.parametrize(("rule_id", "case", "file_name"), _all_cases())
def test_rule_case(rule_id: str, case: dict, file_name: str, tmp_path: Path) -> None:
    assert rule_id in RULES, f"case file names unknown rule {rule_id}"
    manifest = tmp_path / file_name
    manifest.write_text(case.get("manifests") or "", encoding="utf-8")
    unknown = unknown_field_findings(case, manifest)
    wanted_unknown = [w["message"] for w in case.get("expectSchema") or []]
    shown_unknown = "\n".join(p.one_line() for p in unknown)
    assert len(unknown) == len(wanted_unknown), (
        f"the manifests do not match the CRDs (list intended ones under expectSchema):\n{shown_unknown}")
    for want in wanted_unknown:
        assert any(want in p.message for p in unknown), f"no schema finding like {want!r} among:\n{shown_unknown}"
    # the production path: schema validation defaults the objects (as the API server stores them), then the rules
    if rule_id.startswith("autoscaler/"):  # ... with the real generator's answers for the stored objects between
        defaulted, schema_problems = validate_objects(context_for(case, manifest))
        everything = lint_validated(with_autoscaler(defaulted, case), schema_problems)
    else:
        everything = lint_objects(context_for(case, manifest))
    found = [p for p in everything if p.rule == rule_id]
    expected = case.get("expect") or []
    shown = "\n".join(p.one_line() for p in found)
    assert len(found) == len(expected), f"expected {len(expected)} finding(s), got:\n{shown}"
    unmatched = list(found)
    for want in expected:  # in any order: findings are sorted by position, cases are written by meaning
        match = next((p for p in unmatched if want["message"] in p.message and (
            "line" not in want or (p.location is not None and p.location.line == want["line"]))), None)
        assert match is not None, f"no finding like {want} among:\n{shown}"
        unmatched.remove(match)
    for problem in found:
        assert problem.severity == RULES[rule_id].ABOUT.severity
        # our message style: what is wrong; what to do (one line, no trailing full stop)
        assert "; " in problem.message and "\n" not in problem.message and not problem.message.endswith(".")


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_rule_has_cases_that_fail_and_pass(rule_id: str) -> None:
    path = case_file(rule_id)
    assert path.exists(), f"add {path.relative_to(CASES_DIR.parent)}"
    data = load(path.read_text(encoding="utf-8"), str(path))
    assert data["rule"] == rule_id
    assert any(c.get("expect") for c in data["cases"]), "needs a failing case"
    assert any(not c.get("expect") for c in data["cases"]), "needs a passing case"


@pytest.mark.parametrize("rule_id", sorted(RULES))
def test_every_rule_is_documented(rule_id: str) -> None:
    rule = RULES[rule_id]
    assert rule.ABOUT.severity in ("error", "warning", "info")
    assert rule.ABOUT.summary and "\n" not in rule.ABOUT.summary
    doc = rule.__doc__ or ""
    assert "Fails" in doc and "Passes" in doc, "the docstring shows a failing and a passing example"


def test_case_manifests_are_checked_against_the_crds(tmp_path: Path) -> None:
    """The guard itself: ttlSeconds beside policy (not in the condition) is a field the RayJob CRD lacks."""
    manifest = tmp_path / "job.yaml"
    rule = "{policy: DeleteCluster, condition: {jobStatus: SUCCEEDED%s}%s}"
    job = ("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j}\nspec:\n  deletionStrategy:\n"
           "    deletionRules: [%s]\n")
    manifest.write_text(job % (rule % ("", ", ttlSeconds: 10")), encoding="utf-8")
    wrong = unknown_field_findings({}, manifest)
    assert [(p.path, p.location.line) for p in wrong] == [("spec.deletionStrategy.deletionRules[0].ttlSeconds", 6)]
    manifest.write_text(job % (rule % (", ttlSeconds: 10", "")), encoding="utf-8")
    assert unknown_field_findings({}, manifest) == []
    manifest.write_text("apiVersion: ray.io/v1\nkind: RayCronJob\nmetadata: {name: c}\nspec: {timeZone: UTC}\n",
                        encoding="utf-8")
    assert unknown_field_findings({"operator": "1.7.0"}, manifest) == []
    assert len(unknown_field_findings({"operator": "1.6.2"}, manifest)) == 1  # timeZone is new in 1.7


class _Tripwire:
    """A view no rule may ask anything of: the rules that do not say they read Ray's view (About)."""

    unavailable = ""

    def __getattr__(self, name: str):
        raise AssertionError(f"a rule read the autoscaler view ({name}) without About.reads_autoscaler_view")


@pytest.mark.parametrize(("rule_id", "case", "file_name"), _all_cases())
def test_only_the_rules_that_say_so_read_rays_view(rule_id: str, case: dict, file_name: str, tmp_path: Path) -> None:
    """What `krc lint` relies on to add the view's findings to the compile's (view_findings): the other rules find
    the same with the view and without it, and the rules that read it find nothing without it."""
    manifest = tmp_path / file_name
    manifest.write_text(case.get("manifests") or "", encoding="utf-8")
    defaulted, _ = validate_objects(context_for(case, manifest))
    others = {i: r for i, r in RULES.items() if not r.ABOUT.reads_autoscaler_view}
    without = run_rules(defaulted, others)
    assert run_rules(dataclasses.replace(defaulted, autoscaler=_Tripwire()), others) == without  # type: ignore[arg-type]
    assert run_rules(defaulted, VIEW_RULES) == []
    if rule_id.startswith("autoscaler/"):
        assert run_rules(with_autoscaler(defaulted, case), others) == without


def test_the_rules_that_read_rays_view_are_the_autoscaler_ones() -> None:
    assert sorted(VIEW_RULES) == sorted(i for i in RULES if i.startswith("autoscaler/"))
