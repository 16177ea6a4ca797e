//go:build krcsync

// Built only with gitops-engine's pkg/sync overlaid with overlay/sync_order.go.overlay (run.sh does it): the
// order a sync applies objects in is syncTasks.Sort, which gitops-engine does not export.
package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-cd/gitops-engine/pkg/sync"
)

// step is a place in a sync: wave, kind, name (objects of one kind and name in several namespaces tie, and
// sort.Sort leaves their order open).
type step struct {
	Wave int
	Kind string
	Name string
}

// What krc's own replay (compiler/k8s/argocd_sync.py, behind the argocd/sync-order rule) says: its kind order,
// and each object list sorted by its sync_key.
func krcReplay(t *testing.T, checkout string, lists [][]*unstructured.Unstructured) ([]string, [][]step) {
	t.Helper()
	var documents [][]map[string]any
	for _, list := range lists {
		var docs []map[string]any
		for _, object := range list {
			docs = append(docs, object.Object)
		}
		documents = append(documents, docs)
	}
	input, _ := json.Marshal(documents)
	script := `import json, sys
from compiler.k8s.argocd_sync import KIND_ORDER, sync_key, wave_of
lists = json.load(sys.stdin)
print(json.dumps({"kinds": list(KIND_ORDER), "orders": [
    [{"Wave": wave_of(d), "Kind": d["kind"], "Name": d["metadata"]["name"]} for d in sorted(docs, key=sync_key)]
    for docs in lists]}))`
	cmd := exec.Command(filepath.Join(checkout, ".venv", "bin", "python"), "-c", script)
	cmd.Dir, cmd.Stdin = checkout, bytes.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("krc's replay: %v", err)
	}
	var replay struct {
		Kinds  []string
		Orders [][]step
	}
	if err := json.Unmarshal(out, &replay); err != nil {
		t.Fatal(err)
	}
	return replay.Kinds, replay.Orders
}

// gitops-engine's order of each Application's objects (its pkg/sync: syncTasks.Sort) against krc's replay,
// and against what krc's README promises: Namespaces before CRDs in the foundations, RBAC before the operator's
// Deployment, the app-of-apps' children in the waves crds, operator, workloads.
func TestSyncOrderIsGitopsEngines(t *testing.T) {
	w := getWorld(t)
	p := w.projects["shipped"]
	var lists [][]*unstructured.Unstructured
	var names []string
	all := applications(t, p)
	for _, env := range []string{"dev", "prod-eks-gpu"} {
		for _, app := range all[env] {
			// what the controller syncs: the repo-server's answer (the same as golden/: manifests_test.go)
			objects, err := w.generate(p, app)
			if err != nil {
				t.Fatalf("repo-server: %v", err)
			}
			lists = append(lists, untracked(t, app.Name, objects))
			names = append(names, app.Name)
		}
	}
	if len(lists) != 8 {
		t.Fatalf("%d Applications, want 8", len(lists))
	}
	checkout := w.checkout
	kinds, replays := krcReplay(t, checkout, lists)

	engineKinds := sync.KrcKindOrder()
	var ranked []string
	for kind := range engineKinds {
		ranked = append(ranked, kind)
	}
	sort.Slice(ranked, func(i, j int) bool { return engineKinds[ranked[i]] < engineKinds[ranked[j]] })
	if !reflect.DeepEqual(ranked, kinds) {
		t.Errorf("krc's KIND_ORDER differs from gitops-engine's kindOrder:\n krc  %v\n Argo %v", kinds, ranked)
	}

	for i, list := range lists {
		order := sync.KrcOrder(list)
		var got []step
		for _, s := range order {
			if s.Phase != "Sync" {
				t.Errorf("%s: %s/%s in phase %s", names[i], s.Kind, s.Name, s.Phase)
			}
			got = append(got, step{s.Wave, s.Kind, s.Name})
		}
		if !reflect.DeepEqual(got, replays[i]) {
			t.Errorf("%s: gitops-engine applies\n %v\nkrc's replay says\n %v", names[i], got, replays[i])
		}
		t.Logf("%s: %v", names[i], got)
		checkPromises(t, names[i], order)
	}
}

// checkPromises holds the order to what deploy/argocd/README.md "Why this order" says.
func checkPromises(t *testing.T, name string, order []sync.KrcStep) {
	t.Helper()
	first := map[string]int{}
	last := map[string]int{}
	for i, s := range order {
		if _, ok := first[s.Kind]; !ok {
			first[s.Kind] = i
		}
		last[s.Kind] = i
	}
	before := func(a, b string) {
		if _, ok := first[b]; !ok {
			return
		}
		if _, ok := last[a]; ok && last[a] > first[b] {
			t.Errorf("%s: a %s comes after a %s", name, a, b)
		}
	}
	before("Namespace", "CustomResourceDefinition")
	for _, rbac := range []string{"ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"} {
		before(rbac, "Deployment")
	}
	for _, kind := range []string{"RayCluster", "RayJob", "RayService", "RayCronJob"} {
		before("ServiceAccount", kind)
	}
	if _, ok := first["CustomResourceDefinition"]; ok && first["Namespace"] != 0 {
		t.Errorf("%s: the foundations do not start with a Namespace", name)
	}
	var apps []string
	for _, s := range order {
		if s.Kind == "Application" {
			apps = append(apps, fmt.Sprintf("%d:%s", s.Wave, s.Name[len(s.Name)-len(suffix(s.Name)):]))
		}
	}
	if len(apps) > 0 && !reflect.DeepEqual(apps, []string{"-2:crds", "-1:operator", "0:workloads"}) {
		t.Errorf("%s: children in the order %v", name, apps)
	}
}

func suffix(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '-' {
			return name[i+1:]
		}
	}
	return name
}
