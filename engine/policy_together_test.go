package main

import (
	"reflect"
	"slices"
	"testing"

	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/parser"
)

func declaredBy(t *testing.T, source string) topLevel {
	t.Helper()
	file, err := parser.ParseFile("p.cue", source)
	if err != nil {
		t.Fatal(err)
	}
	return topLevelOf(file.Decls)
}

func TestTopLevelLabels(t *testing.T) {
	for source, want := range map[string]topLevel{
		"package policy\n\nimport \"list\"\n\nenv: ray: image: string\nobjects: [...]\n":       {},
		"package policy\n\n_n: 3\n#D: {a: int}\ntotal: _n\n\"quoted-x\": 1\nlet l = 2\nm: l\n": {labels: []string{"_n", "#D", "total", "quoted-x", "m"}},
		"package policy\n\nif env.production {\n\ttotalGpus: 3\n\tenv: x: 1\n}\n":              {labels: []string{"totalGpus"}},
		"package policy\n\nfor k, _ in env {(k): 1}\n":                                         {anyLabel: true},
		"package policy\n\n[=~\"^e\"]: {production?: true, ...}\n":                             {anyLabel: true},
		"package policy\n\n{a: 1}\n":                                                           {anyLabel: true},
	} {
		got := declaredBy(t, source)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %+v, want %+v", source, got, want)
		}
	}
}

func TestShippedPoliciesAreEvaluatedTogether(t *testing.T) {
	policies, broken := buildPolicies(cuecontext.New(), realisticPolicies(t))
	if len(broken) > 0 || len(policies) < 2 {
		t.Fatalf("the shipped policies: %d built, %v", len(policies), broken)
	}
	if !jointly(policies).usable {
		t.Fatal("krc's own policies declare a top-level label twice: each environment would cost a pass per policy")
	}
}

// What a joint pass could hide: a value one policy leaves incomplete and another makes concrete, through a field
// or a hidden field both declare. Such policies are evaluated one at a time, so the finding stays.
func TestJointPassHidesNoFinding(t *testing.T) {
	input := realisticInput(t, 1, nil)
	for _, pair := range [][2]string{
		{"package policy\n\nfieldCount: int\n", "package policy\n\nfieldCount: 3\n"},
		{"package policy\n\n_n: int\ntotal: _n + 1\n", "package policy\n\n_n: 2\n"},
		{"package policy\n\nif env.production {\n\tlimit: int\n}\n", "package policy\n\nlimit: 32\n"},
	} {
		policies := []policySource{policy("leaves", pair[0]), policy("fills", pair[1])}
		built, _ := buildPolicies(cuecontext.New(), policies)
		if jointly(built).usable {
			t.Errorf("%q and %q share a label but would be evaluated together", pair[0], pair[1])
		}
		result := sameAnswers(t, pair[0], policyArgs{Policies: policies, Inputs: []policyInput{input}})
		if len(result.Findings[0]) == 0 || result.Findings[0][0].Policy != "leaves" {
			t.Errorf("%q: the incomplete value is not reported: %+v", pair[0], result.Findings)
		}
	}
}

// Each policy of the equality set beside krc's own, over every realistic variant: a request whose policies are
// evaluated together where they all pass, one at a time where any fails, and the same answers as one at a time
// throughout.
func TestJointPassEqualsReference(t *testing.T) {
	inputs := realisticVariants(t)
	shipped := realisticPolicies(t)
	together := 0
	for _, extra := range equalityPolicies {
		policies := append(slices.Clone(shipped), extra)
		built, _ := buildPolicies(cuecontext.New(), policies)
		if jointly(built).usable {
			together++
		}
		sameAnswers(t, extra.Name, policyArgs{Policies: policies, Inputs: inputs})
	}
	if together < len(equalityPolicies)/2 {
		t.Fatalf("only %d of %d requests evaluated their policies together: the test no longer tests the joint pass",
			together, len(equalityPolicies))
	}
}
