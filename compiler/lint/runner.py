"""Running the rules: schema validation first (rules then see defaulted objects), then every rule that applies."""
from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable, Mapping

from ..diagnostics.problems import KrcError, Problem, sorted_problems
from ..rules import RULES, SEVERITIES, Rule, as_severity
from ..rules.support.context import LintContext
from ..rules.support.versions import applies_to
from ..validation.checks import SCHEMA_CHECKS
from . import kubernetes_step, schema_step
from .environment_terms import in_environment_terms


def rule_applies(rule: Rule, context: LintContext) -> bool:
    if not applies_to(rule.ABOUT.versions, context.operator_version):
        return False
    # rules about the whole environment have nothing to look at in a plain list of manifests
    return not (rule.ABOUT.environment_only and context.mode != "environment")


def check_rule_settings(context: LintContext) -> None:
    """An environment may only silence or soften rules that exist, and must say why."""
    problems = []
    known = {*RULES, *SCHEMA_CHECKS}
    for rule_id, setting in sorted(context.rule_settings.items()):
        if rule_id.startswith("policy/"):
            continue  # a policy's id: the policy stage knows which exist (policy.with_policy_settings)
        if rule_id not in known:
            near = _closest(rule_id, known)
            hint = f"; did you mean '{near}'?" if near else "; run 'krc rules' for the list"
            problems.append(Problem(f"lint setting for unknown rule '{rule_id}'{hint}", setting.location))
        elif setting.severity not in ("off", *SEVERITIES):
            problems.append(Problem(f"lint setting for '{rule_id}' has severity '{setting.severity}'; "
                                    "use off, info, warning or error", setting.location))
        elif not setting.reason.strip():
            problems.append(Problem(f"lint setting for '{rule_id}' needs a reason; say why the rule does not "
                                    "apply here", setting.location))
    if problems:
        raise KrcError(problems)


def _closest(word: str, candidates: Iterable[str]) -> str:
    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else ""


def run_rules(context: LintContext, rules: Mapping[str, Rule] = RULES) -> list[Problem]:
    """Every applicable rule over the context, with rule id and effective severity set; sorted, no duplicates."""
    check_rule_settings(context)
    found: dict[tuple[object, ...], Problem] = {}
    for rule_id, rule in rules.items():
        setting = context.rule_settings.get(rule_id)
        if (setting and setting.severity == "off") or not rule_applies(rule, context):
            continue
        severity = as_severity(setting.severity) if setting else rule.ABOUT.severity
        for problem in rule.check(context):
            final = dataclasses.replace(problem, rule=rule_id, severity=severity)
            found.setdefault((final.sort_key(), final.object, final.path), final)
    return sorted_problems(found.values())


def with_settings(problems: Iterable[Problem], context: LintContext) -> list[Problem]:
    """Schema findings under the environment's settings: turned off, or given another severity."""
    out = []
    for problem in problems:
        setting = context.rule_settings.get(problem.rule)
        if setting is None:
            out.append(problem)
        elif setting.severity != "off":
            out.append(dataclasses.replace(problem, severity=as_severity(setting.severity)))
    return out


def validate_objects(context: LintContext, started: schema_step.SchemaValidation | None = None) \
        -> tuple[LintContext, list[Problem]]:
    """Schema validation and defaulting: the context with every object as the API server stores it, and the
    schema findings (the CRDs', then the Kubernetes schemas' for the chart's objects, Namespaces and
    ServiceAccounts). What needs the stored objects before the rules run (the autoscaler's view) reads them here.
    `started`: the context's objects sent to the engine before (schema_step.start_documents)."""
    defaulted, problems = (started or schema_step.start(context)).finish(context)
    return defaulted, [*problems, *kubernetes_step.validate(context)]


def lint_validated(defaulted: LintContext, schema_problems: list[Problem]) -> list[Problem]:
    """The rules on the defaulted objects, with the schema findings under the environment's settings."""
    rule_problems = run_rules(defaulted)  # checks the settings first
    found = [*with_settings(schema_problems, defaulted), *rule_problems]
    if defaulted.mode == "environment":
        found = [in_environment_terms(p) for p in found]
    return sorted_problems(found)


# The rules that read Ray's autoscaler view: the only ones whose findings the view changes (About)
VIEW_RULES: dict[str, Rule] = {rule_id: rule for rule_id, rule in RULES.items() if rule.ABOUT.reads_autoscaler_view}


def view_findings(defaulted: LintContext) -> list[Problem]:
    """What Ray's autoscaler view (in the context) adds to lint_validated's findings made without it: the findings
    of the rules that read it, in the same terms."""
    found = run_rules(defaulted, VIEW_RULES)
    return [in_environment_terms(p) for p in found] if defaulted.mode == "environment" else found


def lint_objects(context: LintContext) -> list[Problem]:
    """Schema validation and defaulting, then the rules on the defaulted objects: everything `krc lint` reports."""
    return lint_validated(*validate_objects(context))
