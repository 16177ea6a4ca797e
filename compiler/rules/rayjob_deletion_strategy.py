"""`deletionStrategy` uses one style correctly: legacy `onSuccess` + `onFailure`, or `deletionRules`.

- legacy: both policies set; not DeleteNone with `shutdownAfterJobFinishes: true`;
- rules: not with `shutdownAfterJobFinishes: true` nor with onSuccess/onFailure; each condition has exactly one
  of jobStatus / jobDeploymentStatus; condition.ttlSeconds >= 0; no duplicate (condition, policy); per
  condition value the TTLs grow DeleteWorkers <= DeleteCluster <= DeleteSelf (DeleteNone ignored);
- with clusterSelector only DeleteSelf and DeleteNone; DeleteWorkers not with autoscaling.

Fails:

    kind: RayJob
    spec:
      deletionStrategy:
        deletionRules:
        - {policy: DeleteCluster, condition: {jobStatus: SUCCEEDED, ttlSeconds: 10}}
        - {policy: DeleteWorkers, condition: {jobStatus: SUCCEEDED, ttlSeconds: 20}}

Passes:

    kind: RayJob
    spec:
      deletionStrategy:
        deletionRules:
        - {policy: DeleteWorkers, condition: {jobStatus: SUCCEEDED, ttlSeconds: 10}}
        - {policy: DeleteCluster, condition: {jobStatus: SUCCEEDED, ttlSeconds: 20}}

`ttlSeconds` lives in the condition (`deletionRules[].condition.ttlSeconds`, CRD default 0); written beside
`policy` it is a field the CRD does not have, which schema validation reports.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from ..diagnostics.problems import Problem
from .rule import About
from .support.context import LintContext, get_in
from .support.ray_objects import JobView, defaulted_int, job_views

ABOUT = About("rayjob/deletion-strategy", "error",
              "deletionStrategy uses legacy policies or deletionRules, consistently")

ORDER = ("DeleteWorkers", "DeleteCluster", "DeleteSelf")
CLUSTER_POLICIES = ("DeleteCluster", "DeleteWorkers")


def _legacy(job: JobView, strategy: dict[str, Any]) -> Iterator[Problem]:
    base = job.at("deletionStrategy")
    if strategy.get("onSuccess") is None or strategy.get("onFailure") is None:
        yield job.obj.problem("deletionStrategy needs both onSuccess and onFailure (or deletionRules); add the "
                              "missing one", base)
        return
    autoscaling = job.cluster is not None and job.cluster.autoscaling
    for field, outcome in (("onSuccess", "success"), ("onFailure", "failure")):
        policy = get_in(strategy, (field, "policy"))
        path = base + (field, "policy")
        if policy is None:
            yield job.obj.problem(f"deletionStrategy.{field} has no policy; set policy: DeleteCluster, "
                                  "DeleteWorkers, DeleteSelf or DeleteNone", base + (field,))
            continue
        if job.cluster_selector and policy in CLUSTER_POLICIES:
            yield job.obj.problem(f"policy {policy} on {outcome} cannot act on a cluster selected with "
                                  "clusterSelector; use DeleteSelf or DeleteNone", path)
        if policy == "DeleteWorkers" and autoscaling:
            yield job.obj.problem(f"policy DeleteWorkers on {outcome} does not work with autoscaling; use "
                                  "DeleteCluster or turn autoscaling off", path)
        if policy == "DeleteNone" and job.shutdown:
            yield job.obj.problem(f"policy DeleteNone on {outcome} contradicts shutdownAfterJobFinishes: true; set "
                                  "one of them differently", path)


def _rules(job: JobView, rules: list[Any]) -> Iterator[Problem]:
    base = job.at("deletionStrategy", "deletionRules")
    autoscaling = job.cluster is not None and job.cluster.autoscaling
    seen: set[tuple[Any, ...]] = set()
    ttls: dict[tuple[Any, ...], dict[str, tuple[int | None, int]]] = {}  # condition -> policy -> (ttl, rule index)
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        path = base + (i,)
        policy = str(rule.get("policy") or "")
        raw_condition = rule.get("condition")
        condition: dict[str, Any] = raw_condition if isinstance(raw_condition, dict) else {}
        keys = [k for k in ("jobStatus", "jobDeploymentStatus") if condition.get(k)]
        if len(keys) != 1:
            how = "both" if keys else "neither"
            yield job.obj.problem(f"deletionRules[{i}].condition sets {how} of jobStatus and jobDeploymentStatus; "
                                  "set exactly one", path + ("condition",))
        ttl = defaulted_int(condition.get("ttlSeconds"))  # the CRD puts the TTL in the condition
        if ttl is not None and ttl < 0:
            yield job.obj.problem(f"deletionRules[{i}].condition.ttlSeconds is {ttl}; use 0 or more",
                                  path + ("condition", "ttlSeconds"))
        if job.cluster_selector and policy in CLUSTER_POLICIES:
            yield job.obj.problem(f"deletionRules[{i}] policy {policy} cannot act on a cluster selected with "
                                  "clusterSelector; use DeleteSelf or DeleteNone", path + ("policy",))
        if autoscaling and policy == "DeleteWorkers":
            yield job.obj.problem(f"deletionRules[{i}] policy DeleteWorkers does not work with autoscaling; use "
                                  "DeleteCluster or turn autoscaling off", path + ("policy",))
        if len(keys) != 1:
            continue
        condition_key = (keys[0], str(condition[keys[0]]))
        if (condition_key, policy) in seen:
            yield job.obj.problem(f"deletionRules[{i}] repeats policy {policy} for {keys[0]} {condition_key[1]}; "
                                  "remove the duplicate", path)
        seen.add((condition_key, policy))
        if policy in ORDER:
            ttls.setdefault(condition_key, {}).setdefault(policy, (ttl, i))  # a duplicate is reported above
    for (key, value), by_policy in ttls.items():
        present = [p for p in ORDER if p in by_policy]
        for earlier, later in itertools.pairwise(present):
            (earlier_ttl, _), (later_ttl, later_index) = by_policy[earlier], by_policy[later]
            # a TTL that is not a number has no order (schema validation reports it)
            if later_ttl is not None and earlier_ttl is not None and later_ttl < earlier_ttl:
                yield job.obj.problem(f"for {key} {value}, {later} has ttlSeconds {later_ttl}, less than "
                                      f"{earlier}'s {earlier_ttl}; order the TTLs DeleteWorkers <= "
                                      "DeleteCluster <= DeleteSelf", base + (later_index, "condition", "ttlSeconds"))


def check(context: LintContext) -> Iterator[Problem]:
    for job in job_views(context):
        strategy = job.spec.get("deletionStrategy")
        if not isinstance(strategy, dict):
            continue
        base = job.at("deletionStrategy")
        rules = strategy.get("deletionRules")
        legacy = strategy.get("onSuccess") is not None or strategy.get("onFailure") is not None
        if isinstance(rules, list) and rules:
            if job.shutdown:
                yield job.obj.problem("deletionRules cannot be combined with shutdownAfterJobFinishes: true; set it "
                                      "to false and let the rules clean up", base + ("deletionRules",))
            if legacy:
                yield job.obj.problem("deletionStrategy mixes onSuccess/onFailure with deletionRules; keep only "
                                      "deletionRules", base)
                continue
            yield from _rules(job, rules)
        elif legacy:
            yield from _legacy(job, strategy)
        else:
            yield job.obj.problem("deletionStrategy is empty; give it deletionRules, or both onSuccess and "
                                  "onFailure, or remove it", base)
