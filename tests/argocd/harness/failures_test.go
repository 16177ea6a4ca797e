package harness

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// A request that fails through the real server: what the repo-server returns names krc's error in one line,
// krc printed nothing on stdout (the server logs each command's stdout at debug level), and the same server
// then serves the next request.
type failure struct {
	name     string
	project  string // a project of the world, or one made for the case
	edit     func(app *v1alpha1.Application)
	timeout  time.Duration // the request's deadline, when not the controller's default
	server   *Server       // the world's, unless the case needs a sidecar of its own
	command  string        // the plugin command whose one-line error Argo CD shows; "" when Argo CD kills it
	contains []string
	oneOf    []string // at least one of these: what Argo CD says depends on which of its two ends comes first
}

func TestFailuresReachArgoCDAsKrcsOneLine(t *testing.T) {
	w := getWorld(t)
	// a template that does not compile (an unknown variable) and one that computes for minutes
	broken, err := w.project("broken-template", ReplaceInFile("templates/objects/core.jsonnet",
		"for ns in kr.get(env, 'namespaces', [])", "for ns in kr.get(env, 'namespaces', []) + undefined_namespaces"))
	if err != nil {
		t.Fatal(err)
	}
	slow, err := w.project("slow-template", AppendToFile("templates/objects/core.jsonnet",
		"+ [x for x in std.range(1, 30000) for y in std.range(1, 30000) if x * y < 0]\n"))
	if err != nil {
		t.Fatal(err)
	}
	// a sidecar whose krc gives up after 8 s (KRC_PLUGIN_SECONDS; 45 s by default, for the controller's 60 s)
	bounded, err := StartServer(filepath.Join(w.checkout, "deploy", "argocd"), filepath.Join(w.scratch, "plugins-bounded"),
		append(replaced(w.env, "KRC_PLUGIN_SECONDS", "8"), "ARGOCD_CMP_WORKDIR="+filepath.Join(w.scratch, "bounded")))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := bounded.Stop(); err != nil {
			t.Error(err)
		}
	}()
	for _, c := range []failure{
		{name: "unknown environment", project: "shipped", command: "init",
			edit: func(app *v1alpha1.Application) {
				setParameter(app, "environment", v1alpha1.ApplicationSourcePluginParameter{String_: ptr("staging")})
			},
			contains: []string{"unknown environment 'staging'", "dev, prod-eks-gpu"}},
		{name: "template error", project: broken.name, command: "generate",
			contains: []string{"templates/objects/core.jsonnet:21:45: error: Unknown variable: undefined_namespaces"}},
		{name: "parameter of the wrong type", project: "shipped", command: "init",
			edit: func(app *v1alpha1.Application) {
				setParameter(app, "crds", v1alpha1.ApplicationSourcePluginParameter{OptionalArray: &v1alpha1.OptionalArray{Array: []string{"only"}}})
			},
			contains: []string{"plugin parameter 'crds' must be a string parameter"}},
		// Argo CD's deadline first: the server kills krc (SIGTERM to its process group, SIGKILL to krc) and the
		// answer is the deadline or, when the killed command's end reaches the server before the context's, the
		// kill itself ("signal: killed"); krc's stderr never arrives either way
		{name: "generate past Argo CD's deadline", project: slow.name, timeout: 12 * time.Second,
			oneOf: []string{"DeadlineExceeded", "signal: killed"}},
		// krc's own bound first: its one line arrives
		{name: "generate past krc's plugin time", project: slow.name, server: bounded, timeout: 25 * time.Second,
			command: "generate", contains: []string{"krc argocd generate stopped itself", "KRC_PLUGIN_SECONDS"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := w.projects[c.project]
			app := devWorkloads(t, w)
			if c.edit != nil {
				c.edit(app)
			}
			timeout := ControllerTimeout
			if c.timeout != 0 {
				timeout = c.timeout
			}
			server := w.server
			if c.server != nil {
				server = c.server
			}
			before := len(server.Records())
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			started := time.Now()
			objects, err := Generate(ctx, server.SocketDir, p.repo, app)
			if err == nil {
				t.Fatalf("the repo-server returned %d objects, want an error", len(objects))
			}
			if c.timeout != 0 && time.Since(started) > c.timeout+2*time.Second {
				t.Errorf("the error came %s after the request, past its %s deadline", time.Since(started), c.timeout)
			}
			message := err.Error()
			t.Logf("Argo CD shows: %s", message)
			for _, want := range c.contains {
				if !strings.Contains(message, want) {
					t.Errorf("the error does not name %q", want)
				}
			}
			if len(c.oneOf) > 0 && !containsAny(message, c.oneOf) {
				t.Errorf("the error names none of %q", c.oneOf)
			}
			if c.command != "" {
				prefix := "`krc argocd " + c.command + "` failed exit status 2: "
				at := strings.Index(message, prefix)
				if at < 0 {
					t.Fatalf("the error does not come from %q", prefix)
				}
				if said := message[at+len(prefix):]; strings.Contains(said, "\n") || strings.Contains(said, "Traceback") {
					t.Errorf("krc said more than one line: %q", said)
				}
			}
			if c.command == "" {
				checkNoProcessLeft(t, p.repo.Revision)
			}
			checkNothingPrinted(t, server, before, c.command)
			ctx, cancel = context.WithTimeout(context.Background(), ControllerTimeout)
			defer cancel()
			if _, err := Generate(ctx, server.SocketDir, w.projects["shipped"].repo, devWorkloads(t, w)); err != nil {
				t.Fatalf("the server did not serve the next request: %v", err)
			}
		})
	}
}

// checkNothingPrinted finds the failed command in the server's log (its start record, then the debug record
// of its stdout under the same execID, written once the command has ended) and fails unless that stdout was
// empty; with no command named, the last one that started (the one Argo CD's deadline killed).
func checkNothingPrinted(t *testing.T, server *Server, from int, command string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		records := server.Records()[from:]
		execID := ""
		for _, record := range records {
			msg, _ := record["msg"].(string)
			if _, isStart := record["dir"]; isStart && (msg == "krc argocd "+command || command == "" && strings.HasPrefix(msg, "krc argocd ")) {
				execID, _ = record["execID"].(string)
			}
		}
		for _, record := range records {
			if execID != "" && record["execID"] == execID && record["level"] == "debug" {
				if record["msg"] != "" {
					t.Errorf("krc argocd %s printed on stdout: %.300q", command, record["msg"])
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("the server's log does not show the stdout of krc argocd %s (execID %q)", command, execID)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// checkNoProcessLeft fails if a process of the killed request is still running 7 s after it was killed (the
// server sends SIGTERM to the process group, and SIGKILL 5 s later): every process of a request carries
// the revision it asked for in ARGOCD_APP_REVISION, and only this request asked for the slow project's.
func checkNoProcessLeft(t *testing.T, revision string) {
	t.Helper()
	deadline := time.Now().Add(7 * time.Second)
	for {
		left := requestProcesses("ARGOCD_APP_REVISION="+revision, "KRC_CACHE_DIR=/tmp/krc-cmp-")
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes of the killed request still run: %v", left)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// requestProcesses lists the processes whose environment holds every one of the entries (a prefix match for
// each).
func requestProcesses(entries ...string) []string {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var found []string
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "environ"))
		if err != nil {
			continue
		}
		env := strings.Split(string(data), "\x00")
		all := true
		for _, entry := range entries {
			has := false
			for _, e := range env {
				has = has || strings.HasPrefix(e, entry)
			}
			all = all && has
		}
		if all {
			cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
			pid, _ := strconv.Atoi(filepath.Base(dir))
			if pid != os.Getpid() {
				found = append(found, filepath.Base(dir)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
		}
	}
	return found
}

func devWorkloads(t *testing.T, w *world) *v1alpha1.Application {
	t.Helper()
	app, err := ReadApplication(filepath.Join(w.projects["shipped"].repo.Root, "golden", "dev", "manifests", "application-krc-dev-workloads.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return app
}

func setParameter(app *v1alpha1.Application, name string, value v1alpha1.ApplicationSourcePluginParameter) {
	value.Name = name
	parameters := app.Spec.Source.Plugin.Parameters
	for i := range parameters {
		if parameters[i].Name == name {
			parameters[i] = value
			return
		}
	}
	app.Spec.Source.Plugin.Parameters = append(parameters, value)
}

func ptr[T any](v T) *T { return &v }

func containsAny(text string, words []string) bool {
	for _, word := range words {
		if strings.Contains(text, word) {
			return true
		}
	}
	return false
}
