package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	openapi "k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

// samplesByKind are the upstream KubeRay samples beside the chart repository, by kind.
func samplesByKind(t *testing.T) map[string][]json.RawMessage {
	files, _ := filepath.Glob(filepath.Join(chartRepository(t), "..", "samples", "*.yaml"))
	out := map[string][]json.RawMessage{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, document := range strings.Split(string(data), "\n---") {
			converted, err := yaml.YAMLToJSON([]byte(document))
			if err != nil || string(converted) == "null" {
				continue
			}
			var head struct{ APIVersion, Kind string }
			_ = json.Unmarshal(converted, &head)
			if strings.HasPrefix(head.APIVersion, "ray.io/") {
				out[head.Kind] = append(out[head.Kind], converted)
			}
		}
	}
	if len(out["RayCluster"]) == 0 || len(out["RayJob"]) == 0 || len(out["RayService"]) == 0 {
		t.Fatalf("the samples beside the chart repository lack RayClusters, RayJobs or RayServices")
	}
	return out
}

// broken are variants of an object, each wrong at one place: an unknown field in a map, a number where a string
// is, spread over the whole object (at most `each` of each sort).
func broken(t *testing.T, object json.RawMessage, each int) []json.RawMessage {
	var maps, strs [][]any
	var walk func(value any, path []any)
	walk = func(value any, path []any) {
		switch v := value.(type) {
		case map[string]any:
			maps = append(maps, append([]any{}, path...))
			keys := make([]string, 0, len(v))
			for key := range v {
				keys = append(keys, key)
			}
			sort.Strings(keys)
			for _, key := range keys {
				walk(v[key], append(path, key))
			}
		case []any:
			for i, item := range v {
				walk(item, append(path, i))
			}
		case string:
			strs = append(strs, append([]any{}, path...))
		}
	}
	var decoded any
	if err := json.Unmarshal(object, &decoded); err != nil {
		t.Fatal(err)
	}
	walk(decoded, nil)
	// set is the object with value at path (a new key where path ends in one the map lacks)
	set := func(path []any, value any) json.RawMessage {
		var copied any
		_ = json.Unmarshal(object, &copied)
		node := copied
		for _, step := range path[:len(path)-1] {
			if key, ok := step.(string); ok {
				node = node.(map[string]any)[key]
			} else {
				node = node.([]any)[step.(int)]
			}
		}
		if key, ok := path[len(path)-1].(string); ok {
			node.(map[string]any)[key] = value
		} else {
			node.([]any)[path[len(path)-1].(int)] = value
		}
		data, _ := json.Marshal(copied)
		return data
	}
	var out []json.RawMessage
	for i := 1; i < len(maps); i += max(1, len(maps)/each) {
		out = append(out, set(append(maps[i], "krcUnknown"), 1))
	}
	for i := 0; i < len(strs); i += max(1, len(strs)/each) {
		out = append(out, set(strs[i], 7))
	}
	return out
}

// answers validates every object (as a create, and as an update of the unchanged object) against a CRD compiled
// now, sharing its schemas' subtrees through `share` (nil: not at all).
func answers(t *testing.T, crd json.RawMessage, objects []json.RawMessage, share *sharedSchemas) []byte {
	saved := schemaShare
	schemaShare = share
	defer func() { schemaShare = saved }()
	compiled, err := compileCRD(crd)
	if err != nil {
		t.Fatal(err)
	}
	compiled.share.Store(share != nil)
	var results []objectResult
	for _, object := range objects {
		for _, old := range []json.RawMessage{nil, object} {
			result, err := compiled.validate(validateItem{Object: object, Old: old})
			if err != nil {
				t.Fatal(err)
			}
			// the server's order of schema errors follows Go's map order (krc sorts them): compared as a set
			sort.Slice(result.Errors, func(i, j int) bool {
				a, _ := json.Marshal(result.Errors[i])
				b, _ := json.Marshal(result.Errors[j])
				return string(a) < string(b)
			})
			results = append(results, result)
		}
	}
	data, err := json.Marshal(results)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Sharing compiled schemas' identical subtrees changes no answer: the upstream samples, and variants of each wrong
// at one place spread over the object, get the same answers (pruned and defaulted objects, every error) with
// sharing and without, for every chart version.
func TestSharedSchemasGiveTheSameAnswers(t *testing.T) {
	samples := samplesByKind(t)
	table := newSharedSchemas() // one for every CRD, as the engine has
	files := map[string]string{"RayCluster": "ray.io_rayclusters.yaml", "RayJob": "ray.io_rayjobs.yaml",
		"RayService": "ray.io_rayservices.yaml"}
	for _, version := range []string{"1.5.2", "1.6.2", "1.7.0"} {
		crds := chartCRDs(t, version)
		for kind, file := range files {
			var objects []json.RawMessage
			errors := 0
			for _, sample := range samples[kind] {
				objects = append(objects, sample)
				variants := broken(t, sample, 4)
				objects = append(objects, variants...)
				errors += len(variants)
			}
			shared, unshared := answers(t, crds[file], objects, table), answers(t, crds[file], objects, nil)
			if string(shared) != string(unshared) {
				t.Fatalf("%s %s: the answers differ with shared schemas", version, kind)
			}
			if !strings.Contains(string(shared), `"UnknownField"`) || !strings.Contains(string(shared), `"TypeInvalid"`) {
				t.Fatalf("%s %s: the variants found no unknown field or wrong type", version, kind)
			}
			t.Logf("%s %s: %d objects (%d broken), %d bytes of answers alike", version, kind, len(objects), errors,
				len(shared))
		}
	}
}

func mapIdentity(m any) uintptr { return reflect.ValueOf(m).Pointer() }

// A RayCluster's head and worker Pod templates are one schema held once, and a RayJob compiled after it holds the
// same one for its cluster's head.
func TestAPodTemplateSchemaIsHeldOnce(t *testing.T) {
	saved := schemaShare
	schemaShare = newSharedSchemas()
	defer func() { schemaShare = saved }()
	crds := chartCRDs(t, "1.7.0")
	compiledVersion := func(file string) *compiledVersion {
		compiled, err := compileCRD(crds[file])
		if err != nil {
			t.Fatal(err)
		}
		compiled.share.Store(true)
		version, _, err := compiled.version("v1")
		if err != nil {
			t.Fatal(err)
		}
		return version
	}
	cluster, job := compiledVersion("ray.io_rayclusters.yaml"), compiledVersion("ray.io_rayjobs.yaml")
	clusterSpec := cluster.structural.Properties["spec"]
	head := clusterSpec.Properties["headGroupSpec"].Properties["template"]
	worker := clusterSpec.Properties["workerGroupSpecs"].Items.Properties["template"]
	jobHead := job.structural.Properties["spec"].Properties["rayClusterSpec"].Properties["headGroupSpec"].
		Properties["template"]
	if len(head.Properties) == 0 || mapIdentity(head.Properties) != mapIdentity(worker.Properties) ||
		mapIdentity(head.Properties) != mapIdentity(jobHead.Properties) {
		t.Fatal("the head and worker Pod templates' schemas are not one")
	}
}

// Subtrees that differ only in a property's name, or only in a list's item schema, are not shared.
func TestSubtreesDifferingInANameAreNotShared(t *testing.T) {
	found, _ := sharedVerdicts(t, `
	"x":{"type":"object","properties":{"a":{"type":"string"}}},
	"y":{"type":"object","properties":{"b":{"type":"string"}}},
	"p":{"type":"array","items":{"type":"string"}},
	"q":{"type":"array","items":{"type":"integer"}}`,
		`{"x":{"a":"1"},"y":{"b":2,"a":"3"},"p":["s"],"q":["s"]}`)
	if found["spec.y.a"] != "UnknownField" || found["spec.y.b"] != "TypeInvalid" || found["spec.q[0]"] != "TypeInvalid" ||
		len(found) != 3 {
		t.Fatalf("want spec.y.a unknown, spec.y.b and spec.q[0] of the wrong type, got %v", found)
	}
}

// Subtrees that differ only in a pattern, a default or a vendor extension (the fields the content hash writes on
// their own rather than as JSON) are not shared either: each keeps its own verdicts and defaults.
func TestSubtreesDifferingInAPatternDefaultOrExtensionAreNotShared(t *testing.T) {
	found, result := sharedVerdicts(t, `
	"a":{"type":"string","pattern":"^a$"},
	"b":{"type":"string","pattern":"^b$"},
	"c":{"type":"string","default":"one"},
	"d":{"type":"string","default":"two"},
	"s":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}},
	"t":{"type":"array","x-kubernetes-list-type":"atomic","items":{"type":"string"}},
	"m":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["k"],
		"items":{"type":"object","required":["k"],"properties":{"k":{"type":"string"},"v":{"type":"string"}}}},
	"n":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["v"],
		"items":{"type":"object","required":["v"],"properties":{"k":{"type":"string"},"v":{"type":"string"}}}}`,
		`{"a":"a","b":"a","s":["x","x"],"t":["x","x"],
		"m":[{"k":"1","v":"same"},{"k":"2","v":"same"}],"n":[{"k":"1","v":"same"},{"k":"2","v":"same"}]}`)
	if found["spec.b"] != "Invalid" || found["spec.s[1]"] != "Duplicate" || found["spec.n[1]"] != "Duplicate" ||
		len(found) != 3 {
		t.Fatalf("want spec.b against its pattern, spec.s[1] and spec.n[1] duplicates, got %v", found)
	}
	spec, _ := result.Object["spec"].(map[string]any)
	if spec["c"] != "one" || spec["d"] != "two" {
		t.Fatalf("want each field's own default, got c=%v d=%v", spec["c"], spec["d"])
	}
}

// sharedVerdicts compiles a CRD whose spec has `properties` (JSON members), its subtrees shared in a table of its
// own, and judges an object with that `spec`: each error's type by its field, and the result.
func sharedVerdicts(t *testing.T, properties, spec string) (map[string]string, objectResult) {
	saved := schemaShare
	schemaShare = newSharedSchemas()
	t.Cleanup(func() { schemaShare = saved })
	compiled, err := compileCRD([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	"metadata":{"name":"things.x.io"},"spec":{"group":"x.io","scope":"Namespaced",
	"names":{"kind":"Thing","plural":"things"},"versions":[{"name":"v1","served":true,"storage":true,
	"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","properties":{` +
		properties + `}}}}}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	compiled.share.Store(true)
	result, err := compiled.validate(validateItem{Object: []byte(
		`{"apiVersion":"x.io/v1","kind":"Thing","metadata":{"name":"t","namespace":"n"},"spec":` + spec + `}`)})
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]string{}
	for _, e := range result.Errors {
		found[e.Field] = e.Type
	}
	return found, result
}

// Only a request that asks for sharing has its CRD's versions share their subtrees: a run of a few environments
// does not wait for it.
func TestSchemasAreSharedOnlyWhenAsked(t *testing.T) {
	savedCache, savedShare := crdCache, schemaShare
	crdCache, schemaShare = newCRDLRU(crdCacheSize), newSharedSchemas()
	defer func() { crdCache, schemaShare = savedCache, savedShare }()
	crds := chartCRDs(t, "1.7.0")
	templates := func(file string, share bool) (any, any) {
		args, _ := json.Marshal(map[string]any{"crd": crds[file], "objects": []any{}, "compile": []string{"v1"},
			"share": share})
		answer, err := validateOp(args)
		if err != nil {
			t.Fatal(err)
		}
		compiled, _, err := crdCache.get(nil, answer.(validateResult).CRDDigest)
		if err != nil {
			t.Fatal(err)
		}
		spec := compiled.versions["v1"].compiled.structural.Properties["spec"]
		if file == "ray.io_rayjobs.yaml" {
			spec = spec.Properties["rayClusterSpec"]
		}
		return spec.Properties["headGroupSpec"].Properties["template"].Properties,
			spec.Properties["workerGroupSpecs"].Items.Properties["template"].Properties
	}
	head, worker := templates("ray.io_rayclusters.yaml", false)
	if mapIdentity(head) == mapIdentity(worker) {
		t.Fatal("shared without being asked")
	}
	head, worker = templates("ray.io_rayjobs.yaml", true)
	if mapIdentity(head) != mapIdentity(worker) {
		t.Fatal("not shared when asked")
	}
}

// The content hash tells apart nodes that differ only in a vendor extension's value, including one the hash does
// not write on its own (its JSON then goes with the rest of the node), and gives identical nodes one hash.
func TestTheContentHashWritesEveryExtension(t *testing.T) {
	node := func(extensions map[string]any) *openapi.Schema {
		schema := &openapi.Schema{}
		schema.Type = openapi.StringOrArray{"array"}
		schema.Extensions = extensions
		return schema
	}
	hashes := map[[32]byte]string{}
	for name, extensions := range map[string]map[string]any{
		"none":       nil,
		"empty":      {},
		"set":        {"x-kubernetes-list-type": "set"},
		"atomic":     {"x-kubernetes-list-type": "atomic"},
		"keys a":     {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"a"}},
		"keys b":     {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"b"}},
		"keys a b":   {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"a", "b"}},
		"int true":   {"x-kubernetes-int-or-string": true},
		"int false":  {"x-kubernetes-int-or-string": false},
		"int string": {"x-kubernetes-int-or-string": "true"},
		"number":     {"x-krc-number": 1.5},
		"number 2":   {"x-krc-number": 2.5},
	} {
		sum, err := newSharedSchemas().openAPINode(node(extensions))
		if err != nil {
			t.Fatal(err)
		}
		if other, seen := hashes[sum]; seen {
			t.Fatalf("%q and %q have one content hash", name, other)
		}
		hashes[sum] = name
		again, _ := newSharedSchemas().openAPINode(node(extensions))
		if again != sum {
			t.Fatalf("%q hashed twice gave two hashes", name)
		}
	}
}
