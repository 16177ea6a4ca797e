"""Each check fails on a minimal mutation of a valid object, judged by the engine (the API server's own validation),
with the rule id krc gives that kind of error, the path, the server's words and krc's help line."""
from __future__ import annotations

import pytest
from validation_support import IMAGE, cluster, job, kuberay_schemas

from compiler.diagnostics.problems import Problem

WORKER = ["spec", "workerGroupSpecs", 0]
HEAD_CONTAINER = "spec.headGroupSpec.template.spec.containers[0]"


def set_at(document: dict, path: list, key: str, value) -> dict:
    target = document
    for part in path:
        target = target[part]
    target[key] = value
    return document


def errors(document: dict, version: str = "1.7.0") -> list[tuple[str, str]]:
    return [(p.rule, p.path) for p in kuberay_schemas(version).validate(document).problems if p.severity == "error"]


def only_problem(document: dict, version: str = "1.7.0") -> Problem:
    problems = kuberay_schemas(version).validate(document).problems
    assert len(problems) == 1, [p.one_line() + " " + p.path for p in problems]
    return problems[0]


def test_the_base_objects_are_valid():
    assert kuberay_schemas("1.7.0").validate(cluster()).problems == ()
    assert kuberay_schemas("1.7.0").validate(job()).problems == ()


def test_unknown_field_is_an_error_with_did_you_mean():
    problem = only_problem(set_at(cluster(), WORKER, "replica", 2))
    assert (problem.rule, problem.path, problem.severity) == (
        "schema/unknown-field", "spec.workerGroupSpecs[0].replica", "error")
    assert problem.object == "RayCluster/ml/demo"
    assert problem.message == 'unknown field "spec.workerGroupSpecs[0].replica"'  # the API server's words
    assert problem.help == "the API server would prune it silently; did you mean 'replicas'?"


def test_unknown_field_deep_in_a_pod_template_is_found():
    document = cluster()
    document["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    problem = only_problem(document)
    assert problem.path == f"{HEAD_CONTAINER}.imagePullPolicyy"
    assert "did you mean 'imagePullPolicy'?" in problem.help


def test_unknown_field_without_a_close_name_says_what_to_do():
    problem = only_problem(set_at(cluster(), ["spec"], "zzz", True))
    assert problem.path == "spec.zzz" and "remove it" in problem.help


@pytest.mark.parametrize("key, value, path", [
    ("replicas", "3", "spec.workerGroupSpecs[0].replicas"),  # integer
    ("suspend", "yes", "spec.workerGroupSpecs[0].suspend"),  # boolean
    ("groupName", 7, "spec.workerGroupSpecs[0].groupName"),  # string
    ("rayStartParams", ["a"], "spec.workerGroupSpecs[0].rayStartParams"),  # object
])
def test_type_mismatch(key, value, path):
    assert errors(set_at(cluster(), WORKER, key, value)) == [("schema/type", path)]


def test_additional_properties_schema_applies_to_every_value():
    document = set_at(cluster(), ["spec", "headGroupSpec"], "rayStartParams", {"num-cpus": 0, "block": "true"})
    problem = only_problem(document)
    assert (problem.rule, problem.path) == ("schema/type", "spec.headGroupSpec.rayStartParams.num-cpus")
    assert problem.message.endswith('num-cpus in body must be of type string: "integer"')
    assert problem.help == "give num-cpus a string"


def test_int_or_string_accepts_both_and_rejects_others():
    limits = cluster()["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert limits["cpu"] == 2  # the base object already uses an integer quantity
    document = cluster()
    container = document["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    container["resources"]["limits"]["cpu"] = True
    container["livenessProbe"] = {"httpGet": {"port": "dashboard"}}
    assert errors(document) == [
        ("schema/type", "spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits.cpu")]
    container["resources"]["limits"]["cpu"] = "500m"
    container["livenessProbe"]["httpGet"]["port"] = 1.5
    assert errors(document) == [
        ("schema/type", "spec.workerGroupSpecs[0].template.spec.containers[0].livenessProbe.httpGet.port")]


def test_integral_float_is_an_integer():
    assert errors(set_at(cluster(), WORKER, "replicas", 2.0)) == []


def test_enum_with_did_you_mean():
    document = set_at(cluster(), ["spec"], "autoscalerOptions", {"upscalingMode": "Agressive"})
    problem = only_problem(set_at(document, ["spec"], "enableInTreeAutoscaling", True))
    assert (problem.rule, problem.path) == ("schema/enum", "spec.autoscalerOptions.upscalingMode")
    assert problem.message.startswith('spec.autoscalerOptions.upscalingMode: Unsupported value: "Agressive"')
    assert problem.help == "did you mean 'Aggressive'?"


def test_required_field_inside_a_list_item():
    document = cluster()
    del document["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["name"]
    assert errors(document) == [("schema/required", f"{HEAD_CONTAINER}.name")]


def test_required_top_level_spec_field():
    document = cluster()
    del document["spec"]["headGroupSpec"]
    assert errors(document) == [("schema/required", "spec.headGroupSpec")]


def test_pattern_on_quantities():
    document = cluster()
    container = document["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    container["resources"]["limits"]["memory"] = "8GB"
    problem = only_problem(document)
    assert (problem.rule, problem.path) == (
        "schema/pattern", "spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits.memory")


def test_int32_range():
    assert errors(set_at(cluster(), WORKER, "replicas", 3_000_000_000)) == [
        ("schema/format", "spec.workerGroupSpecs[0].replicas")]


def test_status_is_not_judged_on_create():
    # the status subresource: the API server drops status from a create before validating it
    document = set_at(job(), [], "status", {"startTime": "yesterday"})
    assert errors(document) == []


def test_minimum_and_min_items():
    document = set_at(job(), ["spec"], "preRunningDeadlineSeconds", 0)
    assert errors(document) == [("schema/bounds", "spec.preRunningDeadlineSeconds")]
    document = set_at(job(), ["spec"], "deletionStrategy", {"deletionRules": []})
    assert ("schema/bounds", "spec.deletionStrategy.deletionRules") in errors(document)


def test_min_length():
    cron = {"apiVersion": "ray.io/v1", "kind": "RayCronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *", "timeZone": "", "jobTemplate": job()["spec"]}}
    assert errors(cron) == [("schema/bounds", "spec.timeZone")]


def test_list_map_keys_must_be_unique():
    document = cluster()
    container = document["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    container["env"] = [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]
    problem = only_problem(document)
    assert (problem.rule, problem.path) == ("schema/duplicate", f"{HEAD_CONTAINER}.env[1]")
    # ports are keyed by (containerPort, protocol); protocol defaults to TCP before the comparison
    container["env"] = []
    container["ports"] = [{"containerPort": 8265}, {"containerPort": 8265, "protocol": "TCP"}]
    assert errors(document) == [("schema/duplicate", f"{HEAD_CONTAINER}.ports[1]")]
    container["ports"][1]["protocol"] = "UDP"
    assert errors(document) == []


def test_list_set_values_must_be_unique():
    document = cluster()
    container = document["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    container["restartPolicy"] = "Never"
    container["restartPolicyRules"] = [{"action": "Restart", "exitCodes": {"operator": "In", "values": [42, 42]}}]
    assert errors(document) == [("schema/duplicate", f"{HEAD_CONTAINER}.restartPolicyRules[0].exitCodes.values[1]")]


def test_metadata_name_required_unless_generate_name():
    document = cluster()
    del document["metadata"]["name"]
    assert errors(document) == [("schema/required", "metadata.name")]
    document["metadata"]["generateName"] = "demo-"
    assert errors(document) == []
    del document["metadata"]
    assert errors(document) == [("schema/required", "metadata.name")]


@pytest.mark.parametrize("meta, path", [
    ({"name": "Bad_Name"}, "metadata.name"),
    ({"name": "ok", "namespace": "Team.A"}, "metadata.namespace"),
    ({"name": "ok", "labels": {"team": "x" * 64}}, "metadata.labels"),  # where the server reports it
    ({"name": "ok", "labels": {"bad key!": "x"}}, "metadata.labels"),
])
def test_metadata_shapes(meta, path):
    document = cluster()
    document["metadata"] = meta
    assert errors(document) == [("schema/metadata", path)]


def test_metadata_label_values_must_be_strings_and_unknown_meta_fields_are_errors():
    document = cluster()
    document["metadata"]["label"] = {"a": "b"}
    assert errors(document) == [("schema/unknown-field", "metadata.label")]
    document["metadata"]["labels"] = {"version": 2}  # the server cannot decode the metadata: 400, nothing else
    problem = only_problem(document)
    assert (problem.rule, problem.path) == ("schema/metadata", "metadata")
    assert problem.message == ("metadata: json: cannot unmarshal number into Go struct field ObjectMeta.labels "
                               "of type string")


def test_cel_rules_run_with_the_crd_messages():
    document = set_at(job(), ["spec"], "deletionStrategy", {"onSuccess": {"policy": "DeleteCluster"}})
    problem = only_problem(document)
    assert (problem.rule, problem.path) == ("schema/cel", "spec.deletionStrategy")
    assert problem.message.startswith("spec.deletionStrategy: Invalid value: deletionStrategy requires either BOTH "
                                      "onSuccess and onFailure")
    document["spec"]["deletionStrategy"]["onFailure"] = {"policy": "DeleteNone"}
    assert errors(document) == []
    document["spec"]["deletionStrategy"]["deletionRules"] = [
        {"policy": "DeleteCluster", "condition": {"jobStatus": "FAILED", "jobDeploymentStatus": "Failed"}}]
    assert sorted(errors(document)) == [("schema/cel", "spec.deletionStrategy"),
                                        ("schema/cel", "spec.deletionStrategy.deletionRules[0].condition")]


def test_cel_managed_by_and_transition_rules_are_skipped_on_create():
    document = set_at(cluster(), ["spec"], "managedBy", "someone-else")
    problem = only_problem(document)
    assert (problem.rule, problem.path) == ("schema/cel", "spec.managedBy")
    assert "must be either 'ray.io/kuberay-operator' or 'kueue.x-k8s.io/multikueue'" in problem.message
    # `self == oldSelf` (immutability) needs an old object: on create it does not run
    document["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    document["spec"]["gcsFaultToleranceOptions"] = {"backend": "redis", "redisAddress": "redis:6379"}
    assert errors(document) == []


def test_null_item_in_a_list_is_a_type_error():
    document = cluster()
    document["spec"]["headGroupSpec"]["template"]["spec"]["containers"].append(None)
    assert errors(document) == [("schema/type", "spec.headGroupSpec.template.spec.containers[1]")]


def test_problems_carry_file_positions_when_given():
    text = f"""apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: demo
spec:
  headGroupSpec:
    rayStartParams: {{}}
    template:
      spec:
        containers:
        - name: head
          image: {IMAGE}
          imagePullPolicyy: Always
"""
    (result,) = kuberay_schemas("1.7.0").validate_text(text, "cluster.yaml")
    (problem,) = result.problems
    assert str(problem.location) == "cluster.yaml:13:11"
    assert problem.one_line().startswith(
        'cluster.yaml:13:11: error: unknown field "spec.headGroupSpec.template.spec.containers[0].imagePullPolicyy"')


def test_fractional_cpu_must_be_quoted_like_the_api_server_demands():
    document = cluster()
    container = document["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    container["resources"]["limits"]["cpu"] = 0.5
    problem = only_problem(document)
    assert (problem.rule, problem.path) == (
        "schema/type", "spec.workerGroupSpecs[0].template.spec.containers[0].resources.limits.cpu")
    assert problem.message.endswith("limits.cpu in body must be of type integer,string: \"number\"")
    assert problem.help == "give cpu an integer or a quoted string: quote the value"
    container["resources"]["limits"]["cpu"] = 2.0
    assert errors(document) == []


def test_every_crd_of_every_chart_compiles_in_the_engine():
    for version in ("1.5.2", "1.6.2", "1.7.0"):
        kuberay_schemas(version).compile_all()  # a CRD the server would refuse raises KrcError


def test_a_float_where_an_integer_is_expected_is_decoded_as_the_server_does():
    result = kuberay_schemas("1.7.0").validate(set_at(cluster(), WORKER, "replicas", 2.0))
    assert result.problems == () and result.defaulted["spec"]["workerGroupSpecs"][0]["replicas"] == 2
