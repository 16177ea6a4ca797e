package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// chartCRDs reads the CRDs of an upstream kuberay-operator chart archive, as JSON, by file name.
func chartCRDs(t *testing.T, version string) map[string]json.RawMessage {
	t.Helper()
	archive, err := os.Open(filepath.Join(chartRepository(t), "kuberay-operator-"+version+".tgz"))
	if err != nil {
		t.Fatal(err)
	}
	defer archive.Close()
	unzipped, err := gzip.NewReader(archive)
	if err != nil {
		t.Fatal(err)
	}
	reader := tar.NewReader(unzipped)
	out := map[string]json.RawMessage{}
	for {
		header, err := reader.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(header.Name, "kuberay-operator/crds/") || !strings.HasSuffix(header.Name, ".yaml") {
			continue
		}
		data, err := io.ReadAll(reader)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(header.Name)] = yamlToJSON(t, data)
	}
	if len(out) == 0 {
		t.Fatalf("no CRDs in kuberay-operator-%s.tgz", version)
	}
	return out
}

func yamlToJSON(t *testing.T, data []byte) json.RawMessage {
	t.Helper()
	converted, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return converted
}

func argoCRD(t *testing.T, name string) json.RawMessage {
	t.Helper()
	dir := os.Getenv("KRC_ARGOCD_DIR")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "argocd")
	}
	data, err := os.ReadFile(filepath.Join(dir, "crds", name))
	if err != nil {
		t.Fatalf("Argo CD's CRDs (set KRC_ARGOCD_DIR): %v", err)
	}
	return yamlToJSON(t, data)
}

const rayCluster = `{
  "apiVersion": "ray.io/v1", "kind": "RayCluster",
  "metadata": {"name": "demo", "namespace": "ray"},
  "spec": {
    "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [
      {"name": "ray-head", "image": "rayproject/ray:2.58.0-py312",
       "resources": {"limits": {"cpu": "2", "memory": "8Gi"}}}]}}},
    "workerGroupSpecs": [{"groupName": "workers", "replicas": 1, "minReplicas": 0, "maxReplicas": 4,
      "rayStartParams": {}, "template": {"spec": {"containers": [
        {"name": "ray-worker", "image": "rayproject/ray:2.58.0-py312"}]}}}]
  }
}`

// edited returns rayCluster with change applied to its decoded form.
func edited(t *testing.T, change func(obj map[string]any)) json.RawMessage {
	t.Helper()
	var obj map[string]any
	if err := json.Unmarshal([]byte(rayCluster), &obj); err != nil {
		t.Fatal(err)
	}
	change(obj)
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func spec(obj map[string]any) map[string]any { return obj["spec"].(map[string]any) }

func validateOne(t *testing.T, crd json.RawMessage, object, old json.RawMessage) objectResult {
	t.Helper()
	args, err := json.Marshal(validateArgs{CRD: crd, Objects: []validateItem{{Object: object, Old: old}}})
	if err != nil {
		t.Fatal(err)
	}
	answer, err := validateOp(args)
	if err != nil {
		t.Fatal(err)
	}
	result := answer.(validateResult)
	if len(result.Results) != 1 {
		t.Fatalf("%d results for one object", len(result.Results))
	}
	return result.Results[0]
}

func errorAt(result objectResult, field string) *fieldError {
	for i := range result.Errors {
		if result.Errors[i].Field == field {
			return &result.Errors[i]
		}
	}
	return nil
}

func TestValidRayClusterOnEveryChart(t *testing.T) {
	for _, version := range []string{"1.5.2", "1.6.2", "1.7.0"} {
		crd := chartCRDs(t, version)["ray.io_rayclusters.yaml"]
		result := validateOne(t, crd, json.RawMessage(rayCluster), nil)
		if len(result.Errors) != 0 || result.Operation != "create" {
			t.Errorf("%s: a valid RayCluster: %s %+v", version, result.Operation, result.Errors)
		}
	}
}

func TestUnknownFieldIsReportedWithItsPath(t *testing.T) {
	crd := chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"]
	object := edited(t, func(obj map[string]any) {
		group := spec(obj)["workerGroupSpecs"].([]any)[0].(map[string]any)
		group["replica"] = 2 // a typo of replicas
	})
	result := validateOne(t, crd, object, nil)
	found := errorAt(result, "spec.workerGroupSpecs[0].replica")
	if found == nil || found.Type != "UnknownField" || found.Origin != "pruning" {
		t.Fatalf("want the pruned field as an error, got %+v", result.Errors)
	}
	if !reflect.DeepEqual(found.Path, []any{"spec", "workerGroupSpecs", 0, "replica"}) {
		t.Errorf("path %#v", found.Path)
	}
	group := result.Object["spec"].(map[string]any)["workerGroupSpecs"].([]any)[0].(map[string]any)
	if _, kept := group["replica"]; kept {
		t.Errorf("the returned object still holds the pruned field")
	}
}

func TestWrongTypeIsTypeInvalid(t *testing.T) {
	crd := chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"]
	object := edited(t, func(obj map[string]any) {
		spec(obj)["workerGroupSpecs"].([]any)[0].(map[string]any)["replicas"] = "2"
	})
	result := validateOne(t, crd, object, nil)
	found := errorAt(result, "spec.workerGroupSpecs[0].replicas")
	if found == nil || found.Type != "TypeInvalid" || found.Origin != "schema" {
		t.Fatalf("want a type error at replicas, got %+v", result.Errors)
	}
	if !strings.Contains(found.Message, "must be of type integer") {
		t.Errorf("message %q", found.Message)
	}
}

func TestCELRuleViolation(t *testing.T) {
	crd := chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"]
	object := edited(t, func(obj map[string]any) { spec(obj)["managedBy"] = "someone-else" })
	result := validateOne(t, crd, object, nil)
	found := errorAt(result, "spec.managedBy")
	if found == nil || found.Origin != "cel" || found.Type != "Invalid" || found.UpdateOnly {
		t.Fatalf("want the CEL rule on managedBy, got %+v", result.Errors)
	}
	if !strings.Contains(found.Detail, "must be either 'ray.io/kuberay-operator'") {
		t.Errorf("detail %q", found.Detail)
	}
}

func TestDefaultsAreInTheResult(t *testing.T) {
	crd := chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"]
	object := edited(t, func(obj map[string]any) {
		group := spec(obj)["workerGroupSpecs"].([]any)[0].(map[string]any)
		delete(group, "replicas")
		delete(group, "minReplicas")
		delete(group, "maxReplicas")
	})
	result := validateOne(t, crd, object, nil)
	if len(result.Errors) != 0 {
		t.Fatalf("errors: %+v", result.Errors)
	}
	group := result.Object["spec"].(map[string]any)["workerGroupSpecs"].([]any)[0].(map[string]any)
	// the 1.7.0 CRD defaults replicas and minReplicas to 0, maxReplicas to 2147483647, numOfHosts to 1
	want := map[string]any{"replicas": int64(0), "minReplicas": int64(0), "maxReplicas": int64(2147483647),
		"numOfHosts": int64(1)}
	for key, value := range want {
		if group[key] != value {
			t.Errorf("%s defaulted to %#v, want %#v", key, group[key], value)
		}
	}
}

// An object default holding a field its schema does not name is pruned before it is applied, as the API server
// prunes it, for each object validated against the compiled CRD (applying the default to one object leaves it as
// it was for the next); the schema's other defaults and checks are untouched.
func TestAnObjectDefaultIsPrunedBeforeItIsApplied(t *testing.T) {
	crd := json.RawMessage(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	"metadata":{"name":"things.x.io"},"spec":{"group":"x.io","scope":"Namespaced",
	"names":{"kind":"Thing","plural":"things"},"versions":[{"name":"v1","served":true,"storage":true,
	"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{
	"conf":{"type":"object","properties":{"a":{"type":"integer"}},"default":{"a":1,"junk":2}},
	"count":{"type":"integer","minimum":0,"default":3}}}}}}}]}}`)
	for _, round := range []string{"first", "again"} {
		result := validateOne(t, crd, json.RawMessage(`{"apiVersion":"x.io/v1","kind":"Thing",
			"metadata":{"name":"t","namespace":"n"},"spec":{}}`), nil)
		if len(result.Errors) != 0 {
			t.Fatalf("%s: errors %+v", round, result.Errors)
		}
		got := result.Object["spec"].(map[string]any)
		if conf, _ := got["conf"].(map[string]any); len(conf) != 1 || conf["a"] != int64(1) || got["count"] != int64(3) {
			t.Errorf("%s: defaulted spec %#v, want conf {a: 1} (junk pruned) and count 3", round, got)
		}
		wrong := validateOne(t, crd, json.RawMessage(`{"apiVersion":"x.io/v1","kind":"Thing",
			"metadata":{"name":"t","namespace":"n"},"spec":{"count":-1}}`), nil)
		if errorAt(wrong, "spec.count") == nil {
			t.Errorf("%s: a count below the minimum was not reported: %+v", round, wrong.Errors)
		}
	}
}

func TestManagedByIsImmutableOnUpdateOnly(t *testing.T) {
	crd := chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"]
	old := edited(t, func(obj map[string]any) { spec(obj)["managedBy"] = "ray.io/kuberay-operator" })
	changed := edited(t, func(obj map[string]any) { spec(obj)["managedBy"] = "kueue.x-k8s.io/multikueue" })

	result := validateOne(t, crd, changed, old)
	found := errorAt(result, "spec.managedBy")
	if result.Operation != "update" || found == nil || !found.UpdateOnly || found.Origin != "cel" {
		t.Fatalf("want an update-only rejection of spec.managedBy, got %s %+v", result.Operation, result.Errors)
	}
	if !strings.Contains(found.Detail, "the managedBy field is immutable") {
		t.Errorf("detail %q", found.Detail)
	}
	if created := validateOne(t, crd, changed, nil); len(created.Errors) != 0 {
		t.Errorf("the same object created afresh: %+v", created.Errors)
	}
	if same := validateOne(t, crd, old, old); len(same.Errors) != 0 {
		t.Errorf("an unchanged update: %+v", same.Errors)
	}
	// the rule is in 1.5.2's CRD already
	if before := validateOne(t, chartCRDs(t, "1.5.2")["ray.io_rayclusters.yaml"], changed, old); errorAt(before, "spec.managedBy") == nil {
		t.Errorf("1.5.2: %+v", before.Errors)
	}
}

func TestRatchetingKeepsAnUnchangedInvalidValue(t *testing.T) {
	crd := chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"]
	// stored before the CRD had its enum and its CEL rule: an upgrade strategy and a manager now refused
	invalid := func(obj map[string]any) {
		spec(obj)["upgradeStrategy"] = map[string]any{"type": "Replace"}
	}
	old := edited(t, invalid)
	if created := validateOne(t, crd, old, nil); errorAt(created, "spec.upgradeStrategy.type") == nil {
		t.Fatalf("upgradeStrategy Replace should be rejected on create: %+v", created.Errors)
	}
	elsewhere := edited(t, func(obj map[string]any) {
		invalid(obj)
		spec(obj)["workerGroupSpecs"].([]any)[0].(map[string]any)["replicas"] = 3
	})
	if updated := validateOne(t, crd, elsewhere, old); len(updated.Errors) != 0 {
		t.Errorf("an update that keeps the invalid value: %+v", updated.Errors)
	}
	worse := edited(t, func(obj map[string]any) { spec(obj)["upgradeStrategy"] = map[string]any{"type": "Rolling"} })
	found := errorAt(validateOne(t, crd, worse, old), "spec.upgradeStrategy.type")
	if found == nil || found.UpdateOnly || found.Type != "NotSupported" {
		t.Errorf("a changed invalid value on update: %+v", found)
	}
	// CEL rules ratchet too: a stored manager the rule now refuses stays, unchanged
	managed := func(obj map[string]any) { spec(obj)["managedBy"] = "example.com/old-manager" }
	oldManaged := edited(t, managed)
	if created := validateOne(t, crd, oldManaged, nil); errorAt(created, "spec.managedBy") == nil {
		t.Fatalf("an unknown manager should be rejected on create")
	}
	keeps := edited(t, func(obj map[string]any) {
		managed(obj)
		spec(obj)["workerGroupSpecs"].([]any)[0].(map[string]any)["replicas"] = 3
	})
	if updated := validateOne(t, crd, keeps, oldManaged); len(updated.Errors) != 0 {
		t.Errorf("an update that keeps the refused manager: %+v", updated.Errors)
	}
}

func TestMetadataIsValidatedAsTheServerDoes(t *testing.T) {
	crd := chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"]
	object := edited(t, func(obj map[string]any) {
		obj["metadata"].(map[string]any)["name"] = "Demo_Cluster"
	})
	found := errorAt(validateOne(t, crd, object, nil), "metadata.name")
	if found == nil || found.Origin != "metadata" || found.Type != "Invalid" {
		t.Fatalf("want metadata.name invalid, got %+v", found)
	}
	if renamed := validateOne(t, crd, edited(t, func(obj map[string]any) {
		obj["metadata"].(map[string]any)["namespace"] = "other"
	}), json.RawMessage(rayCluster)); errorAt(renamed, "metadata.namespace") == nil {
		t.Errorf("a moved object: %+v", renamed.Errors)
	}
}

func TestUnservedVersionAndDeprecation(t *testing.T) {
	crd := chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"]
	v2 := edited(t, func(obj map[string]any) { obj["apiVersion"] = "ray.io/v2" })
	found := errorAt(validateOne(t, crd, v2, nil), "apiVersion")
	if found == nil || found.Type != "NotSupported" {
		t.Errorf("ray.io/v2: %+v", found)
	}
	alpha := edited(t, func(obj map[string]any) { obj["apiVersion"] = "ray.io/v1alpha1" })
	result := validateOne(t, crd, alpha, nil)
	if len(result.Warnings) == 0 || !strings.Contains(result.Warnings[0], "deprecated") {
		t.Errorf("v1alpha1 warnings: %q", result.Warnings)
	}
}

func TestArgoCDApplication(t *testing.T) {
	crd := argoCRD(t, "application-crd.yaml")
	app := `{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
	  "metadata": {"name": "ray", "namespace": "argocd"},
	  "spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc", "namespace": "ray"},
	    "source": {"repoURL": "https://example.com/repo.git", "path": "ray", "targetRevision": "HEAD"}}}`
	if result := validateOne(t, crd, json.RawMessage(app), nil); len(result.Errors) != 0 {
		t.Errorf("a valid Application: %+v", result.Errors)
	}
	broken := strings.Replace(app, `"project": "default", `, `"projekt": "default", `, 1)
	result := validateOne(t, crd, json.RawMessage(broken), nil)
	if errorAt(result, "spec.projekt") == nil || errorAt(result, "spec.project") == nil {
		t.Errorf("a misspelt required field: %+v", result.Errors)
	}
	for _, name := range []string{"applicationset-crd.yaml", "appproject-crd.yaml"} {
		compiled, err := compileCRD(argoCRD(t, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for version := range compiled.versions { // compiled when first asked for: ask for each
			if _, _, err := compiled.version(version); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}

// Every sample of KubeRay 1.7.0 is accepted by its CRDs (the samples are meant to be valid).
func TestKubeRaySamplesAreValid(t *testing.T) {
	crds := map[string]json.RawMessage{}
	for name, crd := range chartCRDs(t, "1.7.0") {
		kind := map[string]string{"ray.io_rayclusters.yaml": "RayCluster", "ray.io_rayjobs.yaml": "RayJob",
			"ray.io_rayservices.yaml": "RayService", "ray.io_raycronjobs.yaml": "RayCronJob"}[name]
		crds[kind] = crd
	}
	byKind := map[string][]validateItem{}
	for kind, samples := range samplesByKind(t) {
		for _, sample := range samples {
			if crds[kind] != nil {
				byKind[kind] = append(byKind[kind], validateItem{Object: sample})
			}
		}
	}
	count := 0
	start := time.Now()
	for kind, items := range byKind {
		args, _ := json.Marshal(validateArgs{CRD: crds[kind], Objects: items})
		answer, err := validateOp(args)
		if err != nil {
			t.Fatal(err)
		}
		for i, result := range answer.(validateResult).Results {
			count++
			for _, e := range result.Errors {
				t.Errorf("%s sample %d: %s: %s", kind, i, e.Field, e.Message)
			}
		}
	}
	t.Logf("%d samples in %v (compiling the CRDs included)", count, time.Since(start))
	if count < 50 {
		t.Errorf("only %d samples found", count)
	}
}

func TestCacheByDigestAndNeedCRD(t *testing.T) {
	crd := chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"]
	args, _ := json.Marshal(validateArgs{CRD: crd, Objects: []validateItem{{Object: json.RawMessage(rayCluster)}}})
	answer, err := validateOp(args)
	if err != nil {
		t.Fatal(err)
	}
	digest := answer.(validateResult).CRDDigest
	if digest != crdDigest(crd) {
		t.Fatalf("digest %s", digest)
	}
	byDigest, _ := json.Marshal(validateArgs{CRDDigest: digest, Objects: []validateItem{{Object: json.RawMessage(rayCluster)}}})
	again, err := validateOp(byDigest)
	if err != nil || again.(validateResult).NeedCRD || len(again.(validateResult).Results) != 1 {
		t.Fatalf("by digest: %+v %v", again, err)
	}
	unknown, _ := json.Marshal(validateArgs{CRDDigest: "sha256:0000", Objects: []validateItem{{Object: json.RawMessage(rayCluster)}}})
	if missing, err := validateOp(unknown); err != nil || !missing.(validateResult).NeedCRD {
		t.Fatalf("an unknown digest: %+v %v", missing, err)
	}
	// bounded: a small cache keeps only the most recent
	small := newCRDLRU(2)
	for _, name := range []string{"ray.io_rayclusters.yaml", "ray.io_rayjobs.yaml", "ray.io_rayservices.yaml"} {
		if _, _, err := small.get(chartCRDs(t, "1.7.0")[name], ""); err != nil {
			t.Fatal(err)
		}
	}
	if small.len() != 2 {
		t.Errorf("cache of 2 holds %d", small.len())
	}
	if _, _, err := small.get(nil, crdDigest(crd)); err != errCRDNotHeld {
		t.Errorf("the oldest should be gone: %v", err)
	}
}

func TestBrokenCRDIsTheRequestsError(t *testing.T) {
	for _, crd := range []string{`{"apiVersion": "v1", "kind": "ConfigMap"}`,
		`{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "x"},
		  "spec": {"group": "example.com", "names": {"kind": "X", "plural": "xs"}, "scope": "Namespaced",
		  "versions": [{"name": "v1", "served": true, "storage": true,
		    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {}}}}}]}}`} {
		// a version is compiled when an object first asks for it: a broken one is that request's error
		object := json.RawMessage(`{"apiVersion": "example.com/v1", "kind": "X", "metadata": {"name": "a", "namespace": "n"}}`)
		args, _ := json.Marshal(validateArgs{CRD: json.RawMessage(crd), Objects: []validateItem{{Object: object}}})
		if _, err := validateOp(args); err == nil {
			t.Errorf("no error for %s", crd)
		}
	}
}

// Concurrent requests through serve, as krc sends them: each answer carries its own object's verdict.
func TestConcurrentValidations(t *testing.T) {
	crds := chartCRDs(t, "1.7.0")
	crdCache = newCRDLRU(crdCacheSize) // compiled inside the concurrent requests
	var input bytes.Buffer
	want := map[int]bool{} // id -> has an error
	for id := 1; id <= 24; id++ {
		crd := crds[[]string{"ray.io_rayclusters.yaml", "ray.io_rayjobs.yaml"}[id%2]]
		object := json.RawMessage(rayCluster)
		bad := id%3 == 0
		if id%2 == 1 {
			object = json.RawMessage(`{"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "job"},
			  "spec": {"entrypoint": "python run.py", "shutdownAfterJobFinishes": true}}`)
			if bad {
				object = json.RawMessage(`{"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "job"},
				  "spec": {"entrypoint": "python run.py", "shutdownAfterJobFinishes": "yes"}}`)
			}
		} else if bad {
			object = edited(t, func(obj map[string]any) { spec(obj)["managedBy"] = "nobody" })
		}
		want[id] = bad
		args, _ := json.Marshal(validateArgs{CRD: crd, Objects: []validateItem{{Object: object}}})
		line, _ := json.Marshal(map[string]any{"id": id, "op": "validate", "args": json.RawMessage(args)})
		input.Write(append(line, '\n'))
	}
	var output syncBuffer
	if err := serve(&input, &output); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(output.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d answers for %d requests", len(lines), len(want))
	}
	for _, line := range lines {
		var ans struct {
			ID     int
			Error  string
			Result validateResult
		}
		if err := json.Unmarshal([]byte(line), &ans); err != nil || ans.Error != "" {
			t.Fatalf("answer %s: %v", line, err)
		}
		if got := len(ans.Result.Results[0].Errors) > 0; got != want[ans.ID] {
			t.Errorf("request %d: errors %+v, want errors: %v", ans.ID, ans.Result.Results[0].Errors, want[ans.ID])
		}
	}
	if crdCache.len() != 2 {
		t.Errorf("%d CRDs compiled for 2", crdCache.len())
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// BenchmarkValidate measures one RayCluster against a compiled CRD, create and update.
func BenchmarkValidate(b *testing.B) {
	t := &testing.T{}
	crd := chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"]
	compiled, err := compileCRD(crd)
	if err != nil {
		b.Fatal(err)
	}
	for _, old := range []json.RawMessage{nil, json.RawMessage(rayCluster)} {
		b.Run(fmt.Sprintf("old=%v", old != nil), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := compiled.validate(validateItem{Object: json.RawMessage(rayCluster), Old: old}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// A version's schema is decoded only when an object asks for that version, and let go once compiled (the
// compiled forms are what validation reads); a version compiled later validates as well.
func TestACompiledVersionLetsItsDecodedSchemaGo(t *testing.T) {
	compiled, err := compileCRD(chartCRDs(t, "1.7.0")["ray.io_rayclusters.yaml"])
	if err != nil {
		t.Fatal(err)
	}
	schemaOf := func(name string) *apiextensionsv1.CustomResourceValidation {
		for _, v := range compiled.spec.Spec.Versions {
			if v.Name == name {
				return v.Schema
			}
		}
		t.Fatalf("no version %s", name)
		return nil
	}
	for _, name := range []string{"v1", "v1alpha1"} {
		if schemaOf(name) != nil || compiled.versions[name].spec.Schema != nil {
			t.Errorf("version %s's schema is decoded before an object asks for it", name)
		}
		if len(compiled.versions[name].schema) == 0 {
			t.Fatalf("version %s's schema is not kept as sent", name)
		}
	}
	for _, name := range []string{"v1", "v1alpha1"} {
		version, defined, err := compiled.version(name)
		if err != nil || !defined || version.structural == nil {
			t.Fatalf("version %s: %v", name, err)
		}
		if schemaOf(name) != nil || compiled.versions[name].spec.Schema != nil || compiled.versions[name].schema != nil {
			t.Errorf("version %s keeps its schema after compiling", name)
		}
	}
	// this very CRD, its schemas let go, still judges objects
	wrong := edited(t, func(obj map[string]any) { spec(obj)["headGroupSpec"].(map[string]any)["serviceType"] = 7 })
	result, err := compiled.validate(validateItem{Object: wrong})
	if err != nil {
		t.Fatal(err)
	}
	if found := errorAt(result, "spec.headGroupSpec.serviceType"); found == nil {
		t.Errorf("a wrong type was not reported after the schema was let go: %+v", result.Errors)
	}
}

// A version whose schema cannot be decoded is refused, naming the version, when an object asks for it; the CRD's
// other versions still compile.
func TestAVersionWithABrokenSchemaIsRefusedWhenAsked(t *testing.T) {
	raw := []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	"metadata":{"name":"things.x.io"},"spec":{"group":"x.io","scope":"Namespaced",
	"names":{"kind":"Thing","plural":"things"},"versions":[
	{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},
	{"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":7}}}]}}`)
	compiled, err := compileCRD(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := compiled.version("v1"); err != nil {
		t.Fatalf("v1: %v", err)
	}
	_, defined, err := compiled.version("v2")
	if !defined || err == nil || !strings.Contains(err.Error(), "version v2") {
		t.Fatalf("v2 should be refused, naming it: %v", err)
	}
}

// A CRD sent ahead with versions to compile is compiled before any object asks: the answer names its digest,
// and an object sent after by digest finds the version compiled.
func TestACRDSentAheadIsCompiledBeforeItsObjects(t *testing.T) {
	saved := crdCache
	crdCache = newCRDLRU(crdCacheSize) // of its own: no other test's objects compiled its versions
	defer func() { crdCache = saved }()
	crd := chartCRDs(t, "1.6.2")["ray.io_rayclusters.yaml"]
	args, _ := json.Marshal(map[string]any{"crd": crd, "objects": []any{}, "compile": []string{"v1", "v9"}})
	answer, err := validateOp(args)
	if err != nil {
		t.Fatal(err)
	}
	result := answer.(validateResult)
	compiled, _, err := crdCache.get(nil, result.CRDDigest)
	if err != nil || len(result.Results) != 0 {
		t.Fatalf("the CRD sent ahead is not held: %v", err)
	}
	if compiled.versions["v1"].compiled == nil || compiled.versions["v1alpha1"].compiled != nil {
		t.Fatal("only the version asked for should be compiled ahead")
	}
}

// BenchmarkCompileCRDs measures compiling version v1 of each CRD of a chart, as a command compiling a few
// environments has the engine do for their chart (crds_ahead), without schema sharing.
func BenchmarkCompileCRDs(b *testing.B) {
	crds := chartCRDs(&testing.T{}, "1.6.2")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, crd := range crds {
			compiled, err := compileCRD(crd)
			if err != nil {
				b.Fatal(err)
			}
			if _, defined, err := compiled.version("v1"); err != nil || !defined {
				b.Fatalf("%s: version v1 defined %v: %v", compiled.name, defined, err)
			}
		}
	}
}

func TestCRDsCompileOneAtATime(t *testing.T) {
	var active, most, compiles atomic.Int32
	compileStarted = func() {
		compiles.Add(1)
		now := active.Add(1)
		for seen := most.Load(); now > seen && !most.CompareAndSwap(seen, now); seen = most.Load() {
		}
		time.Sleep(5 * time.Millisecond) // a window for another compile to start, were it allowed to
		active.Add(-1)
	}
	defer func() { compileStarted = func() {} }()
	var wait sync.WaitGroup
	for _, version := range []string{"1.6.2", "1.7.0"} {
		for file, crd := range chartCRDs(t, version) {
			var decoded map[string]any
			if err := json.Unmarshal(crd, &decoded); err != nil {
				t.Fatal(err)
			}
			// a CRD of its own (another digest), so it compiles here whatever other tests compiled before
			decoded["metadata"].(map[string]any)["annotations"] = map[string]any{"krc.test/compile": t.Name()}
			fresh, _ := json.Marshal(decoded)
			kind := decoded["spec"].(map[string]any)["names"].(map[string]any)["kind"].(string)
			object := json.RawMessage(fmt.Sprintf(`{"apiVersion": "ray.io/v1", "kind": %q, `+
				`"metadata": {"name": "demo", "namespace": "ray"}, "spec": {}}`, kind))
			wait.Add(1)
			go func() {
				defer wait.Done()
				args, _ := json.Marshal(validateArgs{CRD: fresh, Objects: []validateItem{{Object: object}}})
				if _, err := validateOp(args); err != nil {
					t.Errorf("%s %s: %v", version, file, err)
				}
			}()
		}
	}
	wait.Wait()
	if compiles.Load() < 8 || most.Load() != 1 {
		t.Fatalf("%d compiles, at most %d at once: want every CRD compiled, one at a time", compiles.Load(),
			most.Load())
	}
}
