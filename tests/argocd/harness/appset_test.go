package harness

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

var registered = []Cluster{
	{Name: "gpu-eu-1", Server: "https://gpu-eu-1.example.com", Labels: map[string]string{"krc.dev/environment": "prod-eks-gpu"}},
	{Name: "gpu-us-1", Server: "https://gpu-us-1.example.com", Labels: map[string]string{"krc.dev/environment": "prod-eks-gpu"}},
	{Name: "dev-1", Server: "https://dev-1.example.com", Labels: map[string]string{"krc.dev/environment": "dev"}},
	{Name: "legacy", Server: "https://legacy.example.com"}, // not labelled: no krc Application
}

// deploy/argocd/applicationset.yaml expanded by Argo CD's cluster generator (and, with the same clusters as
// elements, its list generator) gives one root Application per labelled cluster, krc-<env>-<cluster>, which
// runs the plugin as krc's own root does for that environment, with cluster=<name>; through the real cmp
// server, one root gives the three children krc documents, krc-<env>-<cluster>-<role>, aimed at the cluster,
// each deploying what golden/ holds for its role.
func TestApplicationSetExpandsIntoTheApplicationsKrcDocuments(t *testing.T) {
	w := getWorld(t)
	p := w.projects["shipped"]
	appSet, err := ReadApplicationSet(filepath.Join(p.repo.Root, "deploy", "argocd", "applicationset.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	byCluster, err := ExpandWithClusters(appSet, registered)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := WithListGenerator(appSet, registered[:3])
	if err != nil {
		t.Fatal(err)
	}
	byList, err := ExpandWithClusters(listed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(byCluster, byList) {
		t.Errorf("the list generator gives other Applications than the cluster generator:\n%v\n%v", names(byList), names(byCluster))
	}
	want := []string{"krc-dev-dev-1", "krc-prod-eks-gpu-gpu-eu-1", "krc-prod-eks-gpu-gpu-us-1"}
	if !reflect.DeepEqual(names(byCluster), want) {
		t.Fatalf("Applications %v, want %v", names(byCluster), want)
	}
	for i := range byCluster {
		root := &byCluster[i]
		env, cluster := root.Labels["krc.dev/environment"], Parameters(root)["cluster"]
		own, err := ReadApplication(filepath.Join(p.repo.Root, "golden", env, "manifests", "application-krc-"+env+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		sameRoot(t, root, own, cluster)
	}

	// one cluster's root through the real server, and its children too
	root := &byCluster[1]
	children, err := w.generate(p, root)
	if err != nil {
		t.Fatalf("repo-server: %v", err)
	}
	children = untracked(t, root.Name, children)
	golden := filepath.Join(p.repo.Root, "golden", "prod-eks-gpu")
	for i, role := range []string{"crds", "operator", "workloads"} {
		if len(children) != 3 {
			t.Fatalf("%s deploys %v, want three Applications", root.Name, keys(children))
		}
		var child v1alpha1.Application
		data, _ := json.Marshal(children[i].Object)
		if err := json.Unmarshal(data, &child); err != nil {
			t.Fatal(err)
		}
		if child.Name != root.Name+"-"+role || child.Spec.Destination.Name != "gpu-eu-1" || child.Spec.Destination.Server != "" {
			t.Errorf("child %s aimed at %+v, want %s-%s aimed at gpu-eu-1", child.Name, child.Spec.Destination, root.Name, role)
		}
		objects, err := w.generate(p, &child)
		if err != nil {
			t.Fatalf("repo-server, %s: %v", child.Name, err)
		}
		checkGolden(t, golden, &child, untracked(t, child.Name, objects))
	}
}

// sameRoot compares a root the ApplicationSet made with the root krc renders for the environment: the same
// source (plugin parameters and cluster=<name> aside), destination and sync policy, named for the cluster.
func sameRoot(t *testing.T, root, own *v1alpha1.Application, cluster string) {
	t.Helper()
	if root.Name != own.Name+"-"+cluster || root.Namespace != own.Namespace || root.Labels["krc.dev/argocd-role"] != "root" {
		t.Errorf("%s in %s, role %q: want %s-%s in %s, the root role", root.Name, root.Namespace, root.Labels["krc.dev/argocd-role"], own.Name, cluster, own.Namespace)
	}
	wantParameters := Parameters(own)
	wantParameters["cluster"] = cluster
	if got := Parameters(root); !reflect.DeepEqual(got, wantParameters) {
		t.Errorf("%s: plugin parameters %v, want %v", root.Name, got, wantParameters)
	}
	source, ownSource := root.Spec.GetSource(), own.Spec.GetSource()
	source.Plugin, ownSource.Plugin = nil, nil
	if !sameJSON(source, ownSource) || root.Spec.Source.Plugin.Name != own.Spec.Source.Plugin.Name {
		t.Errorf("%s: source %+v, krc's root has %+v", root.Name, source, ownSource)
	}
	if !sameJSON(root.Spec.Destination, own.Spec.Destination) || !sameJSON(root.Spec.SyncPolicy, own.Spec.SyncPolicy) {
		t.Errorf("%s: destination %+v and sync policy %+v, krc's root has %+v and %+v", root.Name,
			root.Spec.Destination, root.Spec.SyncPolicy, own.Spec.Destination, own.Spec.SyncPolicy)
	}
}

// sameJSON compares as the API server would store them (an empty list and none are the same).
func sameJSON(a, b any) bool {
	x, errX := json.Marshal(a)
	y, errY := json.Marshal(b)
	return errX == nil && errY == nil && string(x) == string(y)
}

func names(apps []v1alpha1.Application) []string {
	var out []string
	for _, app := range apps {
		out = append(out, app.Name)
	}
	return out
}
