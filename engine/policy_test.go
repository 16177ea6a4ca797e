package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

const gpuPolicy = `// at most 8 GPUs per worker group
package policy

env: groups: [...{gpu: <=8}]
`

const totalPolicy = `package policy

import "list"

_maxGpus: 10
if env.production {
	totalGpus: list.Sum([for g in env.groups {g.gpu}]) & <=_maxGpus
}
`

func groupsInput(name string, production bool, gpus ...int) policyInput {
	var groups []string
	for i, gpu := range gpus {
		groups = append(groups, fmt.Sprintf(`{"name": "g%d", "gpu": %d}`, i, gpu))
	}
	env := fmt.Sprintf(`{"name": %q, "production": %t, "groups": [%s]}`, name, production, strings.Join(groups, ","))
	return policyInput{Name: name, Env: json.RawMessage(env)}
}

func evaluate(t *testing.T, policies []policySource, inputs ...policyInput) *policyResult {
	t.Helper()
	result, err := evaluatePolicies(policyArgs{Policies: policies, Inputs: inputs})
	if err != nil {
		t.Fatal(err)
	}
	return result
}

func policy(name, source string) policySource {
	return policySource{Name: name, File: "policies/" + name + ".cue", Source: source}
}

func TestFindingNamesThePolicyFileAndLine(t *testing.T) {
	result := evaluate(t, []policySource{policy("gpu-cap", gpuPolicy)}, groupsInput("dev", false, 4, 12))
	want := [][]policyError{{{Policy: "gpu-cap", Path: []any{"env", "groups", 1, "gpu"},
		Message:   "invalid value 12 (out of bound <=8)",
		Positions: []policyPosition{{"policies/gpu-cap.cue", 4, 24}}}}}
	if len(result.Broken) != 0 || !reflect.DeepEqual(result.Findings, want) {
		t.Fatalf("got %+v, want %+v", result, want)
	}
}

func TestInputsAreClosed(t *testing.T) {
	required := policy("deadline", `package policy

env: ray: version: string
objects: [...{kind: string, if kind == "RayJob" {spec: activeDeadlineSeconds: int}}]
`)
	input := policyInput{Name: "prod", Env: json.RawMessage(`{"ray": {"image": "rayproject/ray"}}`),
		Objects: json.RawMessage(`[{"kind": "RayJob", "spec": {}}, {"kind": "RayCluster", "spec": {}}]`)}
	result := evaluate(t, []policySource{required}, input)
	var got []string
	for _, found := range result.Findings[0] {
		got = append(got, fmt.Sprintf("%v: %s at %v", found.Path, found.Message, found.Positions))
	}
	want := []string{
		"[env ray version]: field not allowed at [{policies/deadline.cue 3 11}]",
		"[objects 0 spec activeDeadlineSeconds]: field not allowed at [{policies/deadline.cue 4 56}]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestPolicyMayDefineTopLevelFields(t *testing.T) {
	result := evaluate(t, []policySource{policy("total", totalPolicy)},
		groupsInput("prod", true, 4, 8), groupsInput("small", true, 1, 2), groupsInput("dev", false, 8, 8))
	if len(result.Findings[1]) != 0 || len(result.Findings[2]) != 0 {
		t.Fatalf("only prod is over its total: %+v", result)
	}
	found := result.Findings[0]
	if len(found) != 1 || !reflect.DeepEqual(found[0].Path, []any{"totalGpus"}) ||
		found[0].Message != "invalid value 12 (out of bound <=10)" || len(found[0].Positions) == 0 ||
		found[0].Positions[0].Line != 7 {
		t.Fatalf("got %+v", found)
	}
}

func TestBrokenPoliciesAreReportedNotEvaluated(t *testing.T) {
	cases := map[string]struct{ source, message string }{
		"syntax":     {"package policy\n\nenv: {\n\tproduction: bool\n\n", "expected '}', found 'EOF'"},
		"reference":  {"package policy\n\nenv: name: strings.MaxRunes(20)\n", `reference "strings" not found`},
		"import":     {"package policy\n\nimport \"example.com/nothing\"\n\nenv: name: nothing.X\n", "can import only CUE's standard library"},
		"misspelled": {"package policy\n\nimport \"strngs\"\n\nenv: name: strngs.MaxRunes(20)\n", `builtin package "strngs" undefined`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			result := evaluate(t, []policySource{policy("fine", gpuPolicy), policy(name, c.source)},
				groupsInput("dev", false, 20))
			if len(result.Findings) != 0 || len(result.Broken) == 0 {
				t.Fatalf("want a broken policy, got %+v", result)
			}
			for _, broken := range result.Broken {
				if broken.Policy != name || !strings.Contains(broken.Message, c.message) ||
					len(broken.Positions) == 0 || broken.Positions[0].File != "policies/"+name+".cue" {
					t.Fatalf("got %+v, want %q in policies/%s.cue", broken, c.message, name)
				}
			}
		})
	}
}

func TestStandardLibraryImports(t *testing.T) {
	source := `package limits

import "list"
import s "strings"
import (
	"math"
	"regexp"
)

_names: [for g in env.groups {s.ToUpper(g.name)}]
_ok: regexp.Match("^G[0-9]+$", _names[0]) & true
_pi: math.Pi
env: groups: [...{gpu: <=8}]
sum: list.Sum([for g in env.groups {g.gpu}]) & <=10
`
	result := evaluate(t, []policySource{policy("limits", source)},
		groupsInput("a", false, 4, 4), groupsInput("b", false, 9), groupsInput("c", false, 6, 6))
	if len(result.Broken) != 0 || len(result.Findings[0]) != 0 {
		t.Fatalf("a passes: %+v", result)
	}
	if b := result.Findings[1]; len(b) != 1 || b[0].Message != "invalid value 9 (out of bound <=8)" {
		t.Fatalf("b: %+v", b)
	}
	if c := result.Findings[2]; len(c) != 1 || !reflect.DeepEqual(c[0].Path, []any{"sum"}) {
		t.Fatalf("c: %+v", c)
	}
}

func TestInputsAreIndependentOfEachOther(t *testing.T) {
	policies := []policySource{policy("gpu-cap", gpuPolicy), policy("total", totalPolicy),
		policy("named", "package policy\n\nenv: name: =~\"^env-\"\n")}
	var inputs []policyInput
	for i := range 12 {
		inputs = append(inputs, groupsInput(fmt.Sprintf("env-%d", i), i%2 == 0, i, 1))
	}
	inputs = append(inputs, groupsInput("other", false, 0))
	together := evaluate(t, policies, inputs...)
	for i, input := range inputs {
		alone := evaluate(t, policies, input)
		if !reflect.DeepEqual(alone.Findings[0], together.Findings[i]) {
			t.Fatalf("%s: alone %+v, together %+v", input.Name, alone.Findings[0], together.Findings[i])
		}
	}
	// env-9..env-11 are over 8 per group; env-10 (production, 11 in all) also over its total; "other" misnamed
	counts := []int{}
	for _, found := range together.Findings {
		counts = append(counts, len(found))
	}
	if want := []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 1}; !reflect.DeepEqual(counts, want) {
		t.Fatalf("findings per input %v, want %v", counts, want)
	}
}

func TestObjectsOnlyForPoliciesThatNameThem(t *testing.T) {
	named := policy("names", "package policy\n\nobjects: [...{metadata: name: =~\"^ok-\"}]\n")
	input := groupsInput("dev", false, 16)
	input.Objects = json.RawMessage(`[{"kind": "ConfigMap", "metadata": {"name": "bad"}}]`)
	result := evaluate(t, []policySource{policy("gpu-cap", gpuPolicy), named}, input)
	var rules []string
	for _, found := range result.Findings[0] {
		rules = append(rules, found.Policy+fmt.Sprint(found.Path))
	}
	if want := []string{"gpu-cap[env groups 0 gpu]", "names[objects 0 metadata name]"}; !reflect.DeepEqual(rules, want) {
		t.Fatalf("got %v, want %v", rules, want)
	}
}

func TestBadInputIsTheRequestsError(t *testing.T) {
	_, err := evaluatePolicies(policyArgs{Policies: []policySource{policy("gpu-cap", gpuPolicy)},
		Inputs: []policyInput{{Name: "x", Env: json.RawMessage(`[1]`)}}})
	if err == nil || !strings.Contains(err.Error(), `input "x"`) {
		t.Fatalf("got %v", err)
	}
}

// Requests run in goroutines of their own (serve): each has its own CUE context, and answers what it would alone.
func TestConcurrentPolicyRequests(t *testing.T) {
	policies := []policySource{policy("gpu-cap", gpuPolicy), policy("total", totalPolicy)}
	var requests []policyArgs
	for i := range 8 {
		requests = append(requests, policyArgs{Policies: policies,
			Inputs: []policyInput{groupsInput("a", true, i, 2*i), groupsInput("b", i%2 == 0, 9-i)}})
	}
	var alone []*policyResult
	for _, args := range requests {
		result, err := evaluatePolicies(args)
		if err != nil {
			t.Fatal(err)
		}
		alone = append(alone, result)
	}
	var wait sync.WaitGroup
	for round := range 3 {
		for i, args := range requests {
			wait.Add(1)
			go func() {
				defer wait.Done()
				result, err := evaluatePolicies(args)
				if err != nil || !reflect.DeepEqual(result, alone[i]) {
					t.Errorf("round %d, request %d: %+v (%v), alone %+v", round, i, result, err, alone[i])
				}
			}()
		}
	}
	wait.Wait()
}

func TestPolicyOpThroughServe(t *testing.T) {
	args, _ := json.Marshal(policyArgs{Policies: []policySource{policy("gpu-cap", gpuPolicy)},
		Inputs: []policyInput{groupsInput("dev", false, 12)}})
	in := fmt.Sprintf(`{"id": 1, "op": "policy", "args": %s}`+"\n"+`{"id": 2, "op": "policy", "args": {"inputs": 3}}`+"\n", args)
	var out strings.Builder
	if err := serve(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	answers := map[int]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var ans map[string]any
		if err := json.Unmarshal([]byte(line), &ans); err != nil {
			t.Fatal(err)
		}
		answers[int(ans["id"].(float64))] = ans
	}
	findings := answers[1]["result"].(map[string]any)["findings"].([]any)
	if len(findings) != 1 || len(findings[0].([]any)) != 1 {
		t.Fatalf("answer 1: %v", answers[1])
	}
	if msg, _ := answers[2]["error"].(string); !strings.HasPrefix(msg, "bad policy arguments") {
		t.Fatalf("answer 2: %v", answers[2])
	}
}
