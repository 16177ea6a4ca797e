"""The semantic field diff: identity, named lists, multi-line strings, paths."""
from __future__ import annotations

import copy

from compiler.k8s.objects import key_of
from compiler.review.capacity import Capacity, cluster_capacity, quantity_or_zero
from compiler.review.consequences import object_labels
from compiler.review.fielddiff import diff_documents


def cluster(*groups: str) -> dict:
    return {
        "apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "c", "namespace": "ns"},
        "spec": {
            "headGroupSpec": {"template": {"spec": {"containers": [
                {"name": "ray-head", "image": "ray:1", "resources": {"limits": {"cpu": "2", "memory": "4Gi"}}}]}}},
            "workerGroupSpecs": [
                {"groupName": g, "replicas": 1, "maxReplicas": 3, "template": {"spec": {"containers": [
                    {"name": "ray-worker", "image": "ray:1", "env": [{"name": "A", "value": "1"}],
                     "resources": {"limits": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "1"}}}]}}}
                for g in groups]}}


def paths(changes) -> list[str]:
    return [c.path for c in changes]


def test_identity_ignores_the_api_version():
    old, new = cluster("a"), cluster("a")
    old["apiVersion"] = "ray.io/v1alpha1"
    assert key_of(old) == key_of(new)
    assert key_of(old).ref == "RayCluster ns/c" and key_of(old).group == "ray.io"
    changes = diff_documents(old, new)
    assert [(c.path, c.op, c.old, c.new) for c in changes] == [
        ("apiVersion", "changed", "ray.io/v1alpha1", "ray.io/v1")]
    labels = object_labels("ray.io", "RayCluster", "changed", old, new, changes)
    assert [label.code for label in labels] == ["api-version"]
    assert key_of({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}}).group == ""


def test_inserting_a_worker_group_shows_only_that_group():
    changes = diff_documents(cluster("a", "c"), cluster("a", "b", "c"))
    assert paths(changes) == ["spec.workerGroupSpecs[groupName=b]"]
    assert changes[0].op == "added" and changes[0].new["groupName"] == "b"
    labels = object_labels("ray.io", "RayCluster", "changed", None, cluster("a", "b", "c"), changes)
    assert [label.code for label in labels] == ["worker-group-added"]


def test_containers_env_and_mounts_are_matched_by_name():
    old, new = cluster("a"), cluster("a")
    container = new["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    container["env"].insert(0, {"name": "Z", "value": "9"})
    container["env"][1]["value"] = "2"
    container["image"] = "ray:2"
    old_container = old["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    old_container["volumeMounts"] = [{"name": "v", "mountPath": "/a"}]
    container["volumeMounts"] = [{"name": "v", "mountPath": "/b"}, {"name": "v", "mountPath": "/a", "readOnly": True}]
    base = "spec.workerGroupSpecs[groupName=a].template.spec.containers[name=ray-worker]"
    assert paths(diff_documents(old, new)) == [
        f"{base}.env[name=Z]", f"{base}.env[name=A].value", f"{base}.image",
        f"{base}.volumeMounts[mountPath=/b]", f"{base}.volumeMounts[mountPath=/a].readOnly"]
    assert not [c for c in diff_documents(old, new) if c.op == "reordered"]  # inserting is not reordering
    labels = object_labels("ray.io", "RayCluster", "changed", old, new, diff_documents(old, new))
    # an image change of a running RayCluster says what Ray does with it, first: it is the worst consequence
    assert [label.code for label in labels] == ["ray-image-running-cluster", "worker-pod-template"]
    assert "running Pods keep the old template" in labels[1].message


def test_reordering_named_items_is_one_change_not_many():
    old, new = cluster("a", "b"), cluster("b", "a")
    changes = diff_documents(old, new)
    assert [(c.path, c.op, c.old, c.new) for c in changes] == [
        ("spec.workerGroupSpecs", "reordered", ["a", "b"], ["b", "a"])]


def test_multi_line_strings_are_unified_diffs():
    old = {"spec": {"serveConfigV2": "applications:\n- name: a\n  route_prefix: /a\n  import_path: x:y\n"}}
    new = copy.deepcopy(old)
    new["spec"]["serveConfigV2"] = new["spec"]["serveConfigV2"].replace("/a", "/b")
    [change] = diff_documents(old, new)
    assert change.op == "text" and change.path == "spec.serveConfigV2"
    assert change.diff == ("@@ -1,4 +1,4 @@", " applications:", " - name: a", "-  route_prefix: /a",
                           "+  route_prefix: /b", "   import_path: x:y")
    assert change.as_dict() == {"path": "spec.serveConfigV2", "where": ["spec", "serveConfigV2"], "op": "text",
                                "diff": list(change.diff)}


def test_scalar_types_matter_and_odd_keys_are_quoted():
    old = {"metadata": {"annotations": {"krc.dev/source": "a"}}, "spec": {"n": 1, "flag": True, "args": ["x", "y"]}}
    new = {"metadata": {"annotations": {"krc.dev/source": "b"}}, "spec": {"n": "1", "flag": 1, "args": ["x", "z"]}}
    assert [(c.path, c.old, c.new) for c in diff_documents(old, new)] == [
        ('metadata.annotations["krc.dev/source"]', "a", "b"), ("spec.args[1]", "y", "z"),
        ("spec.flag", True, 1), ("spec.n", 1, "1")]


def test_a_key_with_a_newline_or_quote_is_quoted_on_one_line():
    old = {"metadata": {"labels": {"team\n": "a", 'say "hi"': "x", "ok": "1"}}}
    new = {"metadata": {"labels": {"team\n": "b", 'say "hi"': "y", "ok": "2"}}}
    assert paths(diff_documents(old, new)) == [
        "metadata.labels.ok", 'metadata.labels["say \\"hi\\""]', 'metadata.labels["team\\n"]']


def test_capacity_counts_max_replicas_hosts_and_the_head():
    spec = cluster("a", "b")["spec"]
    spec["workerGroupSpecs"][1]["numOfHosts"] = 2
    # head 2 CPU 4Gi; group a 3 x (500m, 1Gi, 1 GPU); group b 3 x 2 hosts x the same
    assert cluster_capacity(spec) == Capacity(2000 + 3 * 500 + 6 * 500, 9, (4 + 3 + 6) * 2 ** 30)
    assert quantity_or_zero("1.5") == quantity_or_zero("1500m") and quantity_or_zero("1e3") == 1000
    assert quantity_or_zero("2Ki") == 2048 and quantity_or_zero("bogus") == 0
    assert Capacity(1500, 1, 3 * 2 ** 30).as_dict() == {"cpu": "1500m", "cpuMillis": 1500, "gpu": 1,
                                                         "memory": "3Gi", "memoryBytes": 3 * 2 ** 30}


def test_rayservice_cluster_action_follows_kuberays_hash_rule():
    from compiler.review.rayservice_action import cluster_action
    old = cluster("a", "b")["spec"]
    scaled = copy.deepcopy(old)
    scaled["workerGroupSpecs"][0].update(replicas=2, minReplicas=1, maxReplicas=9,
                                         scaleStrategy={"workersToDelete": ["p"]})
    assert cluster_action(old, scaled) == "none"
    assert cluster_action(old, cluster("a", "b", "c")["spec"]) == "update"  # appended at the end
    appended_and_scaled = copy.deepcopy(scaled)
    appended_and_scaled["workerGroupSpecs"].append(cluster("c")["spec"]["workerGroupSpecs"][0])
    assert cluster_action(old, appended_and_scaled) == "update"
    assert cluster_action(old, cluster("c", "a", "b")["spec"]) == "new-cluster"  # inserted first
    assert cluster_action(old, cluster("a")["spec"]) == "new-cluster"  # removed
    assert cluster_action(old, cluster("b", "a")["spec"]) == "new-cluster"  # reordered
    changed_and_appended = cluster("a", "b", "c")["spec"]
    changed_and_appended["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]["image"] = "ray:2"
    assert cluster_action(old, changed_and_appended) == "new-cluster"
    head_only = {k: v for k, v in old.items() if k != "workerGroupSpecs"}
    assert cluster_action(head_only, {**head_only, "workerGroupSpecs": []}) == "none"
    assert cluster_action(head_only, cluster("a")["spec"]) == "update"


def test_rayservice_labels_for_scale_append_and_serve_changes():
    def service(*groups: str, serve: str = "a") -> dict:
        return {"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": {"name": "s", "namespace": "ns"},
                "spec": {"serveConfigV2": serve, "rayClusterConfig": cluster(*groups)["spec"]}}

    def codes(old: dict, new: dict) -> list[str]:
        return [label.code for label in object_labels("ray.io", "RayService", "changed", old, new,
                                                      diff_documents(old, new))]

    scaled = service("a")
    scaled["spec"]["rayClusterConfig"]["workerGroupSpecs"][0]["maxReplicas"] = 6
    assert codes(service("a"), scaled) == ["rayservice-scale"]
    # ranked by impact: Serve redeploys (restart) before the appended group (scale)
    assert codes(service("a"), service("a", "b", serve="b")) == [
        "rayservice-serve-in-place", "rayservice-groups-appended", "worker-group-added"]
    assert codes(service("a", "b"), service("b", "a")) == ["rayservice-new-cluster"]
    none = service("a", "b")
    none["spec"]["upgradeStrategy"] = {"type": "None"}
    assert codes(service("a", "b"), none) == ["rayservice-settings"]
    removed = {**none, "spec": {**none["spec"], "rayClusterConfig": cluster("b")["spec"]}}
    assert sorted(codes(none, removed)) == ["rayservice-not-upgraded", "worker-group-removed"]
    # upgradeStrategy None: the running cluster keeps the removed group, nothing restarts
    [group] = [label for label in object_labels("ray.io", "RayService", "changed", none, removed,
                                                 diff_documents(none, removed)) if label.code == "worker-group-removed"]
    assert group.severity == "metadata only" and "keeps the group" in group.message
    # the default (NewCluster): the group goes with the old cluster, after the switch
    [group] = [label for label in object_labels("ray.io", "RayService", "changed", service("a", "b"), service("b"),
                                                 diff_documents(service("a", "b"), service("b")))
               if label.code == "worker-group-removed"]
    assert group.severity == "replacement" and "once traffic has switched" in group.message
