package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// chartRepository is the upstream chart repository beside the checkout (../shared in this workplace), or
// KRC_CHART_DIR.
func chartRepository(t *testing.T) string {
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
			got, err := render(renderArgs{Archive: archive, Release: "kuberay-operator", Namespace: "ray-system",
				KubeVersion: "1.33", Values: c.values})
			if err != nil {
				t.Fatal(err)
			}
			scratch := t.TempDir()
			valuesFile := filepath.Join(scratch, "values.json")
			data, _ := json.Marshal(c.values)
			if err := os.WriteFile(valuesFile, data, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(helm, "template", "kuberay-operator", filepath.Join(charts, c.chart),
				"--namespace", "ray-system", "--kube-version", "1.33", "--skip-crds", "--values", valuesFile)
			cmd.Env = []string{"HOME=" + scratch, "HELM_CACHE_HOME=" + scratch, "HELM_CONFIG_HOME=" + scratch,
				"HELM_DATA_HOME=" + scratch, "KUBECONFIG=" + filepath.Join(scratch, "none")}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("helm template: %v\n%s", err, stderr.String())
			}
			if got != stdout.String() {
				t.Fatalf("engine and helm template differ:\n--- engine\n%s\n--- helm\n%s", got, stdout.String())
			}
			if !strings.Contains(got, "kind: Deployment") || !strings.Contains(got, "namespace: ray-system") {
				t.Fatalf("the render lacks the operator Deployment in ray-system:\n%s", got)
			}
		})
	}
}

func TestServeAnswersOnItsOwnStreamAndSurvivesErrors(t *testing.T) {
	in := strings.NewReader(`{"id":1,"op":"version"}` + "\n" + `not json` + "\n" +
		`{"id":3,"op":"nope"}` + "\n" + `{"id":4,"op":"render","args":{"archive":"AAAA"}}` + "\n")
	var out bytes.Buffer
	if err := serve(in, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 4 answers, got %d: %s", len(lines), out.String())
	}
	var first answer
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.ID != 1 || first.Error != "" {
		t.Fatalf("version answer: %s", lines[0])
	}
	if !strings.Contains(lines[0], `"helm.sh/helm/v4":"v4.2.1"`) {
		t.Fatalf("the engine is not built with Helm v4.2.1: %s", lines[0])
	}
	for i, want := range []string{"malformed request", `unknown op \"nope\"`, "cannot load the chart"} {
		if !strings.Contains(lines[i+1], want) {
			t.Fatalf("answer %d lacks %q: %s", i+2, want, lines[i+1])
		}
	}
}
