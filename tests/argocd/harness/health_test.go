package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

type healthCase struct {
	name    string
	object  string // a live object: kind, metadata and the status the KubeRay operator (or Argo CD) writes
	status  string
	message string // a part of the message
}

func rayCluster(status string) string {
	return "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {name: ray-cpu-demo, namespace: ray-demo, generation: 2}\n" + status
}

func rayService(status string) string {
	return "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: summarizer, namespace: ray-prod, generation: 1}\n" + status
}

func rayJob(status string) string {
	return "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: train-resnet, namespace: ray-prod, generation: 1}\n" + status
}

// observed is the status an operator writes once it has acted on the object's generation: its other fields
// ("key: value" each), then its conditions (a flow mapping each).
func observed(generation int, fields []string, conditions ...string) string {
	status := fmt.Sprintf("status:\n  observedGeneration: %d\n", generation)
	for _, field := range fields {
		status += "  " + field + "\n"
	}
	status += "  conditions:\n"
	for _, condition := range conditions {
		status += "  - " + condition + "\n"
	}
	return status
}

func application(status string) string {
	return "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: krc-dev-crds, namespace: argocd}\n" + status
}

// krc's health checks (deploy/argocd/argocd-cm-patch.yaml) through Argo CD's settings manager, its Lua VM
// (util/lua: libraries off, as for every argocd-cm script) and gitops-engine's health entry point, on the
// statuses KubeRay 1.7 writes (ray-operator/apis/ray/v1: conditions and the deprecated state fields).
func TestHealthChecksThroughArgoCDsHealthCode(t *testing.T) {
	checkout, err := Checkout()
	if err != nil {
		t.Fatal(err)
	}
	overrides, err := HealthChecks(context.Background(), filepath.Join(checkout, "deploy", "argocd", "argocd-cm-patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []healthCase{
		{"RayCluster without status", rayCluster(""), "Progressing", "waiting for the KubeRay operator"},
		{"RayCluster of an older generation", rayCluster(`status: {observedGeneration: 1, state: ready}`), "Progressing", "generation 2"},
		{"RayCluster provisioning", rayCluster(observed(2, nil,
			`{type: HeadPodReady, status: "False", reason: HeadPodNotFound}`,
			`{type: RayClusterProvisioned, status: "False", reason: RayClusterPodsProvisioning, message: "RayCluster Pods are being provisioned for first time"}`)),
			"Progressing", "being provisioned for first time"},
		{"RayCluster ready", rayCluster(observed(2, []string{"state: ready"},
			`{type: HeadPodReady, status: "True", reason: HeadPodRunningAndReady}`,
			`{type: RayClusterProvisioned, status: "True", reason: AllPodRunningAndReadyFirstTime}`)),
			"Healthy", "head Pod is ready"},
		{"RayCluster ready without conditions (the gate off)", rayCluster(`status: {observedGeneration: 2, state: ready}`), "Healthy", "ready"},
		{"RayCluster whose Pods cannot be created", rayCluster(observed(2, nil,
			`{type: ReplicaFailure, status: "True", reason: FailedCreateWorkerPod, message: "pods \"ray-cpu-demo-worker-x\" is forbidden: exceeded quota"}`,
			`{type: HeadPodReady, status: "True", reason: HeadPodRunningAndReady}`)),
			"Degraded", "exceeded quota"},
		{"RayCluster that lost its head", rayCluster(observed(2, nil,
			`{type: HeadPodReady, status: "False", reason: HeadPodNotReady, message: "containers with unready status: [ray-head]"}`,
			`{type: RayClusterProvisioned, status: "True", reason: AllPodRunningAndReadyFirstTime}`)),
			"Degraded", "unready status"},
		{"RayCluster suspended", rayCluster(observed(2, []string{"state: suspended"},
			`{type: RayClusterSuspended, status: "True", reason: RayClusterSuspended}`)),
			"Suspended", "suspended"},

		{"RayService initializing", rayService(observed(1, nil,
			`{type: Ready, status: "False", reason: Initializing, message: "RayService is initializing"}`)),
			"Progressing", "initializing"},
		{"RayService serving", rayService(observed(1, []string{"serviceStatus: Running", "numServeEndpoints: 2"},
			`{type: Ready, status: "True", reason: NonZeroServeEndpoints, message: "Number of serve endpoints is greater than 0"}`,
			`{type: UpgradeInProgress, status: "False", reason: NoPendingCluster}`)),
			"Healthy", "serve endpoints"},
		{"RayService upgrading", rayService(observed(1, nil,
			`{type: Ready, status: "True", reason: NonZeroServeEndpoints}`,
			`{type: UpgradeInProgress, status: "True", reason: BothActivePendingClustersExist, message: "Both active and pending Ray clusters exist"}`)),
			"Progressing", "pending Ray clusters"},
		{"RayService that never came up", rayService(observed(1, nil,
			`{type: Ready, status: "False", reason: InitializingTimeout, message: "RayService did not finish initializing within 300s"}`)),
			"Degraded", "did not finish initializing"},
		{"RayService refused by the operator", rayService(observed(1, nil,
			`{type: Ready, status: "False", reason: ValidationFailed, message: "spec.rayClusterConfig.headGroupSpec is invalid"}`)),
			"Degraded", "invalid"},
		{"RayService serving, from an older operator", rayService(`status: {serviceStatus: Running}`), "Healthy", "serving"},

		{"RayJob new", rayJob(""), "Progressing", "waiting for the KubeRay operator"},
		{"RayJob initializing", rayJob(`status: {jobDeploymentStatus: Initializing}`), "Progressing", "Initializing"},
		{"RayJob running", rayJob(`status: {jobDeploymentStatus: Running, jobStatus: RUNNING}`), "Progressing", "job RUNNING"},
		{"RayJob retrying", rayJob(`status: {jobDeploymentStatus: Retrying, jobStatus: FAILED, failed: 1}`), "Progressing", "Retrying"},
		{"RayJob succeeded", rayJob(`status: {jobDeploymentStatus: Complete, jobStatus: SUCCEEDED, succeeded: 1}`), "Healthy", "SUCCEEDED"},
		{"RayJob failed", rayJob(`status: {jobDeploymentStatus: Failed, jobStatus: FAILED, reason: AppFailed, message: "Job entrypoint command failed with exit code 1"}`),
			"Degraded", "exit code 1"},
		{"RayJob past its deadline", rayJob(`status: {jobDeploymentStatus: Failed, reason: DeadlineExceeded, message: "The RayJob has passed the activeDeadlineSeconds"}`),
			"Degraded", "DeadlineExceeded"},
		{"RayJob suspended", rayJob(`status: {jobDeploymentStatus: Suspended}`), "Suspended", "suspended"},

		// the child Applications of the app-of-apps: a wave waits until its apps are synced to their current spec
		{"Application new", application(""), "Progressing", "waiting for the application to sync"},
		{"Application out of sync, its old resources healthy", application(`status: {sync: {status: OutOfSync}, health: {status: Healthy}}`), "Progressing", "waiting"},
		{"Application synced and healthy", application(`status: {sync: {status: Synced}, health: {status: Healthy}}`), "Healthy", ""},
		{"Application degraded while syncing", application(`status: {sync: {status: OutOfSync}, health: {status: Degraded, message: "namespace not found"}}`), "Degraded", "namespace not found"},
	}
	seen := map[string]map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Health(overrides, c.object)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("Argo CD applies no health check to it")
			}
			if string(got.Status) != c.status || !strings.Contains(got.Message, c.message) {
				t.Errorf("%s %q, want %s with %q", got.Status, got.Message, c.status, c.message)
			}
		})
		kind := strings.Fields(strings.SplitN(c.object, "kind: ", 2)[1])[0]
		if seen[kind] == nil {
			seen[kind] = map[string]bool{}
		}
		seen[kind][c.status] = true
	}
	for _, kind := range []string{"RayCluster", "RayService", "RayJob"} {
		for _, status := range []string{"Healthy", "Progressing", "Degraded"} {
			if !seen[kind][status] {
				t.Errorf("no %s case that is %s", kind, status)
			}
		}
	}
}
