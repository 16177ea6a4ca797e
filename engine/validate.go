package main

// The "validate" op: what the API server does with a custom resource on create, or on update when the stored
// object (krc's golden copy) is given, through k8s.io/apiextensions-apiserver's own packages. Per CRD version,
// built once and cached by the CRD's digest: the structural schema (defaults pruned, as the server does), the
// schema validators and the strategy customresource.NewStrategy builds (CEL compiled with the server's
// per-call limit). Per object: the decoding steps of the server's unexported unstructuredSchemaCoercer
// (metadata kept, pruning with unknown-field paths as strict field validation reports them, non-nullable nulls
// dropped, metadata coerced), defaulting, then rest.BeforeCreate or rest.BeforeUpdate with that strategy:
// schema validation, embedded metadata, list types, CEL rules with the server's runtime budget, transition
// rules against the old object, ratcheting (CRDValidationRatcheting is GA), and the generic metadata checks.
//
// Not run: admission (webhooks, ValidatingAdmissionPolicy), conversion webhooks, server-side apply field
// ownership, and the CRD's own validation.

import (
	"encoding/json"
	"errors"
	"fmt"
)

// validateArgs: one CRD and the objects to judge against it. A caller that sent the CRD before may send only
// its digest (the result's crdDigest); when the engine no longer holds it, the result says needCRD.
type validateArgs struct {
	CRD       json.RawMessage `json:"crd"`
	CRDDigest string          `json:"crdDigest"`
	Objects   []validateItem  `json:"objects"`
	// Compile names versions to compile now, before any object asks for them: krc sends a chart's CRDs ahead,
	// with no objects, while the environments still render. A version that does not compile is left for the
	// first object of that version to report.
	Compile []string `json:"compile"`
	// Share asks for the CRD's versions compiled from now on to share their identical subtrees with the other
	// CRDs' (validate_share.go): krc asks in a run of many environments, where the memory matters; sharing
	// costs compile time, which a run of a few environments waits for.
	Share bool `json:"share"`
}

type validateItem struct {
	Object json.RawMessage `json:"object"`
	// Old is the object as stored (krc's golden copy): given, the object is judged as an update of it
	Old json.RawMessage `json:"old"`
	// Namespace is the request's namespace for a namespaced object without one (Argo CD's destination)
	Namespace string `json:"namespace"`
}

type validateResult struct {
	CRDDigest string         `json:"crdDigest"`
	NeedCRD   bool           `json:"needCRD,omitempty"`
	Results   []objectResult `json:"results"`
}

type objectResult struct {
	Operation string `json:"operation"` // create | update
	// Object is the object as decoded by the server: unknown fields pruned, defaults applied
	Object   map[string]any `json:"object,omitempty"`
	Errors   []fieldError   `json:"errors"`
	Warnings []string       `json:"warnings,omitempty"`
}

type fieldError struct {
	Path    []any  `json:"path"`  // keys and list indexes
	Field   string `json:"field"` // as the server prints it
	Type    string `json:"type"`  // Required, Invalid, Forbidden, NotSupported, TypeInvalid, UnknownField, ...
	Message string `json:"message"`
	Detail  string `json:"detail"`
	// Origin is krc's classification, not the server's: pruning, schema, cel, list, metadata, request, skipped
	Origin string `json:"origin"`
	// UpdateOnly: the update is rejected but the same object would be accepted on create
	UpdateOnly bool `json:"updateOnly,omitempty"`
}

// errCRDNotHeld: a request named a CRD by digest that the cache no longer holds.
var errCRDNotHeld = errors.New("CRD not held")

func validateOp(raw json.RawMessage) (any, error) {
	var args validateArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("validate: bad arguments: %v", err)
	}
	crd, digest, err := crdCache.get(args.CRD, args.CRDDigest)
	if errors.Is(err, errCRDNotHeld) {
		return validateResult{CRDDigest: args.CRDDigest, NeedCRD: true, Results: []objectResult{}}, nil
	}
	if err != nil {
		return nil, err
	}
	if args.Share {
		crd.share.Store(true)
	}
	for _, name := range args.Compile {
		_, _, _ = crd.version(name)
	}
	out := validateResult{CRDDigest: digest, Results: make([]objectResult, 0, len(args.Objects))}
	for i, item := range args.Objects {
		result, err := crd.validate(item)
		if err != nil {
			return nil, fmt.Errorf("validate: object %d: %v", i, err)
		}
		out.Results = append(out.Results, result)
	}
	return out, nil
}
