package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

func TestMain(m *testing.M) {
	ServeIfAsked() // this test binary is also the argocd-cmp-server the harness starts
	// Argo CD's repo-server side makes a folder per request in the system's temporary folder (util/io/files:
	// CreateTempDir, named by a UUID) and leaves it there: the test binary's own temporary folder, removed at
	// the end, keeps a run from leaving dozens behind in /tmp
	tmp, err := os.MkdirTemp("", "krc-harness-tmp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	_ = os.Setenv("TMPDIR", tmp)
	code := m.Run()
	if shared != nil {
		shared.close()
	}
	_ = os.RemoveAll(tmp)
	os.Exit(code)
}

// A project the harness asks Argo CD about: a Git repository for the cmp server, and a plain copy of the same
// files where krc runs directly.
type project struct {
	name  string
	repo  Repository
	local string
}

// world is what every test shares: one cmp server (a sidecar serves request after request) and the projects.
type world struct {
	checkout string
	scratch  string
	env      []string
	server   *Server
	projects map[string]*project
	answers  map[string][]*unstructured.Unstructured // what the server answered, by project and Application
}

var (
	shared     *world
	sharedErr  error
	sharedOnce sync.Once
)

// getWorld starts the server and builds the shipped and the fixture project, once per test binary.
func getWorld(t *testing.T) *world {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = newWorld() })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	if !shared.server.Alive() {
		t.Fatalf("argocd-cmp-server is not running: %s", shared.server.Log())
	}
	return shared
}

func newWorld() (*world, error) {
	checkout, err := Checkout()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(Krc(checkout)); err != nil {
		return nil, fmt.Errorf("the checkout's krc is not installed (make test installs it): %w", err)
	}
	charts := os.Getenv("KRC_CHART_REPOSITORY")
	if charts == "" {
		charts = "file://" + filepath.Join(filepath.Dir(checkout), "shared", "kuberay", "charts")
	}
	// short: a Unix socket's path must stay under 108 bytes
	scratch, err := os.MkdirTemp("/tmp", "krc-cmp-")
	if err != nil {
		return nil, err
	}
	w := &world{checkout: checkout, scratch: scratch, projects: map[string]*project{},
		answers: map[string][]*unstructured.Unstructured{}}
	w.env = SidecarEnv(checkout, filepath.Join(scratch, "sidecar"), charts)
	for _, folder := range []string{"sidecar/home", "sidecar/tmp", "plugins"} {
		if err := os.MkdirAll(filepath.Join(scratch, folder), 0o755); err != nil {
			return nil, err
		}
	}
	fixture := filepath.Join(checkout, "tests", "fixtures", "project")
	for name, edits := range map[string][]Edit{
		"shipped": nil,
		"fixture": {ReplaceFolders(fixture, "environments", "golden")},
	} {
		if _, err := w.addProject(name, edits...); err != nil {
			return nil, err
		}
	}
	w.server, err = StartServer(filepath.Join(checkout, "deploy", "argocd"), filepath.Join(scratch, "plugins"), w.env)
	if err != nil {
		return nil, err
	}
	return w, nil
}

func (w *world) addProject(name string, edits ...Edit) (*project, error) {
	repo, err := NewRepository(filepath.Join(w.scratch, "repos", name), w.checkout, edits...)
	if err != nil {
		return nil, err
	}
	local := filepath.Join(w.scratch, "local", name)
	if _, err := NewRepository(local, w.checkout, edits...); err != nil {
		return nil, err
	}
	p := &project{name: name, repo: repo, local: local}
	w.projects[name] = p
	return p, nil
}

// project is the world's project of that name, made from the checkout with edits the first time it is asked for.
func (w *world) project(name string, edits ...Edit) (*project, error) {
	if p, ok := w.projects[name]; ok {
		return p, nil
	}
	return w.addProject(name, edits...)
}

func (w *world) close() {
	if w.server != nil {
		_ = w.server.Stop()
	}
	_ = os.RemoveAll(w.scratch)
}

// generate is ask's answer for an Application asked for before (the same name and spec, of the same project),
// as the repo-server's manifest cache gives it for a revision; else it asks.
func (w *world) generate(p *project, app *v1alpha1.Application) ([]*unstructured.Unstructured, error) {
	if objects, ok := w.answers[answerKey(p, app)]; ok {
		return objects, nil
	}
	return w.ask(p, app)
}

// ask asks the server for an Application's manifests under the controller's default deadline.
func (w *world) ask(p *project, app *v1alpha1.Application) ([]*unstructured.Unstructured, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ControllerTimeout)
	defer cancel()
	objects, err := Generate(ctx, w.server.SocketDir, p.repo, app)
	if err == nil {
		w.answers[answerKey(p, app)] = objects
	}
	return objects, err
}

func answerKey(p *project, app *v1alpha1.Application) string {
	spec, _ := json.Marshal(app.Spec)
	return p.name + "\x00" + app.Name + "\x00" + string(spec)
}

// applications are the Argo CD Applications krc rendered into golden/ for every environment of a project.
func applications(t *testing.T, p *project) map[string][]*v1alpha1.Application {
	t.Helper()
	envs, err := filepath.Glob(filepath.Join(p.repo.Root, "golden", "*"))
	if err != nil || len(envs) == 0 {
		t.Fatalf("%s: no golden environments (%v)", p.name, err)
	}
	found := map[string][]*v1alpha1.Application{}
	for _, folder := range envs {
		paths, _ := filepath.Glob(filepath.Join(folder, "manifests", "application-*.yaml"))
		sort.Strings(paths)
		for _, path := range paths {
			app, err := ReadApplication(path)
			if err != nil {
				t.Fatal(err)
			}
			found[filepath.Base(folder)] = append(found[filepath.Base(folder)], app)
		}
	}
	return found
}

// untracked removes the tracking annotation the repo-server adds to every object but CRDs, checking its value
// (annotation tracking: <app>:<group>/<kind>:<namespace>/<name>).
func untracked(t *testing.T, app string, objects []*unstructured.Unstructured) []*unstructured.Unstructured {
	t.Helper()
	const key = "argocd.argoproj.io/tracking-id"
	var out []*unstructured.Unstructured
	for _, object := range objects {
		object = object.DeepCopy()
		annotations := object.GetAnnotations()
		value, tracked := annotations[key]
		isCRD := object.GetKind() == "CustomResourceDefinition"
		if tracked == isCRD {
			t.Errorf("%s: tracking annotation %q on %s (a CRD never has one, anything else always)", app, value, Key(object))
		}
		if tracked {
			want := fmt.Sprintf("%s:%s/%s:%s/%s", app, object.GroupVersionKind().Group, object.GetKind(), object.GetNamespace(), object.GetName())
			if value != want {
				t.Errorf("%s: tracking id %q, want %q", app, value, want)
			}
			delete(annotations, key)
			if len(annotations) == 0 {
				unstructured.RemoveNestedField(object.Object, "metadata", "annotations")
			} else {
				object.SetAnnotations(annotations)
			}
		}
		out = append(out, object)
	}
	return out
}

func keys(objects []*unstructured.Unstructured) []string {
	var names []string
	for _, object := range objects {
		names = append(names, Key(object))
	}
	return names
}

func byKey(objects []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	found := map[string]*unstructured.Unstructured{}
	for _, object := range objects {
		found[Key(object)] = object
	}
	return found
}

func role(app *v1alpha1.Application) string {
	return app.GetLabels()["krc.dev/argocd-role"]
}

func kinds(objects []*unstructured.Unstructured) string {
	counts := map[string]int{}
	for _, object := range objects {
		counts[object.GetKind()]++
	}
	var parts []string
	for kind, n := range counts {
		parts = append(parts, fmt.Sprintf("%s=%d", kind, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
