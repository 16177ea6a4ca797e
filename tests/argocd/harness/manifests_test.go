package harness

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	"github.com/argoproj/argo-cd/v3/util/tgzstream"
)

// Every Application krc renders (the root and its crds, operator and workloads children, for every environment
// of the shipped project and of the tests' fixture project) asked for through the real cmp server and the
// repo-server's GenerateManifests: the objects equal what `krc argocd generate` prints when run directly, in
// the same order, and what golden/ holds.
func TestEveryApplicationThroughTheRepoServer(t *testing.T) {
	w := getWorld(t)
	direct := replaced(w.env, "KRC_CACHE_DIR", filepath.Join(w.scratch, "direct-cache")) // compiled apart
	count, from := 0, len(w.server.Records())
	for _, name := range []string{"shipped", "fixture"} {
		p := w.projects[name]
		all := applications(t, p)
		var envs []string
		for env := range all {
			envs = append(envs, env)
		}
		sort.Strings(envs)
		for _, env := range envs {
			apps := all[env]
			golden := filepath.Join(p.repo.Root, "golden", env)
			if len(apps) != 4 {
				t.Errorf("%s/%s: %d Applications in golden/, want the root and three children", name, env, len(apps))
			}
			for _, app := range apps {
				count++
				t.Run(name+"/"+app.Name, func(t *testing.T) {
					got, err := w.ask(p, app)
					if err != nil {
						t.Fatalf("repo-server: %v", err)
					}
					objects := untracked(t, app.Name, got)
					printed, err := RunKrc(w.checkout, p.local, direct, Parameters(app))
					if err != nil {
						t.Fatal(err)
					}
					sameObjects(t, "krc argocd generate run directly", objects, printed, true)
					checkGolden(t, golden, app, objects)
					t.Logf("%s: %s", app.Name, kinds(objects))
				})
			}
		}
	}
	if count != 16 {
		t.Errorf("%d Applications asked for, want 16 (2 projects x 2 environments x 4)", count)
	}
	// plugin.yaml has no discover block: the repository goes to the plugin once per request, not twice
	records := w.server.Records()
	if got := calls(records[from:], "GenerateManifest"); got != count {
		t.Errorf("%d GenerateManifest calls for %d requests", got, count)
	}
	if got := calls(records[from:], "MatchRepository"); got != 0 {
		t.Errorf("%d MatchRepository calls: each sends the whole repository before GenerateManifest does", got)
	}
	if !logged(records, "No discovery configuration is defined for plugin krc") {
		t.Error("the server did not start without discovery")
	}
}

// The repo-server sends the plugin the whole checkout (.git and golden/ too: what krc's plugin never reads);
// its --plugin-tar-exclude globs (argocd-cmd-params-cm reposerver.plugin.tar.exclusions) leave them out, and
// the answer stays the same.
func TestTarExclusionsLeaveTheAnswerAlone(t *testing.T) {
	w := getWorld(t)
	p := w.projects["shipped"]
	app := applications(t, p)["prod-eks-gpu"][2] // the workloads
	whole, err := w.generate(p, app)
	if err != nil {
		t.Fatal(err)
	}
	excluded := []string{".git", "golden"}
	ctx, cancel := context.WithTimeout(context.Background(), ControllerTimeout)
	defer cancel()
	trimmed, err := Generate(ctx, w.server.SocketDir, p.repo, app, repository.WithCMPTarExcludedGlobs(excluded))
	if err != nil {
		t.Fatal(err)
	}
	sameObjects(t, "the answer with the whole checkout", trimmed, whole, true)
	for _, globs := range [][]string{nil, excluded} {
		file, count, _, err := tgzstream.CompressFiles(p.repo.Root, nil, globs)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := file.Stat()
		t.Logf("tarball without %v: %d files, %d bytes", globs, count, info.Size())
		tgzstream.CloseAndDelete(file)
	}
}

// calls counts the gRPC calls of a method the server finished (its request log).
func calls(records []map[string]any, method string) int {
	n := 0
	for _, record := range records {
		if record["grpc.method"] == method && record["msg"] == "finished call" {
			n++
		}
	}
	return n
}

func logged(records []map[string]any, text string) bool {
	for _, record := range records {
		if msg, _ := record["msg"].(string); strings.Contains(msg, text) {
			return true
		}
	}
	return false
}

// checkGolden compares what one Application deploys with golden/<env>/ for its role.
func checkGolden(t *testing.T, golden string, app *v1alpha1.Application, objects []*unstructured.Unstructured) {
	t.Helper()
	manifests, err := ReadObjects(filepath.Join(golden, "manifests"), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var want []*unstructured.Unstructured
	switch role(app) {
	case "root": // the app-of-apps deploys the other Applications
		for _, object := range manifests {
			if object.GetKind() == "Application" && object.GetName() != app.Name {
				want = append(want, object)
			}
		}
	case "crds": // the foundations: the Namespaces and the chart's CRDs, the CRDs checked against the lock
		var crds []*unstructured.Unstructured
		for _, object := range objects {
			if object.GetKind() == "CustomResourceDefinition" {
				crds = append(crds, object)
			}
		}
		checkCRDs(t, golden, crds)
		want = append(want, crds...)
		for _, object := range manifests {
			if object.GetKind() == "Namespace" {
				want = append(want, object)
			}
		}
	case "operator": // the chart's objects as krc's Helm rendered them in review
		want, err = ReadObjects(filepath.Join(golden, "chart"), "*.yaml")
		if err != nil {
			t.Fatal(err)
		}
	case "workloads": // everything else krc renders
		for _, object := range manifests {
			if kind := object.GetKind(); kind != "Application" && kind != "Namespace" {
				want = append(want, object)
			}
		}
	default:
		t.Fatalf("%s: no krc.dev/argocd-role label", app.Name)
	}
	if len(want) == 0 {
		t.Fatalf("%s: golden/ holds nothing for role %s", app.Name, role(app))
	}
	sameObjects(t, "golden/", objects, want, false)
}

// checkCRDs compares the CRDs the repo-server returned with golden's crds.lock.yaml: the same names, and each
// one's digest, once the plugin's sync annotations are taken off, the digest krc recorded.
func checkCRDs(t *testing.T, golden string, crds []*unstructured.Unstructured) {
	t.Helper()
	lock, err := CRDLock(golden)
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) != len(lock) {
		t.Errorf("%d CRDs, the lock names %d", len(crds), len(lock))
	}
	for _, crd := range crds {
		bare := crd.DeepCopy()
		annotations := bare.GetAnnotations()
		if annotations["argocd.argoproj.io/sync-options"] != "ServerSideApply=true,Prune=false,Delete=false" ||
			annotations["argocd.argoproj.io/sync-wave"] != "-10" {
			t.Errorf("%s: sync annotations %v", crd.GetName(), annotations)
		}
		delete(annotations, "argocd.argoproj.io/sync-options")
		delete(annotations, "argocd.argoproj.io/sync-wave")
		bare.SetAnnotations(annotations)
		if len(annotations) == 0 {
			unstructured.RemoveNestedField(bare.Object, "metadata", "annotations")
		}
		digest, err := CanonicalDigest(bare.Object)
		if err != nil {
			t.Fatal(err)
		}
		if want, ok := lock[crd.GetName()]; !ok || digest != want {
			t.Errorf("%s: digest %s, the lock says %q", crd.GetName(), digest, want)
		}
	}
}

// sameObjects fails unless got and want hold the same objects (in the same order when ordered).
func sameObjects(t *testing.T, what string, got, want []*unstructured.Unstructured, ordered bool) {
	t.Helper()
	gotKeys, wantKeys := keys(got), keys(want)
	if !ordered {
		sort.Strings(gotKeys)
		sort.Strings(wantKeys)
	}
	if !reflect.DeepEqual(gotKeys, wantKeys) {
		t.Errorf("objects differ from %s:\n got  %s\n want %s", what, strings.Join(gotKeys, ", "), strings.Join(wantKeys, ", "))
		return
	}
	wanted := byKey(want)
	for _, object := range got {
		expected := wanted[Key(object)]
		if !reflect.DeepEqual(object.Object, expected.Object) {
			a, _ := json.MarshalIndent(object.Object, "", " ")
			b, _ := json.MarshalIndent(expected.Object, "", " ")
			t.Errorf("%s differs from %s:\n got  %.2000s\n want %.2000s", Key(object), what, a, b)
		}
	}
}

// replaced is env with one variable set to another value.
func replaced(env []string, name, value string) []string {
	var out []string
	for _, entry := range env {
		if !strings.HasPrefix(entry, name+"=") {
			out = append(out, entry)
		}
	}
	return append(out, name+"="+value)
}
