package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ray-project/kuberay/ray-operator/pkg/features"
)

// cluster is a RayCluster as the API server stores it after CRD defaulting (replicas, min and max set).
const rayCluster = `{"apiVersion": "ray.io/v1", "kind": "RayCluster",
 "metadata": {"name": "demo", "namespace": "ray"},
 "spec": {"rayVersion": "2.46.0", "enableInTreeAutoscaling": true,
  "headGroupSpec": {"rayStartParams": {"num-cpus": "0"}, "template": {"spec": {"containers": [
    {"name": "ray-head", "image": "rayproject/ray:2.46.0",
     "resources": {"limits": {"cpu": "2", "memory": "8Gi"}}}]}}},
  "workerGroupSpecs": [{"groupName": "gpu", "replicas": 9, "minReplicas": 1, "maxReplicas": 4, "numOfHosts": 1,
   "template": {"metadata": {"labels": {"ray.io/group": "mine", "team": "a"}},
    "spec": {"containers": [{"name": "ray-worker", "image": "rayproject/ray:2.46.0",
     "resources": {"limits": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"}}}]}}}]}}`

func build(t *testing.T, op operator, objects ...string) []objectResult {
	t.Helper()
	return answered(t, buildOp, op, objects...)
}

// answered is what `handler` (buildOp, validateOp) answers for `objects` under `op`.
func answered(t *testing.T, handler func(json.RawMessage) (any, error), op operator, objects ...string) []objectResult {
	t.Helper()
	raw := make([]json.RawMessage, len(objects))
	for i, o := range objects {
		raw[i] = json.RawMessage(o)
	}
	args, _ := json.Marshal(buildArgs{Operator: op, Objects: raw})
	answer, err := handler(args)
	if err != nil {
		t.Fatal(err)
	}
	return answer.(map[string]any)["results"].([]objectResult)
}

func TestBuildsHeadAndWorkerPodsAsTheController(t *testing.T) {
	results := build(t, operator{}, rayCluster)
	if len(results) != 1 || results[0].Error != "" || len(results[0].Refusals) != 0 {
		t.Fatalf("results: %+v", results)
	}
	built := results[0].Clusters[0]
	head, worker := built.Pods[0], built.Pods[1]
	if head.Type != "head" || head.Pod.GenerateName != "demo-head-" {
		t.Errorf("head pod: type %s, generateName %q", head.Type, head.Pod.GenerateName)
	}
	args := strings.Join(head.Pod.Spec.Containers[0].Args, " ")
	if !strings.Contains(args, "ray start --head") || !strings.Contains(args, "--num-cpus=0") {
		t.Errorf("head ray start: %s", args)
	}
	if len(head.Pod.Spec.Containers) != 2 || head.Pod.Spec.Containers[1].Name != "autoscaler" {
		t.Errorf("head containers: %d, want the ray container and the autoscaler sidecar", len(head.Pod.Spec.Containers))
	}
	workerArgs := strings.Join(worker.Pod.Spec.Containers[0].Args, " ")
	if !strings.Contains(workerArgs, "--num-gpus=1") || !strings.Contains(workerArgs, "--address=demo-head-svc.ray.svc.cluster.local:6379") {
		t.Errorf("worker ray start: %s", workerArgs)
	}
	// the operator clamps replicas to maxReplicas and overrides the reserved ray.io/group label
	if worker.Min != 1 || worker.Max != 4 || worker.Desired != 4 {
		t.Errorf("worker counts: min %d max %d desired %d", worker.Min, worker.Max, worker.Desired)
	}
	if worker.Pod.Labels["ray.io/group"] != "gpu" || worker.Pod.Labels["team"] != "a" {
		t.Errorf("worker labels: %v", worker.Pod.Labels)
	}
	if len(built.Services) != 1 || built.Services[0].Name != "demo-head-svc" {
		t.Fatalf("services: %+v", built.Services)
	}
	if refs := worker.Pod.OwnerReferences; len(refs) != 1 || refs[0].Kind != "RayCluster" || refs[0].Name != "demo" {
		t.Errorf("owner references: %+v", refs)
	}
}

func TestTheSameInputGivesTheSameAnswer(t *testing.T) {
	job := `{"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "nightly", "namespace": "ray"},
	 "spec": {"entrypoint": "python x.py", "submissionMode": "K8sJobMode", "shutdownAfterJobFinishes": true,
	  "rayClusterSpec": ` + rayCluster[strings.Index(rayCluster, `"spec": {"rayVersion"`)+8:len(rayCluster)-1] + `}}`
	first, _ := json.Marshal(build(t, operator{}, job))
	second, _ := json.Marshal(build(t, operator{}, job))
	if string(first) != string(second) {
		t.Fatal("two builds of the same RayJob differ")
	}
	// an object's answer is its own, whatever comes before it in the request (krc keeps answers by object)
	behind, _ := json.Marshal(build(t, operator{}, job, job)[1:])
	if string(behind) != string(first) {
		t.Fatal("a RayJob answered after another differs from the same RayJob answered alone")
	}
	built := build(t, operator{}, job)[0].Clusters[0]
	if !strings.HasPrefix(built.Name, "nightly-") || built.Pods[0].Pod.OwnerReferences[0].Name != built.Name {
		t.Errorf("the RayJob's cluster %q, its head Pod owned by %+v", built.Name, built.Pods[0].Pod.OwnerReferences)
	}
}

func TestValidatorRefusalStopsTheBuild(t *testing.T) {
	invalid := strings.Replace(rayCluster, `"minReplicas": 1`, `"minReplicas": 5`, 1)
	result := build(t, operator{}, invalid)[0]
	if len(result.Refusals) != 1 || result.Refusals[0].By != "ValidateRayClusterSpec" ||
		result.Refusals[0].Message != "worker group gpu has minReplicas 5 greater than maxReplicas 4" {
		t.Fatalf("refusals: %+v", result.Refusals)
	}
	if len(result.Clusters) != 0 {
		t.Errorf("a refused cluster was built: %+v", result.Clusters)
	}
}

func TestWebhookOnlyCheckIsMarked(t *testing.T) {
	twoGroups := strings.Replace(rayCluster, `"workerGroupSpecs": [{`, `"workerGroupSpecs": [{"groupName": "gpu",
	 "minReplicas": 0, "maxReplicas": 1, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}, {`, 1)
	result := build(t, operator{}, twoGroups)[0]
	if len(result.Refusals) != 1 || !result.Refusals[0].Webhook || result.Refusals[0].Field != "spec.workerGroupSpecs[1]" ||
		result.Refusals[0].Message != "worker group names must be unique" {
		t.Fatalf("refusals: %+v", result.Refusals)
	}
	if len(result.Clusters) != 1 {
		t.Errorf("the controller itself does not refuse duplicate group names, yet nothing was built")
	}
}

func TestWebhookRepeatsNoControllerRefusal(t *testing.T) {
	long := strings.Replace(rayCluster, `"name": "demo"`, `"name": "`+strings.Repeat("d", 60)+`"`, 1)
	result := build(t, operator{}, long)[0]
	if len(result.Refusals) != 1 || result.Refusals[0].By != "ValidateRayClusterMetadata" ||
		result.Refusals[0].Message != "RayCluster name should be no more than 53 characters" {
		t.Fatalf("refusals: %+v", result.Refusals)
	}
}

func TestOperatorStateIsPerRequest(t *testing.T) {
	on := operator{Args: []string{"--feature-gates=RayCronJob=true"}, Env: []envVar{{Name: "CLUSTER_DOMAIN", Value: "example.org"}}}
	worker := build(t, on, rayCluster)[0].Clusters[0].Pods[1]
	if !features.Enabled(features.RayCronJob) {
		t.Error("RayCronJob=true was not applied")
	}
	if !strings.Contains(strings.Join(worker.Pod.Spec.Containers[0].Args, " "), "demo-head-svc.ray.svc.example.org") {
		t.Errorf("CLUSTER_DOMAIN not applied: %v", worker.Pod.Spec.Containers[0].Args)
	}
	worker = build(t, operator{}, rayCluster)[0].Clusters[0].Pods[1]
	if features.Enabled(features.RayCronJob) {
		t.Error("RayCronJob stayed on into the next request")
	}
	if strings.Contains(strings.Join(worker.Pod.Spec.Containers[0].Args, " "), "example.org") {
		t.Error("CLUSTER_DOMAIN stayed set into the next request")
	}
}

func TestUnknownGateIsTheOperatorsExit(t *testing.T) {
	args, _ := json.Marshal(buildArgs{Operator: operator{Args: []string{"--feature-gates=RayClusterMTLS=true"}}})
	if _, err := buildOp(args); err == nil || !strings.Contains(err.Error(), "unrecognized feature gate RayClusterMTLS") {
		t.Fatalf("error: %v", err)
	}
}

func TestCronJobNeedsItsGate(t *testing.T) {
	cron := `{"apiVersion": "ray.io/v1", "kind": "RayCronJob", "metadata": {"name": "c", "namespace": "ray"},
	 "spec": {"schedule": "not a schedule", "jobTemplate": {"entrypoint": "x"}}}`
	if result := build(t, operator{}, cron)[0]; !strings.Contains(result.Skipped, "RayCronJob feature gate is off") {
		t.Errorf("gate off: %+v", result)
	}
	on := operator{Args: []string{"--feature-gates=RayCronJob=true"}}
	if result := build(t, on, cron)[0]; len(result.Refusals) != 1 || !strings.HasPrefix(result.Refusals[0].Message, "invalid cron schedule") {
		t.Errorf("gate on: %+v", result)
	}
}

// validateAll is what validateOp answers for `objects` under `op`.
func validateAll(t *testing.T, op operator, objects ...string) []objectResult {
	t.Helper()
	return answered(t, validateOp, op, objects...)
}

func TestValidateAnswersTheBuildsRefusalsWithoutBuilding(t *testing.T) {
	job := `{"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "j", "namespace": "ray"},
	 "spec": {"entrypoint": "x", "rayClusterSpec": {"workerGroupSpecs": [{"groupName": "g", "minReplicas": 3,
	 "maxReplicas": 2, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}],
	 "headGroupSpec": {"template": {"spec": {"containers": [{"name": "h", "image": "i"}]}}}}}}`
	service := `{"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": {"name": "s", "namespace": "ray"},
	 "spec": {"rayClusterConfig": {"headGroupSpec": {"template": {"spec": {"containers": [{"name": "h",
	 "image": "i"}]}}}}}}`
	cron := `{"apiVersion": "ray.io/v1", "kind": "RayCronJob", "metadata": {"name": "c", "namespace": "ray"},
	 "spec": {"schedule": "not a schedule", "jobTemplate": {"entrypoint": "x"}}}`
	objects := []string{
		rayCluster,
		strings.Replace(rayCluster, `"minReplicas": 1`, `"minReplicas": 5`, 1),
		strings.Replace(rayCluster, `"name": "demo"`, `"name": "`+strings.Repeat("d", 60)+`"`, 1),
		strings.Replace(rayCluster, `"workerGroupSpecs": [{`, `"workerGroupSpecs": [{"groupName": "gpu",
	 "minReplicas": 0, "maxReplicas": 1, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}, {`, 1),
		job, service, cron, `{"kind": "ConfigMap"}`,
	}
	for _, op := range []operator{{}, {Args: []string{"--feature-gates=RayCronJob=true"}}} {
		built, validated := build(t, op, objects...), validateAll(t, op, objects...)
		if len(built[0].Clusters) == 0 || len(built[4].Clusters) != 0 || len(built[5].Clusters) == 0 {
			t.Fatalf("the build's answers are not what this test compares: %+v", built)
		}
		for i := range objects {
			if len(validated[i].Clusters) != 0 {
				t.Errorf("object %d: validate built %+v", i, validated[i].Clusters)
			}
			b, _ := json.Marshal([]any{built[i].Refusals, built[i].Skipped})
			v, _ := json.Marshal([]any{validated[i].Refusals, validated[i].Skipped})
			if string(b) != string(v) {
				t.Errorf("object %d: build said %s, validate %s", i, b, v)
			}
		}
	}
	if refused := validateAll(t, operator{}, objects[1])[0]; len(refused.Refusals) != 1 {
		t.Errorf("the refusal is missing: %+v", refused)
	}
}
