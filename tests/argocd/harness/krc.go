package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/gitops-engine/pkg/utils/kube"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// Krc is the checkout's own krc, installed from the same source the sidecar image's wheel is built from.
func Krc(checkout string) string {
	return filepath.Join(checkout, ".venv", "bin", "krc")
}

// SidecarEnv is the krc container's environment (deploy/argocd/Dockerfile: krc on PATH, KRC_CACHE_DIR on the
// sidecar's own /tmp volume, PYTHONDONTWRITEBYTECODE; HOME of uid 999) with this machine's folders under
// scratch. One addition: the chart repository mirror (the sidecar's init downloads from the environments' URL;
// there is no network here).
func SidecarEnv(checkout, scratch, chartRepository string) []string {
	return []string{
		"PATH=" + filepath.Join(checkout, ".venv", "bin") + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + filepath.Join(scratch, "home"),
		"TMPDIR=" + filepath.Join(scratch, "tmp"),
		"KRC_CACHE_DIR=" + filepath.Join(scratch, "tmp", "krc-cache"),
		"PYTHONDONTWRITEBYTECODE=1",
		"KRC_CHART_REPOSITORY=" + chartRepository,
	}
}

// Parameters are an Application's plugin parameters (all of krc's are strings).
func Parameters(app *v1alpha1.Application) map[string]string {
	values := map[string]string{}
	source := app.Spec.GetSource()
	if source.Plugin == nil {
		return values
	}
	for _, p := range source.Plugin.Parameters {
		if p.String_ != nil {
			values[p.Name] = *p.String_
		}
	}
	return values
}

// RunKrc runs `krc argocd init` and then `krc argocd generate` in a project folder with the request's
// choices as command-line options (krc's local way of asking, not Argo CD's variables), and returns the
// objects generate printed, split as the cmp server splits them.
func RunKrc(checkout, project string, env []string, parameters map[string]string) ([]*unstructured.Unstructured, error) {
	var options []string
	for _, name := range []string{"environment", "crds", "applications", "operator", "cluster"} {
		if value, ok := parameters[name]; ok {
			options = append(options, "--"+name, value)
		}
	}
	if _, err := runCommand(project, env, Krc(checkout), append([]string{"argocd", "init"}, options...)...); err != nil {
		return nil, err
	}
	stdout, err := runCommand(project, env, Krc(checkout), append([]string{"argocd", "generate"}, options...)...)
	if err != nil {
		return nil, err
	}
	return kube.SplitYAML(stdout)
}

// runCommand runs a program (krc, git) in dir with env as its environment (nil: this process's) and returns what it
// printed; when it fails, the error carries what it said on stderr.
func runCommand(dir string, env []string, program string, args ...string) ([]byte, error) {
	cmd := exec.Command(program, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", filepath.Base(program), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// ReadObjects reads every object of the YAML files in a folder (sorted by name), as the cmp server splits them.
func ReadObjects(folder string, pattern string) ([]*unstructured.Unstructured, error) {
	paths, err := filepath.Glob(filepath.Join(folder, pattern))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var objects []*unstructured.Unstructured
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		found, err := kube.SplitYAML(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		objects = append(objects, found...)
	}
	return objects, nil
}

// readStrictYAML reads one object of type T from a YAML file, refusing fields T does not have (a misspelt field
// would otherwise be dropped unseen).
func readStrictYAML[T any](path string) (*T, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var object T
	if err := yaml.UnmarshalStrict(data, &object); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &object, nil
}

// ReadApplication reads one Argo CD Application from a YAML file.
func ReadApplication(path string) (*v1alpha1.Application, error) {
	return readStrictYAML[v1alpha1.Application](path)
}

// CRDLock is golden/<env>/crds.lock.yaml: the chart's CRDs by name with the sha256 of each one's canonical form.
func CRDLock(golden string) (map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(golden, "crds.lock.yaml"))
	if err != nil {
		return nil, err
	}
	var lock struct {
		CRDs []struct {
			Name   string `json:"name"`
			Sha256 string `json:"sha256"`
		} `json:"crds"`
	}
	if err := yaml.Unmarshal(data, &lock); err != nil {
		return nil, err
	}
	digests := map[string]string{}
	for _, crd := range lock.CRDs {
		digests[crd.Name] = crd.Sha256
	}
	return digests, nil
}

// CanonicalDigest is krc's digest of a document (compiler/k8s/crds.py canonical_json: keys sorted, no spaces,
// characters as they are), computed over the object Argo CD parsed.
func CanonicalDigest(object map[string]any) (string, error) {
	var buffer bytes.Buffer
	encoder := json.NewEncoder(&buffer)
	encoder.SetEscapeHTML(false)
	if err := encoder.Encode(object); err != nil {
		return "", err
	}
	// Go's encoder escapes the line and paragraph separators, which Python's json.dumps writes as they are
	text := strings.NewReplacer(`\u2028`, "\u2028", `\u2029`, "\u2029").Replace(strings.TrimSuffix(buffer.String(), "\n"))
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:]), nil
}

// Key names an object as Argo CD's resource keys do: group/kind, namespace, name.
func Key(object *unstructured.Unstructured) string {
	key := kube.GetResourceKey(object)
	return key.String()
}
