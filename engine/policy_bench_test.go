package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// realisticPolicies reads krc's shipped policies (../policies), as krc sends them.
func realisticPolicies(tb testing.TB) []policySource {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "policies", "*.cue"))
	if len(files) == 0 {
		tb.Skip("no ../policies/*.cue")
	}
	var policies []policySource
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(file), ".cue")
		policies = append(policies, policySource{Name: name, File: "policies/" + filepath.Base(file), Source: string(text)})
	}
	return policies
}

// realisticInput is testdata/policy_input.json (one production environment of a synthetic project and its
// rendered objects, as krc sends them) renamed to environment number n, with edit applied to its decoded form
// (nil: the text as krc wrote it, in its field order).
func realisticInput(tb testing.TB, n int, edit func(env map[string]any, objects []any)) policyInput {
	tb.Helper()
	text, err := os.ReadFile(filepath.Join("testdata", "policy_input.json"))
	if err != nil {
		tb.Fatal(err)
	}
	text = bytes.ReplaceAll(text, []byte("0004"), fmt.Appendf(nil, "%04d", n))
	var input policyInput
	if err := json.Unmarshal(text, &input); err != nil {
		tb.Fatal(err)
	}
	if edit != nil {
		var env map[string]any
		var objects []any
		if json.Unmarshal(input.Env, &env) != nil || json.Unmarshal(input.Objects, &objects) != nil {
			tb.Fatal("testdata/policy_input.json: env is not an object or objects not a list")
		}
		edit(env, objects)
		input.Env, _ = json.Marshal(env)
		input.Objects, _ = json.Marshal(objects)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, input.Env)
	input.Env = bytes.Clone(compact.Bytes())
	compact.Reset()
	_ = json.Compact(&compact, input.Objects)
	input.Objects = bytes.Clone(compact.Bytes())
	return input
}

// at walks decoded JSON by keys and list indexes.
func at(value any, path ...any) any {
	for _, step := range path {
		switch step := step.(type) {
		case string:
			value = value.(map[string]any)[step]
		case int:
			value = value.([]any)[step]
		}
	}
	return value
}

// objectOfKind is the first object of the kind.
func objectOfKind(objects []any, kind string) map[string]any {
	for _, object := range objects {
		if object := object.(map[string]any); object["kind"] == kind {
			return object
		}
	}
	panic("no " + kind)
}

// Edits that make each of the shipped policies fail.
var (
	development  = func(env map[string]any, _ []any) { env["production"] = false }
	foreignImage = func(env map[string]any, objects []any) {
		at(env, "ray").(map[string]any)["gpuImage"] = "docker.io/someone/ray:latest"
		container := at(objectOfKind(objects, "RayCluster"), "spec", "workerGroupSpecs", 1, "template", "spec",
			"containers", 0).(map[string]any)
		container["image"] = "ghcr.io/someone/ray:2.58.0"
	}
	tooManyGpus = func(env map[string]any, _ []any) {
		at(env, "clusters", 0, "workerGroups", 1).(map[string]any)["maxReplicas"] = 30
	}
	noDeadline = func(_ map[string]any, objects []any) {
		delete(at(objectOfKind(objects, "RayJob"), "spec").(map[string]any), "activeDeadlineSeconds")
		delete(at(objectOfKind(objects, "RayCronJob"), "spec", "jobTemplate").(map[string]any),
			"activeDeadlineSeconds")
	}
)

// realisticRequest is a request of n environments: all passing, or each failing one or more of the policies
// (one in five passing).
func realisticRequest(tb testing.TB, n int, failing bool) policyArgs {
	args := policyArgs{Policies: realisticPolicies(tb)}
	edits := []func(map[string]any, []any){development, foreignImage, tooManyGpus, noDeadline, nil}
	for i := range n {
		var edit func(map[string]any, []any)
		if failing {
			edit = edits[i%len(edits)]
		}
		args.Inputs = append(args.Inputs, realisticInput(tb, 4+5*i, edit))
	}
	return args
}

func BenchmarkPolicy(b *testing.B) {
	for _, failing := range []bool{false, true} {
		args := realisticRequest(b, 10, failing)
		for _, impl := range []struct {
			name     string
			evaluate func(policyArgs) (*policyResult, error)
		}{{"reference", referenceEvaluatePolicies}, {"op", evaluatePolicies}} {
			b.Run(fmt.Sprintf("%s/failing=%t", impl.name, failing), func(b *testing.B) {
				b.ReportAllocs()
				start := processCPU()
				for b.Loop() {
					if _, err := impl.evaluate(args); err != nil {
						b.Fatal(err)
					}
				}
				// the process's CPU time (the collector's too), steadier than ns/op on a busy machine
				b.ReportMetric(float64(processCPU()-start)/float64(b.N*len(args.Inputs)), "cpu-ns/input")
			})
		}
	}
}

func processCPU() time.Duration {
	var usage syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	return time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
}
