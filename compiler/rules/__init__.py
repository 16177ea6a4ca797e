"""Every lint rule, one module each, listed explicitly: the registry is this dict, not a directory scan.

Each module satisfies the `Rule` protocol (rules/rule.py): `ABOUT = About(id, severity, summary, versions,
environment_only, reads_autoscaler_view)`, a docstring with a failing and a passing example, and
check(context) -> Iterable[Problem].
"""
from __future__ import annotations

import difflib

from ..diagnostics.problems import KrcError
from ..validation.checks import SCHEMA_CHECKS
from .rule import SEVERITIES, About, Rule, as_severity

__all__ = ["RULES", "SEVERITIES", "About", "Rule", "as_severity", "describe", "summaries"]
from . import (
    argocd_autoscaled_replicas_ignored,
    argocd_sync_order,
    autoscaler_generator_error,
    autoscaler_gpu_count,
    autoscaler_hosts_per_replica,
    autoscaler_idle_timeout_default,
    autoscaler_idle_timeout_ignored,
    autoscaler_nothing_schedulable,
    autoscaler_unbounded_workers,
    chart_unread_values,
    environment_destination_collision,
    feature_gates_controller_off,
    feature_gates_field_needs_gate,
    kuberay_name,
    kuberay_validator,
    operator_unknown_feature_gate,
    operator_watched_namespaces,
    raycluster_auth_options,
    raycluster_autoscaler,
    raycluster_autoscaler_v1_restart_policy,
    raycluster_autoscaler_version_unset,
    raycluster_containers_required,
    raycluster_false_start_param_dropped,
    raycluster_forced_start_params,
    raycluster_gcs_embedded_storage,
    raycluster_gcs_fault_tolerance,
    raycluster_group_labels,
    raycluster_history_server,
    raycluster_idle_timeout,
    raycluster_k8s_token_auth_standalone,
    raycluster_memory_request_ignored,
    raycluster_network_policy,
    raycluster_operator_env_vars,
    raycluster_pod_template_identity,
    raycluster_ray_version_image_tag,
    raycluster_replicas_clamped,
    raycluster_reserved_pod_labels,
    raycluster_resources_one_source,
    raycluster_tls_options,
    raycluster_upgrade_strategy,
    raycluster_worker_group_names_unique,
    raycluster_worker_priority,
    raycluster_worker_replicas,
    raycronjob_schedule,
    raycronjob_time_zone,
    rayjob_backoff_limit,
    rayjob_cluster_selector_ignores_spec,
    rayjob_cluster_source,
    rayjob_deadlines,
    rayjob_deletion_strategy,
    rayjob_production_settings,
    rayjob_runtime_env_yaml,
    rayjob_submission_mode,
    rayjob_submitter_unused,
    rayjob_suspend,
    rayjob_ttl_after_finished,
    rayservice_deprecated_thresholds,
    rayservice_head_service_name,
    rayservice_initializing_timeout,
    rayservice_upgrade_strategy,
    resources_gpu_in_cpu_only_environment,
    resources_gpu_limit_mismatch,
    resources_gpu_pool_without_gpu,
    resources_gpu_scheduling,
    resources_head_accepts_work,
    resources_resource_key_in_node_selector,
    resources_suspicious_quantity,
    resources_tiny_memory_in_production,
    security_exposed_endpoints,
    security_literal_credentials,
)

_MODULES: tuple[Rule, ...] = (
    argocd_autoscaled_replicas_ignored,
    argocd_sync_order,
    autoscaler_generator_error,
    autoscaler_gpu_count,
    autoscaler_hosts_per_replica,
    autoscaler_idle_timeout_default,
    autoscaler_idle_timeout_ignored,
    autoscaler_nothing_schedulable,
    autoscaler_unbounded_workers,
    chart_unread_values,
    environment_destination_collision,
    feature_gates_controller_off,
    feature_gates_field_needs_gate,
    kuberay_name,
    kuberay_validator,
    operator_unknown_feature_gate,
    operator_watched_namespaces,
    raycluster_auth_options,
    raycluster_autoscaler,
    raycluster_autoscaler_v1_restart_policy,
    raycluster_autoscaler_version_unset,
    raycluster_containers_required,
    raycluster_false_start_param_dropped,
    raycluster_forced_start_params,
    raycluster_gcs_embedded_storage,
    raycluster_gcs_fault_tolerance,
    raycluster_group_labels,
    raycluster_history_server,
    raycluster_idle_timeout,
    raycluster_k8s_token_auth_standalone,
    raycluster_memory_request_ignored,
    raycluster_network_policy,
    raycluster_operator_env_vars,
    raycluster_pod_template_identity,
    raycluster_ray_version_image_tag,
    raycluster_replicas_clamped,
    raycluster_reserved_pod_labels,
    raycluster_resources_one_source,
    raycluster_tls_options,
    raycluster_upgrade_strategy,
    raycluster_worker_group_names_unique,
    raycluster_worker_priority,
    raycluster_worker_replicas,
    raycronjob_schedule,
    raycronjob_time_zone,
    rayjob_backoff_limit,
    rayjob_cluster_selector_ignores_spec,
    rayjob_cluster_source,
    rayjob_deadlines,
    rayjob_deletion_strategy,
    rayjob_production_settings,
    rayjob_runtime_env_yaml,
    rayjob_submission_mode,
    rayjob_submitter_unused,
    rayjob_suspend,
    rayjob_ttl_after_finished,
    rayservice_deprecated_thresholds,
    rayservice_head_service_name,
    rayservice_initializing_timeout,
    rayservice_upgrade_strategy,
    resources_gpu_in_cpu_only_environment,
    resources_gpu_limit_mismatch,
    resources_gpu_pool_without_gpu,
    resources_gpu_scheduling,
    resources_head_accepts_work,
    resources_resource_key_in_node_selector,
    resources_suspicious_quantity,
    resources_tiny_memory_in_production,
    security_exposed_endpoints,
    security_literal_credentials,
)

# rule id -> module, sorted by id
RULES: dict[str, Rule] = {m.ABOUT.id: m for m in sorted(_MODULES, key=lambda m: m.ABOUT.id)}


def summaries() -> list[tuple[str, str, str]]:
    """(id, severity, summary) of every rule and schema check, sorted by id: what `krc rules` lists."""
    rows: list[tuple[str, str, str]] = [(rid, rule.ABOUT.severity, rule.ABOUT.summary) for rid, rule in RULES.items()]
    rows += [(check.id, check.severity, check.summary) for check in SCHEMA_CHECKS.values()]
    return sorted(rows)


def describe(rule_id: str) -> str:
    """A rule's documentation as `krc rules ID` prints it; an unknown id is bad input."""
    if rule_id in SCHEMA_CHECKS:
        check = SCHEMA_CHECKS[rule_id]
        return f"{check.id}  ({check.severity}; schema validation against the CRDs)\n{check.document}"
    rule = RULES.get(rule_id)
    if rule is None:
        near = difflib.get_close_matches(rule_id, [*RULES, *SCHEMA_CHECKS], n=1)
        hint = f"did you mean '{near[0]}'? " if near else ""
        raise KrcError(f"no lint rule '{rule_id}'; {hint}run 'krc rules' for the list")
    about = rule.ABOUT
    versions = about.versions or "all"
    scope = "environments only" if about.environment_only else "paths and environments"
    header = f"{about.id}  ({about.severity}; operator versions: {versions}; {scope})\n{about.summary}\n\n"
    return header + (rule.__doc__ or "").strip() + "\n"
