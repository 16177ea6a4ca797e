package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/parser"
)

// Policies beyond krc's own that reach the input in other ways CUE has: patterns, comprehensions over fields,
// required fields, definitions, disjunctions, builtins, references to what is not there, top-level patterns.
var equalityPolicies = []policySource{
	policy("gpu-cap", gpuPolicy),
	policy("total", totalPolicy),
	policy("named", "package policy\n\nenv: name: =~\"^prod-\"\n"),
	policy("names", "package policy\n\nobjects: [...{metadata: name: =~\"^[a-z-]+$\"}]\n"),
	policy("deadline", `package policy

env: ray: version: string
objects: [...{kind: string, if kind == "RayJob" {spec: activeDeadlineSeconds: int}}]
`),
	policy("labels", `package policy

import "strings"

env: labels: [string]: string & =~"^[a-z0-9-]+$"
env: labels: team: strings.HasPrefix("ml-") & true
objects: [...{metadata: labels?: [=~"^krc"]: string}]
`),
	policy("keys", `package policy

_keys: [for k, _ in env {k}]
fieldCount: len(_keys) & <=18
env: [=~"^_"]: _|_
`),
	policy("schema", `package policy

#Group: {name: string, minReplicas: int & >=0, maxReplicas: int & >=minReplicas, gpu?: int & <=4, ...}
#Cluster: {name?: string, head: {cpu: number, memory: string, ...}, workerGroups?: [...#Group], ...}
#Env: {
	name!:      string
	production: bool
	namespace:  =~"^ray-"
	clusters?: [...#Cluster]
	owner?: string
	...
}
env: #Env
`),
	policy("defaults", `package policy

env: ray: version: *"2.58.0" | =~"^2\\."
env: kubernetesVersion: "1.33" | "1.34"
env: production: bool | *false
`),
	policy("missing", `package policy

if env.production {
	region: env.labels.region & =~"^(eu|us)-"
	owner:  env.owner
}
`),
	policy("required", "package policy\n\nenv: operator: chart: digest!: string\n"),
	policy("kinds", `package policy

import "list"

_kinds: [for o in objects {o.kind}]
hasNamespace: list.Contains(_kinds, "Namespace") & true
firstIsApplication: objects[0].kind == "Application" & true
objects: [...{apiVersion: string, metadata: namespace?: !="default"}]
`),
	policy("top-pattern", "package policy\n\n[=~\"^e\"]: {production?: true, ...}\n"),
	policy("closed", "package policy\n\nenv: ray: close({version: string, image: string})\n"),
	// reads of fields the input does not have, beside other errors: incomplete, so not reported then
	policy("absent", `package policy

region: env.labels.region & =~"^(eu|us)-"
owner: env.owner
kind: objects[0].owner
if env.production {
	approver: env.approver
}
`),
	policy("absent-default", "package policy\n\nowner: *env.owner | \"none\"\nx: owner & \"y\"\n"),
	// the policy's own values shared by reference, their positions in its findings
	policy("shared", "package policy\n\n_x: {a: int, b: env.ray.version & int}\ny: _x\n#X: {c: string}\nz: #X\n"),
	// conflicts printing the input's values
	policy("conflicts", "package policy\n\nenv: namespace: 5\nenv: labels: [...]\nobjects: [{}, 5, ...]\n"),
	policy("top-conflict", "package policy\n\n[string]: 5\n"),
}

// realisticVariants is the realistic input edited in the ways krc's environments can fail (and some it should
// never send): each failing policy, several at once, fields missing, other types and number forms, strings with
// escapes, keys CUE must quote, other layouts of the JSON text.
func realisticVariants(tb testing.TB) []policyInput {
	edits := map[string]func(env map[string]any, objects []any){
		"passing":     nil,
		"development": development, "foreign-image": foreignImage, "too-many-gpus": tooManyGpus,
		"no-deadline": noDeadline,
		"all": func(env map[string]any, objects []any) {
			for _, edit := range []func(map[string]any, []any){development, foreignImage, tooManyGpus, noDeadline} {
				edit(env, objects)
			}
		},
		"all-production": func(env map[string]any, objects []any) {
			for _, edit := range []func(map[string]any, []any){foreignImage, tooManyGpus, noDeadline} {
				edit(env, objects)
			}
		},
		"no-production":   func(env map[string]any, _ []any) { delete(env, "production") },
		"production-text": func(env map[string]any, _ []any) { env["production"] = "yes" },
		"no-image":        func(env map[string]any, _ []any) { delete(at(env, "ray").(map[string]any), "image") },
		"no-clusters":     func(env map[string]any, _ []any) { delete(env, "clusters"); delete(env, "jobs") },
		"clusters-null":   func(env map[string]any, _ []any) { env["clusters"] = nil },
		"no-kind":         func(_ map[string]any, objects []any) { delete(objects[2].(map[string]any), "kind") },
		"kind-number":     func(_ map[string]any, objects []any) { objects[2].(map[string]any)["kind"] = 3 },
		"gpu-text": func(env map[string]any, _ []any) {
			at(env, "clusters", 0, "workerGroups", 1).(map[string]any)["gpu"] = "1"
		},
		"gpu-float": func(env map[string]any, _ []any) {
			at(env, "clusters", 0, "workerGroups", 1).(map[string]any)["gpu"] = 1.5
		},
		"gpu-negative": func(env map[string]any, _ []any) {
			at(env, "clusters", 0, "workerGroups", 2).(map[string]any)["gpu"] = -4
		},
		"replicas-float": func(env map[string]any, _ []any) {
			at(env, "clusters", 0, "workerGroups", 1).(map[string]any)["maxReplicas"] = 2.5
		},
		"replicas-many": func(env map[string]any, _ []any) {
			at(env, "jobs", 0, "cluster", "workerGroups", 0).(map[string]any)["replicas"] = 40
		},
		"deadline-zero": func(_ map[string]any, objects []any) {
			at(objectOfKind(objects, "RayJob"), "spec").(map[string]any)["activeDeadlineSeconds"] = 0
		},
		"deadline-text": func(_ map[string]any, objects []any) {
			at(objectOfKind(objects, "RayJob"), "spec").(map[string]any)["activeDeadlineSeconds"] = "1h"
		},
		"no-objects":       func(_ map[string]any, objects []any) { clear(objects) },
		"objects-not-maps": func(_ map[string]any, objects []any) { objects[0], objects[1] = "x", []any{} },
		"owner":            func(env map[string]any, _ []any) { env["owner"] = "platform"; env["_private"] = 1 },
		"quoted-keys": func(env map[string]any, objects []any) {
			labels := at(env, "labels").(map[string]any)
			labels["my key"], labels["#def"], labels["_hidden"], labels[""], labels[`a"b`], labels["Ünïcode"] =
				"a", "b", "c", "d", "e", "f"
			at(objects[6], "metadata", "labels").(map[string]any)["krc/é"] = "ü"
		},
		"bad-labels": func(env map[string]any, objects []any) {
			at(env, "labels").(map[string]any)["team"] = "Platform Team"
			at(objects[6], "metadata", "labels").(map[string]any)["krc.dev/x"] = 1
			at(objects[5], "metadata").(map[string]any)["namespace"] = "default"
		},
		"nested-empty": func(env map[string]any, objects []any) {
			env["extra"] = map[string]any{"a": []any{[]any{}, map[string]any{}, []any{[]any{nil}}}, "b": nil}
			objects[0].(map[string]any)["spec"] = map[string]any{}
		},
	}
	var inputs []policyInput
	for _, name := range slices.Sorted(maps.Keys(edits)) {
		input := realisticInput(tb, len(inputs), edits[name])
		input.Name = name
		inputs = append(inputs, input)
	}
	// edits of the JSON text itself: number forms, escapes, layout
	texts := map[string][]string{
		"numbers": {`"maxReplicas":6`, `"maxReplicas":6.0`, `"maxReplicas":14`, `"maxReplicas":1.4e1`,
			`"gpu":4`, `"gpu":4E0`, `"idleTimeoutSeconds":300`, `"idleTimeoutSeconds":-0`,
			`"activeDeadlineSeconds":3600`, `"activeDeadlineSeconds":36e2`},
		"big-numbers": {`"maxReplicas":6`, `"maxReplicas":1e400`, `"ttlSecondsAfterFinished":600`,
			`"ttlSecondsAfterFinished":123456789012345678901234567890`},
		"escapes": {`"image":"111122223333`, `"image":"\u0031\u00311122223333`, `"name":"ray-s3"`,
			`"name":"ray-\ud83d\ude00-\/-\"-\\-\t"`, `"gpuImage":"111122223333`, `"gpuImage":"rayproject\/ray`},
		"raw-unicode": {`"team":"ml-team-`, `"team":"ml-téam-😀-`, `"name":"Summarizer"`, `"name":"Sümmarizer"`},
	}
	for _, name := range slices.Sorted(maps.Keys(texts)) {
		pairs := texts[name]
		input := realisticInput(tb, len(inputs), nil)
		input.Name = name
		for i := 0; i < len(pairs); i += 2 {
			input.Env = json.RawMessage(strings.ReplaceAll(string(input.Env), pairs[i], pairs[i+1]))
			input.Objects = json.RawMessage(strings.ReplaceAll(string(input.Objects), pairs[i], pairs[i+1]))
		}
		if !json.Valid(input.Env) || !json.Valid(input.Objects) {
			tb.Fatalf("%s: not JSON", name)
		}
		inputs = append(inputs, input)
	}
	pretty := realisticInput(tb, len(inputs), tooManyGpus)
	pretty.Name = "pretty"
	env, _ := json.MarshalIndent(json.RawMessage(pretty.Env), "\t", "\t")
	pretty.Env = json.RawMessage(" \r\n" + string(env) + "\n\t ")
	objects, _ := json.MarshalIndent(json.RawMessage(pretty.Objects), "", "  ")
	pretty.Objects = json.RawMessage(strings.ReplaceAll(string(objects), "\n", "\r\n"))
	bare := groupsInput("bare", false, 2)
	bare.Objects = nil
	return append(inputs, pretty, bare, policyInput{Name: "empty", Env: json.RawMessage(`{}`),
		Objects: json.RawMessage(`[]`)})
}

// sameAnswers evaluates the request with the reference implementation and with the op's and requires the same
// answer: the same findings, in the same order, with the same paths, messages and positions, or the same error.
func sameAnswers(t *testing.T, what string, args policyArgs) *policyResult {
	t.Helper()
	want, wantErr := referenceEvaluatePolicies(args)
	got, gotErr := evaluatePolicies(args)
	if fmt.Sprint(wantErr) == fmt.Sprint(gotErr) && reflect.DeepEqual(want, got) {
		return got
	}
	if wantErr == nil && gotErr == nil && len(want.Findings) == len(got.Findings) {
		for i := range want.Findings {
			if !reflect.DeepEqual(want.Findings[i], got.Findings[i]) {
				wantJSON, _ := json.MarshalIndent(want.Findings[i], "", " ")
				gotJSON, _ := json.MarshalIndent(got.Findings[i], "", " ")
				t.Fatalf("%s, input %s: reference %s\nop %s", what, args.Inputs[i].Name, wantJSON, gotJSON)
			}
		}
	}
	wantJSON, _ := json.MarshalIndent(want, "", " ")
	gotJSON, _ := json.MarshalIndent(got, "", " ")
	t.Fatalf("%s: reference %s (%v)\nop %s (%v)", what, wantJSON, wantErr, gotJSON, gotErr)
	return nil
}

func TestPolicyAnswersEqualReference(t *testing.T) {
	inputs := realisticVariants(t)
	policies := append(realisticPolicies(t), equalityPolicies...)
	// every policy and every input in one request, then each policy alone (another choice of which inputs
	// values are built), each input alone
	all := sameAnswers(t, "all", policyArgs{Policies: policies, Inputs: inputs})
	if all == nil {
		t.Fatal("the request is an error")
	}
	findings := 0
	for _, found := range all.Findings {
		findings += len(found)
	}
	for _, policy := range policies {
		sameAnswers(t, policy.Name, policyArgs{Policies: []policySource{policy}, Inputs: inputs})
	}
	for _, input := range inputs {
		sameAnswers(t, input.Name, policyArgs{Policies: policies, Inputs: []policyInput{input}})
	}
	t.Logf("%d inputs, %d policies, %d findings", len(inputs), len(policies), findings)
}

// Inputs at the edges of what the op takes: those CUE does not take (the request's error, the same as before,
// whichever policy reads them first) and JSON text CUE's parser has read as it reads any.
func TestPolicyInputEdgesEqualReference(t *testing.T) {
	policies := realisticPolicies(t)
	valid := realisticInput(t, 1, nil)
	edited := func(where, old, new string) policyInput {
		input := valid
		input.Name = where + " " + new
		if where == "env" {
			input.Env = json.RawMessage(strings.Replace(string(input.Env), old, new, 1))
		} else {
			input.Objects = json.RawMessage(strings.Replace(string(input.Objects), old, new, 1))
		}
		return input
	}
	cases := []policyInput{
		edited("env", `"ray-0001"`, `"\ud800"`), edited("objects", `"ray-0001"`, `"\udc00\ud800"`),
		edited("env", `"ray-0001"`, "\"\xff\""), edited("objects", `"ray-0001"`, "\"a\xef\xbb\xbfb\""),
		edited("env", `"production":true`, `"production":true,"production":false`),
		edited("objects", `"kind":"Namespace"`, `"kind":"Namespace","kind":"x"`),
		edited("env", `{`, `[`), edited("objects", `[`, `{`),
		{Name: "null", Env: json.RawMessage(`null`)},
		{Name: "objects null", Env: valid.Env, Objects: json.RawMessage(`null`)},
		{Name: "env not JSON", Env: json.RawMessage(`{"a":`), Objects: valid.Objects},
		{Name: "objects not JSON", Env: valid.Env, Objects: json.RawMessage(`[{"a":1},`)},
		{Name: "env a string", Env: json.RawMessage(`"{}"`), Objects: valid.Objects},
		{Name: "objects an object", Env: valid.Env, Objects: json.RawMessage(` {"a":[]}`)},
		{Name: "spaces", Env: json.RawMessage(" \t" + string(valid.Env) + "\r\n"), Objects: json.RawMessage("\n[ ] ")},
	}
	bothBad := edited("env", `"ray-0001"`, `"\ud800"`)
	bothBad.Objects = edited("objects", `"ray-0001"`, `"\udc00"`).Objects
	cases = append(cases, bothBad)
	for _, input := range cases {
		for _, order := range [][]policySource{policies, {policies[1], policies[0]}, {policies[0]}, {policies[1]}} {
			sameAnswers(t, input.Name, policyArgs{Policies: order, Inputs: []policyInput{valid, input}})
		}
	}
}

func TestBrokenPoliciesEqualReference(t *testing.T) {
	for _, source := range []string{
		"package policy\n\nenv: {\n\tproduction: bool\n\n",
		"package policy\n\nenv: name: strings.MaxRunes(20)\n",
		"package policy\n\nimport \"example.com/nothing\"\n\nenv: name: nothing.X\n",
		"package policy\n\nimport \"strngs\"\n\nenv: name: strngs.MaxRunes(20)\n",
		"package policy\n\nenv: name: #krcInput.env.name\n",
		"package policy\n\nx: y\n",
	} {
		sameAnswers(t, source, policyArgs{Policies: append(realisticPolicies(t), policy("broken", source)),
			Inputs: []policyInput{realisticInput(t, 1, nil)}})
	}
}

// A request krc wrote (KRC_POLICY_REQUEST: a file of the op's args), when there is one.
func TestPolicyRequestEqualsReference(t *testing.T) {
	file := os.Getenv("KRC_POLICY_REQUEST")
	if file == "" {
		t.Skip("KRC_POLICY_REQUEST not set")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var args policyArgs
	if err := json.Unmarshal(data, &args); err != nil {
		t.Fatal(err)
	}
	sameAnswers(t, file, args)
}

// The input's syntax is what CUE's parser makes of its text: the same nodes, literals and offsets.
func TestInputSyntaxIsTheParsers(t *testing.T) {
	input := realisticInput(t, 1, nil)
	pretty, _ := json.MarshalIndent(json.RawMessage(input.Env), " ", "\t")
	for _, text := range []string{
		string(input.Env), string(input.Objects), string(pretty), `[]`, `{}`, ` [ {} , [ ] ,{"a" :[null]} ] `,
		`{"n": [0, -0, 12, -12, 1.5, -1.5e-3, 1E400, 0.1e+2, 123456789012345678901234567890]}`,
		`{"s": ["", "\"", "\\", "\/", "\u00e9\ud83d\ude00", "é😀", "\b\f\n\r\t", "a\u0000b"], "": true, "#d": false}`,
	} {
		for _, pair := range [][2]string{{string(input.Env), text}, {text, string(input.Objects)}} {
			ours, ok := inputSyntax([]byte(pair[0]), []byte(pair[1]))
			if !ok {
				t.Fatalf("%s: not taken", text)
			}
			parsers, err := parser.ParseFile(inputFile, inputText([]byte(pair[0]), []byte(pair[1])))
			if err != nil {
				t.Fatal(err)
			}
			if a, b := syntaxNodes(ours), syntaxNodes(parsers); !slices.Equal(a, b) {
				t.Fatalf("%s:\nours     %q\nparser's %q", text, a, b)
			}
		}
	}
}

// syntaxNodes lists a syntax tree's nodes with what CUE compiles of them, each at its offset.
func syntaxNodes(node ast.Node) []string {
	var nodes []string
	ast.Walk(node, func(node ast.Node) bool {
		about := ""
		switch node := node.(type) {
		case *ast.BasicLit:
			about = node.Kind.String() + " " + node.Value
		case *ast.UnaryExpr:
			about = node.Op.String()
		case *ast.Field:
			about = fmt.Sprint(node.Constraint, node.TokenPos.Offset(), node.Alias, node.Attrs)
		case *ast.StructLit:
			about = fmt.Sprint(node.Lbrace.Offset(), node.Rbrace.Offset())
		case *ast.ListLit:
			about = fmt.Sprint(node.Lbrack.Offset(), node.Rbrack.Offset())
		}
		nodes = append(nodes, fmt.Sprintf("%T %d %s %s", node, node.Pos().Offset(), node.Pos().Position(), about))
		return true
	}, nil)
	return nodes
}
