package main

// The policy op as it was at 93f6705 (a context per input, the policies built again in each, the input compiled
// from its JSON text, its definition a field of the data), kept as the reference the op's answers must equal
// (policy_equal_test.go) and the baseline of BenchmarkPolicy. It shares the op's types and constants.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
)

type referenceBuiltPolicy struct {
	source  policySource
	value   cue.Value
	objects bool
}

func referenceEvaluatePolicies(args policyArgs) (*policyResult, error) {
	result := &policyResult{Broken: []policyError{}, Findings: make([][]policyError, len(args.Inputs))}
	// a context per input: CUE keeps every value a context made until the context goes, so one context for the
	// whole request would hold every input's objects (as CUE's vertices) to its end; the first input's context is
	// the one the policies are first built in, which reports a broken one before any input is read
	ctx := cuecontext.New()
	policies, broken := referenceBuildPolicies(ctx, args.Policies)
	if len(broken) > 0 {
		result.Broken = broken
		result.Findings = [][]policyError{}
		return result, nil
	}
	for i, input := range args.Inputs {
		if i > 0 {
			ctx = cuecontext.New()
			policies, _ = referenceBuildPolicies(ctx, args.Policies)
		}
		withObjects, withoutObjects, err := referenceInputValues(ctx, input, policies)
		if err != nil {
			return nil, err
		}
		found := []policyError{}
		for _, policy := range policies {
			data := withoutObjects
			if policy.objects {
				data = withObjects
			}
			if err := policy.value.Unify(data).Validate(cue.Concrete(true)); err != nil {
				found = append(found, referencePolicyErrors(policy.source, err)...)
			}
		}
		result.Findings[i] = found
	}
	return result, nil
}

// referenceBuildPolicies builds each policy in ctx; the errors of those that do not build.
func referenceBuildPolicies(ctx *cue.Context, sources []policySource) ([]referenceBuiltPolicy, []policyError) {
	policies := make([]referenceBuiltPolicy, 0, len(sources))
	var broken []policyError
	for _, source := range sources {
		value, err := referenceBuildPolicy(ctx, source)
		if err != nil {
			broken = append(broken, referencePolicyErrors(source, err)...)
			continue
		}
		policies = append(policies, referenceBuiltPolicy{source, value, namesObjects.MatchString(source.Source)})
	}
	return policies, broken
}

// referenceBuildPolicy compiles a policy with `env` and `objects` declared (as top, `_`) after its own declarations, so it
// may read them without declaring them, as it reads the fields krc gives it. The error is about the policy
// itself: a syntax error, a reference to nothing, an import CUE does not have.
func referenceBuildPolicy(ctx *cue.Context, source policySource) (cue.Value, error) {
	file, err := parser.ParseFile(source.File, source.Source)
	if err != nil {
		return cue.Value{}, err
	}
	for spec := range file.ImportSpecs() {
		if path, _ := strconv.Unquote(spec.Path.Value); strings.Contains(path, ".") {
			return cue.Value{}, errors.Newf(spec.Path.Pos(), "import %q: a policy can import only CUE's standard "+
				"library (list, strings, regexp, ...); write what it needs in the policy", path)
		}
	}
	for _, name := range []string{"env", "objects"} {
		file.Decls = append(file.Decls, &ast.Field{Label: ast.NewIdent(name), Value: ast.NewIdent("_")})
	}
	// an instance of krc's own (no loader: only CUE's standard library can be imported, nothing is looked up on
	// disk or in a registry); building it sets its Err to the compile errors alone, not to evaluation errors a
	// policy on its own may have (an index into a list the environment has not filled yet)
	instance := build.NewContext().NewInstance(source.File, nil)
	if err := instance.AddSyntax(file); err != nil {
		return cue.Value{}, err
	}
	value := ctx.BuildInstance(instance)
	if instance.Err != nil {
		return value, instance.Err
	}
	return value, nil
}

// referenceInputValues compiles one input as the policies read it: with its objects, and with an empty list in their place
// (each only when some policy reads it that way).
func referenceInputValues(ctx *cue.Context, input policyInput, policies []referenceBuiltPolicy) (withObjects, withoutObjects cue.Value,
	err error) {
	env, objects := []byte(input.Env), []byte(input.Objects)
	if len(objects) == 0 {
		objects = []byte("[]")
	}
	var probeEnv map[string]json.RawMessage
	var probeObjects []json.RawMessage
	if json.Unmarshal(env, &probeEnv) != nil || probeEnv == nil || json.Unmarshal(objects, &probeObjects) != nil {
		return cue.Value{}, cue.Value{}, fmt.Errorf("input %q: env must be a JSON object and objects a JSON array",
			input.Name)
	}
	compile := func(objects []byte) (cue.Value, error) {
		text := fmt.Sprintf("env: %[1]s.env\nobjects: %[1]s.objects\n%[1]s: env: %[2]s\n%[1]s: objects: %[3]s\n",
			inputDefinition, env, objects)
		value := ctx.CompileString(text, cue.Filename(inputFile))
		if err := value.Err(); err != nil {
			return value, fmt.Errorf("input %q cannot be given to CUE: %v", input.Name, err)
		}
		return value, nil
	}
	for _, policy := range policies {
		if policy.objects && !withObjects.Exists() {
			if withObjects, err = compile(objects); err != nil {
				return
			}
		} else if !policy.objects && !withoutObjects.Exists() {
			if withoutObjects, err = compile([]byte("[]")); err != nil {
				return
			}
		}
	}
	return
}

// referencePolicyErrors turns CUE's errors into krc's form, keeping only positions in the policy's own file.
func referencePolicyErrors(source policySource, err error) []policyError {
	var out []policyError
	for _, each := range errors.Errors(err) {
		format, args := each.Msg()
		found := policyError{Policy: source.Name, Path: referencePathOf(each.Path()), Message: fmt.Sprintf(format, args...),
			Positions: []policyPosition{}}
		seen := map[policyPosition]bool{}
		for _, pos := range errors.Positions(each) {
			at := policyPosition{pos.Filename(), pos.Line(), pos.Column()}
			if at.File == source.File && !seen[at] {
				seen[at] = true
				found.Positions = append(found.Positions, at)
			}
		}
		out = append(out, found)
	}
	sort.SliceStable(out, func(i, j int) bool { return fmt.Sprint(out[i].Path) < fmt.Sprint(out[j].Path) })
	return out
}

// referencePathOf reads CUE's path labels: list indexes become numbers, quoted labels ("my-field") their text.
func referencePathOf(labels []string) []any {
	path := make([]any, 0, len(labels))
	for _, label := range labels {
		if index, err := strconv.Atoi(label); err == nil && index >= 0 {
			path = append(path, index)
		} else if text, err := strconv.Unquote(label); err == nil {
			path = append(path, text)
		} else {
			path = append(path, label)
		}
	}
	return path
}
