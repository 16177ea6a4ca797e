package main

// The policies unified with an input all at once before one by one. An environment that passes every policy (most
// of them, most of the time) then costs one pass of CUE over its input instead of one per policy; one that fails
// any is evaluated one policy at a time exactly as before, so every finding still names the policy it is of.
//
// Why a joint pass that finds nothing means each policy on its own finds nothing: unification only adds
// constraints, and an error (a conflict, a field the closed input does not allow) stays an error whatever else is
// unified with it. What one policy could hide of another's findings is a value that other policy leaves incomplete
// (`fieldCount: int`) and this one makes concrete (`fieldCount: 3`), or a hidden field both use. Inside env and
// objects that cannot happen: the input there is concrete data, closed by its definition, so no policy can add a
// field or change a value there without an error. Outside them, a policy reaches only what it declares at its top
// level: the joint pass is made only when no two policies declare the same label there (comprehensions at the top
// level included), and never for a policy that may declare any label (a pattern constraint, a dynamic label, an
// embedded value).

import (
	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
)

// topLevel is what a policy's file declares at its top level besides env and objects: the labels of its fields
// (those inside top-level comprehensions too), or anyLabel when some declaration may define any label.
type topLevel struct {
	labels   []string
	anyLabel bool
}

func topLevelOf(decls []ast.Decl) topLevel {
	var declared topLevel
	var visit func(decls []ast.Decl)
	visit = func(decls []ast.Decl) {
		for _, decl := range decls {
			switch decl := decl.(type) {
			case *ast.Field:
				name, _, err := ast.LabelName(decl.Label)
				if err != nil { // a pattern constraint ([string]: ...) or a label computed from a value
					declared.anyLabel = true
				} else if name != "env" && name != "objects" {
					declared.labels = append(declared.labels, name)
				}
			case *ast.Comprehension:
				if body, ok := decl.Value.(*ast.StructLit); ok {
					visit(body.Elts)
				} else {
					declared.anyLabel = true
				}
				if decl.Fallback != nil && decl.Fallback.Body != nil {
					visit(decl.Fallback.Body.Elts)
				}
			case *ast.Package, *ast.ImportDecl, *ast.LetClause, *ast.Attribute, *ast.CommentGroup:
				// declare no field of the value
			default: // an embedded value, `...`: may declare anything
				declared.anyLabel = true
			}
		}
	}
	visit(decls)
	return declared
}

// jointPolicies is the policies of a request unified with each other, when a pass of them together is sound.
type jointPolicies struct {
	value   cue.Value
	objects bool // some policy reads the objects: the pass gets them
	usable  bool
}

// jointly unifies the policies when there are several and no two of them declare the same top-level label.
func jointly(policies []builtPolicy) jointPolicies {
	if len(policies) < 2 {
		return jointPolicies{}
	}
	seen := map[string]bool{}
	joint := jointPolicies{value: policies[0].value, usable: true}
	for i, policy := range policies {
		if policy.topLevel.anyLabel {
			return jointPolicies{}
		}
		for _, label := range policy.topLevel.labels {
			if seen[label] {
				return jointPolicies{}
			}
		}
		for _, label := range policy.topLevel.labels { // a label a policy declares twice is its own business
			seen[label] = true
		}
		if i > 0 {
			joint.value = joint.value.Unify(policy.value)
		}
		joint.objects = joint.objects || policy.objects
	}
	return joint
}

// passes: the input passes every policy (false when it may not, or when no joint pass is made).
func (joint jointPolicies) passes(forms inputForms) bool {
	return joint.usable && joint.value.Unify(forms.read(joint.objects)).Validate(cue.Concrete(true)) == nil
}
