"""The schema checks, as `krc rules` lists and documents them, and as environments may configure them.

Schema findings come from the API server's own validation of each object against its CRD (the engine's
`validate` op, through `SchemaSet`), not from a rule module, but users meet them the same way: an id, a default
severity, a summary and a document. The id says which kind of check the server's error is (engine_errors); the
message is the server's.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SchemaCheck:
    id: str
    severity: str
    summary: str
    document: str  # what it checks, with a failing and a passing example


def _check(id: str, severity: str, summary: str, failing: str, passing: str, why: str = "") -> SchemaCheck:
    document = (f"{summary}\n\n{why + chr(10) + chr(10) if why else ''}Fails:\n\n{failing}\n\nPasses:\n\n{passing}\n")
    return SchemaCheck(id, severity, summary, document)


_RAY = "    apiVersion: ray.io/v1\n    kind: RayCluster\n    metadata: {name: demo}\n"

SCHEMA_CHECKS: dict[str, SchemaCheck] = {c.id: c for c in (
    _check("schema/unknown-field", "error", "A field the CRD does not declare: the API server prunes it silently.",
           _RAY + "    spec: {headGroupSpec: {rayStartParams: {}, template: {spec: {containers: []}}}, "
                  "workerGroupSpec: []}",
           _RAY + "    spec: {headGroupSpec: {rayStartParams: {}, template: {spec: {containers: []}}}, "
                  "workerGroupSpecs: []}",
           "This is how a typo, or a field from a newer CRD than the one installed, disappears without an error."),
    _check("schema/type", "error", "A value of the wrong type (a number where text is expected, a map for a list).",
           "    replicas: '2'", "    replicas: 2"),
    _check("schema/required", "error", "A field the CRD requires is missing.",
           "    headGroupSpec: {rayStartParams: {}}",
           "    headGroupSpec: {rayStartParams: {}, template: {spec: {containers: [...]}}}"),
    _check("schema/enum", "error", "A value outside the CRD's allowed values.",
           "    submissionMode: K8sJob", "    submissionMode: K8sJobMode"),
    _check("schema/format", "error", "A value that breaks the declared format (int32 range, date-time, quantity...).",
           "    maxReplicas: 4294967296", "    maxReplicas: 10"),
    _check("schema/pattern", "error", "A string that does not match the CRD's pattern.",
           "    cpu: one", "    cpu: '1'"),
    _check("schema/bounds", "error", "A number, string, list or map outside the CRD's minimum/maximum bounds.",
           "    numOfHosts: 0", "    numOfHosts: 1"),
    _check("schema/duplicate", "error", "Duplicate items in a list the CRD declares a set or a map by key.",
           "    ports: [{containerPort: 8265, protocol: TCP}, {containerPort: 8265, protocol: TCP}]",
           "    ports: [{containerPort: 8265, protocol: TCP}]"),
    _check("schema/metadata", "error", "Object metadata the API server rejects (name, namespace, labels, annotations).",
           "    metadata: {name: Demo_Cluster}", "    metadata: {name: demo-cluster}"),
    _check("schema/cel", "error", "A CEL rule (x-kubernetes-validations) of the CRD fails.",
           "    a RayJob that sets both clusterSelector and rayClusterSpec where the CRD's rule forbids it",
           "    only one of them"),
    _check("schema/any-of", "error", "The value matches none of the CRD's anyOf branches.",
           "    (per CRD)", "    (per CRD)"),
    _check("schema/all-of", "error", "The value breaks one of the CRD's allOf branches.",
           "    (per CRD)", "    (per CRD)"),
    _check("schema/one-of", "error", "The value matches none, or more than one, of the CRD's oneOf branches.",
           "    (per CRD)", "    (per CRD)"),
    _check("schema/not", "error", "The value matches a schema the CRD forbids (not).",
           "    (per CRD)", "    (per CRD)"),
    _check("schema/unknown-kind", "error", "A kind or version of a known API group that the CRDs do not serve.",
           "    apiVersion: ray.io/v2", "    apiVersion: ray.io/v1"),
    _check("schema/nullable", "warning", "null on a field that is not nullable and has no default: the API "
           "server drops the key without a word (krc compares what the server stores with what was sent).",
           "    template: {metadata: null}", "    template: {metadata: {}}"),
    _check("schema/invalid", "error",
           "Anything else the API server rejects in a custom resource (a forbidden value, an internal error).",
           "    (per CRD)", "    (per CRD)"),
    _check("schema/server-warning", "info", "A warning the API server sends back with the object "
           "(other than a deprecated version).",
           "    (per CRD and API server)", "    (per CRD and API server)"),
    _check("schema/update-rejected", "error",
           "A change of a custom resource the API server rejects as an update of its golden/ version "
           "(a CEL transition rule with oldSelf, such as KubeRay's immutable spec.managedBy).",
           "    golden/: managedBy: ray.io/kuberay-operator; rendered: managedBy: kueue.x-k8s.io/multikueue",
           "    the same managedBy as golden/ (or delete and recreate the object)",
           "Argo CD's sync fails on such a change until the object is deleted and created again; "
           "Force=true,Replace=true in argocd.argoproj.io/sync-options makes Argo CD do that."),
    _check("schema/deprecated-version", "warning", "An API version the CRD marks deprecated (ray.io/v1alpha1).",
           "    apiVersion: ray.io/v1alpha1", "    apiVersion: ray.io/v1"),
)}
