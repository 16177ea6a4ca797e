package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func answerID(line string) int {
	var ans answer
	_ = json.Unmarshal([]byte(line), &ans)
	return ans.ID
}

// chartRepository is the upstream chart repository beside the checkout (../shared in this workplace), or
// KRC_CHART_DIR.
func chartRepository(t testing.TB) string {
	dir := os.Getenv("KRC_CHART_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "kuberay", "charts")
	}
	if _, err := os.Stat(filepath.Join(dir, "index.yaml")); err != nil {
		t.Fatalf("no chart repository at %s (set KRC_CHART_DIR): %v", dir, err)
	}
	return dir
}

// helmCLI builds the real helm command from the module's pinned Helm, with the version the release build stamps.
func helmCLI(t *testing.T) string {
	out := filepath.Join(t.TempDir(), "helm")
	build := exec.Command("go", "build", "-o", out,
		"-ldflags", "-X helm.sh/helm/v4/internal/version.version=v4.2.1", "helm.sh/helm/v4/cmd/helm")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building helm: %v\n%s", err, msg)
	}
	return out
}

// helmTemplate is what `helm template RELEASE CHART --namespace NS --kube-version 1.33 --skip-crds -f values`
// prints for a chart archive.
func helmTemplate(t *testing.T, helm string, archive []byte, release, namespace string, values map[string]any) string {
	scratch := t.TempDir()
	chart := filepath.Join(scratch, "chart.tgz")
	valuesFile := filepath.Join(scratch, "values.json")
	data, _ := json.Marshal(values)
	if os.WriteFile(chart, archive, 0o600) != nil || os.WriteFile(valuesFile, data, 0o600) != nil {
		t.Fatal("cannot write the chart")
	}
	cmd := exec.Command(helm, "template", release, chart, "--namespace", namespace, "--kube-version", "1.33",
		"--skip-crds", "--values", valuesFile)
	cmd.Env = []string{"HOME=" + scratch, "HELM_CACHE_HOME=" + scratch, "HELM_CONFIG_HOME=" + scratch,
		"HELM_DATA_HOME=" + scratch, "KUBECONFIG=" + filepath.Join(scratch, "none")}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template: %v\n%s", err, stderr.String())
	}
	return stdout.String()
}

func TestRenderEqualsHelmTemplateCLI(t *testing.T) {
	charts := chartRepository(t)
	helm := helmCLI(t)
	cases := []struct {
		chart  string
		values map[string]any
	}{
		{"kuberay-operator-1.5.2.tgz", map[string]any{}},
		{"kuberay-operator-1.6.2.tgz", map[string]any{"featureGates": []any{
			map[string]any{"name": "RayClusterStatusConditions", "enabled": true}}}},
		{"kuberay-operator-1.7.0.tgz", map[string]any{"singleNamespaceInstall": true,
			"resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "512Mi"}}}},
	}
	for _, c := range cases {
		t.Run(c.chart, func(t *testing.T) {
			archive, err := os.ReadFile(filepath.Join(charts, c.chart))
			if err != nil {
				t.Fatal(err)
			}
			got, err := render(renderArgs{Archive: archive, ArchiveSHA: digest(archive), Release: "kuberay-operator", Namespace: "ray-system",
				KubeVersion: "1.33", Values: c.values})
			if err != nil {
				t.Fatal(err)
			}
			want := helmTemplate(t, helm, archive, "kuberay-operator", "ray-system", c.values)
			if got != want {
				t.Fatalf("engine and helm template differ:\n--- engine\n%s\n--- helm\n%s", got, want)
			}
			if !strings.Contains(got, "kind: Deployment") || !strings.Contains(got, "namespace: ray-system") {
				t.Fatalf("the render lacks the operator Deployment in ray-system:\n%s", got)
			}
			// the second render of an archive builds its chart from the files the first unpacked: still Helm's
			again, err := render(renderArgs{ArchiveSHA: digest(archive), Release: "kuberay-operator",
				Namespace: "ray-system", KubeVersion: "1.33", Values: c.values})
			if err != nil || again != want {
				t.Fatalf("the second render of the archive differs from helm template (%v):\n%s", err, again)
			}
		})
	}
}

func TestServeAnswersOnItsOwnStreamAndSurvivesErrors(t *testing.T) {
	in := strings.NewReader(`{"id":1,"op":"version"}` + "\n" + `not json` + "\n" +
		`{"id":3,"op":"nope"}` + "\n" + `{"id":4,"op":"render","args":{"archiveSha256":"00"}}` + "\n")
	var out bytes.Buffer
	if err := serve(in, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	sort.Slice(lines, func(i, j int) bool { return answerID(lines[i]) < answerID(lines[j]) }) // any order
	if len(lines) != 4 {
		t.Fatalf("want 4 answers, got %d: %s", len(lines), out.String())
	}
	// sorted by id: the malformed line's answer has none (0), then 1, 3, 4
	var version answer
	if err := json.Unmarshal([]byte(lines[1]), &version); err != nil || version.ID != 1 || version.Error != "" {
		t.Fatalf("version answer: %s", lines[1])
	}
	if !strings.Contains(lines[1], `"helm.sh/helm/v4":"v4.2.1"`) {
		t.Fatalf("the engine is not built with Helm v4.2.1: %s", lines[1])
	}
	for i, want := range map[int]string{0: "malformed request", 2: `unknown op \"nope\"`, 3: `"needArchive":true`} {
		if !strings.Contains(lines[i], want) {
			t.Fatalf("answer %d lacks %q: %s", i, want, lines[i])
		}
	}
}

// The engine started by hand, without krc's pipes, says how it is run and exits 2 instead of failing on a read.
func TestStartedWithoutPipesExitsTwoWithAHint(t *testing.T) {
	if os.Getenv("KRC_ENGINE_RUN_MAIN") == "1" {
		os.Args = []string{"krc-engine"}
		main()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartedWithoutPipesExitsTwoWithAHint$")
	cmd.Env = append(os.Environ(), "KRC_ENGINE_RUN_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	exit, ok := err.(*exec.ExitError)
	if !ok || exit.ExitCode() != 2 {
		t.Fatalf("want exit 2, got %v (stderr: %s)", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "requests on fd 3 and answers on fd 4") {
		t.Fatalf("the hint is missing: %s", stderr.String())
	}
}

// Given the two pipes, as krc starts it, the same binary answers on fd 4.
func TestStartedWithPipesAnswersOnFourth(t *testing.T) {
	requestsRead, requestsWrite, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	answersRead, answersWrite, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStartedWithoutPipesExitsTwoWithAHint$")
	cmd.Env = append(os.Environ(), "KRC_ENGINE_RUN_MAIN=1")
	cmd.ExtraFiles = []*os.File{requestsRead, answersWrite}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	requestsRead.Close()
	answersWrite.Close()
	if _, err := requestsWrite.Write([]byte(`{"id":7,"op":"version"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	requestsWrite.Close()
	answers, err := io.ReadAll(answersRead)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("engine exited with %v", err)
	}
	if !strings.HasPrefix(string(answers), `{"id":7,"result":{`) {
		t.Fatalf("unexpected answer on fd 4: %q", answers)
	}
	if strings.Contains(stdout.String(), `"id":7`) {
		t.Fatalf("an answer reached stdout: %q", stdout.String())
	}
}

// Renders run side by side in one process (krc sends a batch ahead): each answer is the one its request asks for,
// the archive is sent once and named by digest after that, and a wrong digest is refused.
func TestConcurrentRendersKeepTheirOwnAnswers(t *testing.T) {
	charts := chartRepository(t)
	archive, err := os.ReadFile(filepath.Join(charts, "kuberay-operator-1.7.0.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	sha := digest(archive)
	if _, err := render(renderArgs{Archive: archive, ArchiveSHA: "0" + sha[1:], Release: "r"}); err == nil ||
		!strings.Contains(err.Error(), "sha256") {
		t.Fatalf("a wrong digest was accepted: %v", err)
	}
	if _, err := render(renderArgs{Archive: archive, ArchiveSHA: sha, Release: "first"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, namespace := fmt.Sprintf("release-%d", i), fmt.Sprintf("ns-%d", i)
			got, err := render(renderArgs{ArchiveSHA: sha, Release: release, Namespace: namespace,
				KubeVersion: "1.33", Values: map[string]any{"replicas": i + 1}})
			if err != nil {
				errs <- err
				return
			}
			if !strings.Contains(got, "namespace: "+namespace+"\n") || strings.Contains(got, "ns-"+fmt.Sprint(i+1)+"\n") ||
				!strings.Contains(got, fmt.Sprintf("replicas: %d\n", i+1)) {
				errs <- fmt.Errorf("render %d holds another request's values:\n%s", i, got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// An archive handed over by one request is there for the next, which names it by digest, although the two are
// answered side by side.
func TestAnArchiveIsInPlaceForTheRequestsAfterIt(t *testing.T) {
	archive, err := os.ReadFile(filepath.Join(chartRepository(t), "kuberay-operator-1.6.2.tgz"))
	if err != nil {
		t.Fatal(err)
	}
	sha := digest(archive)
	first, _ := json.Marshal(map[string]any{"id": 1, "op": "render", "args": renderArgs{Archive: archive,
		ArchiveSHA: sha, Release: "a"}})
	var lines []string
	lines = append(lines, string(first))
	for i := 2; i <= 20; i++ {
		lines = append(lines, fmt.Sprintf(`{"id":%d,"op":"render","args":{"archiveSha256":%q,"release":"r%d"}}`, i, sha, i))
	}
	var out bytes.Buffer
	if err := serve(strings.NewReader(strings.Join(lines, "\n")+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	answers := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(answers) != 20 {
		t.Fatalf("want 20 answers, got %d", len(answers))
	}
	for _, line := range answers {
		var ans answer
		if err := json.Unmarshal([]byte(line), &ans); err != nil || ans.Error != "" {
			t.Fatalf("answer %d failed: %s", ans.ID, line[:min(len(line), 300)])
		}
	}
}
