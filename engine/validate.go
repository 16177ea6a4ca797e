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
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	apihelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/apiserver/pkg/warning"
)

// validateArgs: one CRD and the objects to judge against it. A caller that sent the CRD before may send only
// its digest (the result's crdDigest); when the engine no longer holds it, the result says needCRD.
type validateArgs struct {
	CRD       json.RawMessage `json:"crd"`
	CRDDigest string          `json:"crdDigest"`
	Objects   []validateItem  `json:"objects"`
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

// ---- the compiled CRD cache ----

const crdCacheSize = 32

type crdEntry struct {
	digest string
	ready  chan struct{} // closed when crd/err are set
	crd    *compiledCRD
	err    error
}

// crdLRU holds compiled CRDs by digest, at most crdCacheSize, least recently used out first. A CRD asked for
// by several requests at once is compiled once; the others wait for it.
type crdLRU struct {
	mu      sync.Mutex
	order   *list.List // of *crdEntry, most recent first
	entries map[string]*list.Element
	limit   int
}

var crdCache = newCRDLRU(crdCacheSize)

func newCRDLRU(limit int) *crdLRU {
	return &crdLRU{order: list.New(), entries: map[string]*list.Element{}, limit: limit}
}

func crdDigest(raw []byte) string {
	sum := sha256.Sum256(raw)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (c *crdLRU) get(raw json.RawMessage, named string) (*compiledCRD, string, error) {
	digest := named
	if len(raw) > 0 && string(raw) != "null" {
		digest = crdDigest(raw)
	} else if named == "" {
		return nil, "", errors.New("validate: give the CRD (crd) or the digest of one sent before (crdDigest)")
	}
	c.mu.Lock()
	element, found := c.entries[digest]
	if found {
		c.order.MoveToFront(element)
	} else {
		if len(raw) == 0 || string(raw) == "null" {
			c.mu.Unlock()
			return nil, digest, errCRDNotHeld
		}
		element = c.order.PushFront(&crdEntry{digest: digest, ready: make(chan struct{})})
		c.entries[digest] = element
		for c.order.Len() > c.limit {
			oldest := c.order.Back()
			c.order.Remove(oldest)
			delete(c.entries, oldest.Value.(*crdEntry).digest)
		}
	}
	entry := element.Value.(*crdEntry)
	c.mu.Unlock()
	if !found {
		entry.crd, entry.err = compileCRD(raw)
		if entry.err != nil { // not kept: the next request with this CRD gets the same error, freshly
			c.mu.Lock()
			if current, ok := c.entries[digest]; ok && current == element {
				c.order.Remove(element)
				delete(c.entries, digest)
			}
			c.mu.Unlock()
		}
		close(entry.ready)
	}
	<-entry.ready
	return entry.crd, digest, entry.err
}

func (c *crdLRU) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}

// ---- compiling a CRD, as crdHandler.getOrCreateServingInfoFor does ----

// strategy is what customresource.NewStrategy returns (its type is unexported): both REST strategies.
type strategy interface {
	rest.RESTCreateStrategy
	rest.RESTUpdateStrategy
}

type compiledVersion struct {
	name        string
	served      bool
	deprecation string // the warning the server sends for a deprecated version, "" when not deprecated
	structural  *structuralschema.Structural
	strategy    strategy
	celMessages map[string]bool // the details CEL rule failures carry, to tell them from schema errors
}

type compiledCRD struct {
	name                  string
	group                 string
	kind                  string
	namespaced            bool
	preserveUnknownFields bool
	conversionNone        bool
	versions              map[string]*compiledVersion
	served                []string
}

func compileCRD(raw []byte) (*compiledCRD, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(raw, crd); err != nil {
		return nil, fmt.Errorf("validate: the CRD is not a CustomResourceDefinition: %v", err)
	}
	if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Kind != "CustomResourceDefinition" {
		return nil, fmt.Errorf("validate: the CRD must be apiextensions.k8s.io/v1 CustomResourceDefinition, not %s %s",
			crd.APIVersion, crd.Kind)
	}
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(crd) // as the server stores it
	out := &compiledCRD{
		name:                  crd.Name,
		group:                 crd.Spec.Group,
		kind:                  crd.Spec.Names.Kind,
		namespaced:            crd.Spec.Scope == apiextensionsv1.NamespaceScoped,
		preserveUnknownFields: crd.Spec.PreserveUnknownFields,
		conversionNone:        crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy == apiextensionsv1.NoneConverter,
		versions:              map[string]*compiledVersion{},
	}
	if out.group == "" || out.kind == "" || len(crd.Spec.Versions) == 0 {
		return nil, fmt.Errorf("validate: CRD %q lacks spec.group, spec.names.kind or spec.versions", crd.Name)
	}
	typer := crdserverscheme.NewUnstructuredObjectTyper()
	for _, v := range crd.Spec.Versions {
		compiled, err := compileVersion(crd, v, out, typer)
		if err != nil {
			return nil, fmt.Errorf("validate: CRD %s version %s: %v", crd.Name, v.Name, err)
		}
		out.versions[v.Name] = compiled
		if v.Served {
			out.served = append(out.served, v.Name)
		}
	}
	return out, nil
}

func compileVersion(crd *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion,
	out *compiledCRD, typer *crdserverscheme.UnstructuredObjectTyper) (*compiledVersion, error) {
	compiled := &compiledVersion{name: v.Name, served: v.Served, celMessages: map[string]bool{}}
	if v.Deprecated {
		compiled.deprecation = fmt.Sprintf("%s/%s %s is deprecated", crd.Spec.Group, v.Name, crd.Spec.Names.Kind)
		if v.DeprecationWarning != nil {
			compiled.deprecation = *v.DeprecationWarning
		}
	}
	validation, err := apihelpers.GetSchemaForVersion(crd, v.Name)
	if err != nil {
		return nil, err
	}
	var internalProps *apiextensionsinternal.JSONSchemaProps
	if validation != nil {
		internal := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(
			validation, internal, nil); err != nil {
			return nil, fmt.Errorf("converting the schema: %v", err)
		}
		internalProps = internal.OpenAPIV3Schema
		structural, err := structuralschema.NewStructural(internalProps)
		if err != nil && !crd.Spec.PreserveUnknownFields {
			return nil, fmt.Errorf("the schema is not structural (the API server refuses such a CRD): %v", err)
		}
		if !crd.Spec.PreserveUnknownFields {
			if errs := structuralschema.ValidateStructural(nil, structural); len(errs) > 0 {
				return nil, fmt.Errorf("the schema is not structural (the API server refuses such a CRD): %v",
					errs.ToAggregate())
			}
			structural = structural.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(structural); err != nil {
				return nil, fmt.Errorf("pruning defaults: %v", err)
			}
		}
		compiled.structural = structural
		collectCELMessages(structural, compiled.celMessages)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(internalProps)
	if err != nil {
		return nil, err
	}
	subresources, err := apihelpers.GetSubresourcesForVersion(crd, v.Name)
	if err != nil {
		return nil, err
	}
	var statusSpec *apiextensionsinternal.CustomResourceSubresourceStatus
	var statusValidator apiservervalidation.SchemaValidator
	if subresources != nil && subresources.Status != nil {
		statusSpec = &apiextensionsinternal.CustomResourceSubresourceStatus{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceStatus_To_apiextensions_CustomResourceSubresourceStatus(
			subresources.Status, statusSpec, nil); err != nil {
			return nil, err
		}
		if internalProps != nil && internalProps.Properties != nil {
			if statusSchema, ok := internalProps.Properties["status"]; ok {
				if statusValidator, _, err = apiservervalidation.NewSchemaValidator(&statusSchema); err != nil {
					return nil, err
				}
			}
		}
	}
	var scaleSpec *apiextensionsinternal.CustomResourceSubresourceScale
	if subresources != nil && subresources.Scale != nil {
		scaleSpec = &apiextensionsinternal.CustomResourceSubresourceScale{}
		if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(
			subresources.Scale, scaleSpec, nil); err != nil {
			return nil, err
		}
	}
	kind := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
	compiled.strategy = customresource.NewStrategy(typer, out.namespaced, kind, validator, statusValidator,
		compiled.structural, statusSpec, scaleSpec, v.SelectableFields)
	return compiled, nil
}

// collectCELMessages records what a failing rule's error detail is (its message, or "failed rule: <rule>").
func collectCELMessages(s *structuralschema.Structural, into map[string]bool) {
	if s == nil {
		return
	}
	for _, rule := range s.XValidations {
		if strings.TrimSpace(rule.Message) != "" {
			into[strings.TrimSpace(rule.Message)] = true
		}
	}
	for name := range s.Properties {
		property := s.Properties[name]
		collectCELMessages(&property, into)
	}
	collectCELMessages(s.Items, into)
	if s.AdditionalProperties != nil {
		collectCELMessages(s.AdditionalProperties.Structural, into)
	}
}

// ---- one object ----

type warnings struct {
	mu   sync.Mutex
	seen []string
}

func (w *warnings) AddWarning(_, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, known := range w.seen {
		if known == text {
			return
		}
	}
	w.seen = append(w.seen, text)
}

func decodeObject(raw json.RawMessage) (map[string]any, error) {
	var obj map[string]any
	// the apimachinery decoder: integral numbers become int64, as the server's JSON serializer makes them
	if err := utiljson.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, errors.New("not a JSON object")
	}
	return obj, nil
}

func (c *compiledCRD) validate(item validateItem) (objectResult, error) {
	result := objectResult{Operation: "create", Errors: []fieldError{}}
	obj, err := decodeObject(item.Object)
	if err != nil {
		return result, fmt.Errorf("object: %v", err)
	}
	hasOld := len(item.Old) > 0 && string(item.Old) != "null"
	if hasOld {
		result.Operation = "update"
	}
	recorder := &warnings{}
	version, errs := c.versionOf(obj)
	if len(errs) > 0 {
		result.Errors = c.report(errs, "request", nil)
		return result, nil
	}
	if version.deprecation != "" {
		recorder.AddWarning("", version.deprecation)
	}
	u := &unstructured.Unstructured{Object: obj}
	unknown, err := c.coerce(u, version)
	if err != nil { // the server answers 400 Bad Request before any validation
		result.Errors = []fieldError{{Path: []any{"metadata"}, Field: "metadata", Type: "Invalid",
			Message: err.Error(), Detail: err.Error(), Origin: "metadata"}}
		return result, nil
	}
	for _, path := range unknown {
		result.Errors = append(result.Errors, fieldError{Path: parseFieldPath(path), Field: path, Type: "UnknownField",
			Message: fmt.Sprintf("unknown field %q", path), Detail: "unknown field", Origin: "pruning"})
	}
	structuraldefaulting.Default(u.Object, version.structural)
	result.Object = u.DeepCopy().Object

	namespace := c.requestNamespace(u, item.Namespace)
	ctx := warning.WithWarningRecorder(genericrequest.WithNamespace(context.Background(), namespace), recorder)
	if !hasOld {
		result.Errors = append(result.Errors, c.report(c.create(ctx, version, u), "", version)...)
	} else {
		oldObj, err := decodeObject(item.Old)
		if err != nil {
			return result, fmt.Errorf("old: %v", err)
		}
		old, err := c.stored(oldObj, version)
		if err != nil {
			return result, fmt.Errorf("old: %v", err)
		}
		onCreate := u.DeepCopy()
		updateErrs := c.update(ctx, version, u, old)
		var createErrs field.ErrorList
		if len(updateErrs) > 0 {
			quiet := genericrequest.WithNamespace(context.Background(), namespace)
			createErrs = c.create(quiet, version, onCreate)
		}
		reported := c.report(updateErrs, "", version)
		for i := range reported {
			reported[i].UpdateOnly = !containsError(createErrs, reported[i])
		}
		result.Errors = append(result.Errors, reported...)
	}
	result.Warnings = recorder.seen
	return result, nil
}

// versionOf finds the served version of the object's apiVersion, or says why the server would not serve it.
func (c *compiledCRD) versionOf(obj map[string]any) (*compiledVersion, field.ErrorList) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || gv.Group != c.group {
		return nil, field.ErrorList{field.Invalid(field.NewPath("apiVersion"), apiVersion,
			fmt.Sprintf("must be %s/<version> for CRD %s", c.group, c.name))}
	}
	if kind != c.kind {
		return nil, field.ErrorList{field.Invalid(field.NewPath("kind"), kind, fmt.Sprintf("must be %s", c.kind))}
	}
	version, ok := c.versions[gv.Version]
	if !ok || !version.served {
		return nil, field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), apiVersion,
			prefixed(c.group+"/", c.served))}
	}
	return version, nil
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = prefix + name
	}
	return out
}

// coerce is what the server's unstructuredSchemaCoercer.apply does while decoding a request (strict field
// validation: unknown field paths are returned).
func (c *compiledCRD) coerce(u *unstructured.Unstructured, version *compiledVersion) ([]string, error) {
	kind, foundKind, err := unstructured.NestedString(u.Object, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u.Object, "apiVersion")
	if err != nil {
		return nil, err
	}
	objectMeta, foundObjectMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object,
		schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return nil, err
	}
	if !c.preserveUnknownFields && version.structural != nil {
		unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, version.structural, true,
			structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, version.structural)
	}
	metaErr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, version.structural, false,
		schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	if metaErr != nil { // a *field.Error: compared before it becomes an error interface
		return nil, metaErr
	}
	unknown = append(unknown, paths...)
	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

func (c *compiledCRD) requestNamespace(u *unstructured.Unstructured, given string) string {
	if !c.namespaced {
		return metav1.NamespaceNone
	}
	if namespace := u.GetNamespace(); namespace != "" {
		return namespace
	}
	if given != "" {
		return given
	}
	return metav1.NamespaceDefault
}

// recording keeps the field errors the strategy returns: rest.BeforeCreate/BeforeUpdate wrap them in a
// StatusError whose causes have lost their structure.
type recording struct {
	strategy
	errs field.ErrorList
}

func (r *recording) Validate(ctx context.Context, obj k8sruntime.Object) field.ErrorList {
	r.errs = r.strategy.Validate(ctx, obj)
	return r.errs
}

func (r *recording) ValidateUpdate(ctx context.Context, obj, old k8sruntime.Object) field.ErrorList {
	r.errs = r.strategy.ValidateUpdate(ctx, obj, old)
	return r.errs
}

// create runs rest.BeforeCreate, after the system fields the registry fills in first.
func (c *compiledCRD) create(ctx context.Context, version *compiledVersion, u *unstructured.Unstructured) field.ErrorList {
	if u.GetName() == "" && u.GetGenerateName() != "" {
		u.SetName(names.SimpleNameGenerator.GenerateName(u.GetGenerateName()))
	}
	rest.FillObjectMetaSystemFields(u)
	strat := &recording{strategy: version.strategy}
	return collect(rest.BeforeCreate(strat, ctx, u), strat.errs)
}

// stored is the old object as the server holds it: decoded with its version's schema and defaults, converted
// to the request's version (conversion None only sets apiVersion), with the metadata a create gave it.
func (c *compiledCRD) stored(obj map[string]any, version *compiledVersion) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{Object: obj}
	oldVersion, errs := c.versionOf(obj)
	if len(errs) > 0 {
		if _, defined := c.versions[u.GroupVersionKind().Version]; !defined || u.GetKind() != c.kind {
			return nil, fmt.Errorf("not a %s of this CRD: %v", c.kind, errs.ToAggregate())
		}
		oldVersion = c.versions[u.GroupVersionKind().Version]
	}
	if _, err := c.coerce(u, oldVersion); err != nil {
		return nil, err
	}
	structuraldefaulting.Default(u.Object, oldVersion.structural)
	if oldVersion != version {
		if !c.conversionNone {
			return nil, fmt.Errorf("stored as %s, asked as %s: CRD %s converts through a webhook, which krc "+
				"cannot call", oldVersion.name, version.name, c.name)
		}
		u.SetAPIVersion(c.group + "/" + version.name)
		if _, err := c.coerce(u, version); err != nil {
			return nil, err
		}
		structuraldefaulting.Default(u.Object, version.structural)
	}
	if u.GetGeneration() == 0 {
		u.SetGeneration(1)
	}
	if u.GetUID() == "" {
		rest.FillObjectMetaSystemFields(u)
	}
	if u.GetResourceVersion() == "" {
		u.SetResourceVersion("1")
	}
	return u, nil
}

// update runs rest.BeforeUpdate. An apply is a patch of the live object, so the request carries its
// resourceVersion.
func (c *compiledCRD) update(ctx context.Context, version *compiledVersion, u, old *unstructured.Unstructured) field.ErrorList {
	if u.GetResourceVersion() == "" {
		u.SetResourceVersion(old.GetResourceVersion())
	}
	strat := &recording{strategy: version.strategy}
	return collect(rest.BeforeUpdate(strat, ctx, u, old), strat.errs)
}

// collect: the strategy's own errors, exact, plus the causes of what rest.Before* added around them (the generic
// metadata checks) or returned instead (a namespace mismatch).
func collect(err error, recorded field.ErrorList) field.ErrorList {
	if err == nil {
		return nil
	}
	out := append(field.ErrorList{}, recorded...)
	seen := map[string]bool{}
	for _, e := range recorded {
		seen[e.Field+"\x00"+string(e.Type)+"\x00"+e.ErrorBody()] = true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		if len(recorded) == 0 {
			out = append(out, field.Invalid(nil, nil, err.Error()))
		}
		return out
	}
	for _, cause := range status.Status().Details.Causes {
		key := cause.Field + "\x00" + string(cause.Type) + "\x00" + cause.Message
		if seen[key] {
			continue
		}
		seen[key] = true
		// the cause's message is the error body already; keep it as the detail of an error without a value
		out = append(out, &field.Error{Type: field.ErrorType(cause.Type), Field: cause.Field, BadValue: omitted{},
			Detail: cause.Message})
	}
	return out
}

// omitted marks a cause rebuilt from a StatusError: its message already holds the value.
type omitted struct{}

func containsError(errs field.ErrorList, e fieldError) bool {
	for _, other := range errs {
		if other.Field == e.Field && shortType(other.Type) == e.Type && other.Detail == e.Detail {
			return true
		}
	}
	return false
}

func shortType(t field.ErrorType) string {
	switch t {
	case field.ErrorTypeInternal:
		return "Internal"
	}
	return strings.TrimPrefix(string(t), "FieldValue")
}

// report turns field errors into the op's form. origin "" classifies each one.
func (c *compiledCRD) report(errs field.ErrorList, origin string, version *compiledVersion) []fieldError {
	out := make([]fieldError, 0, len(errs))
	seen := map[string]bool{}
	for _, e := range errs {
		message := e.ErrorBody()
		if _, rebuilt := e.BadValue.(omitted); rebuilt {
			message = e.Detail
		}
		key := e.Field + "\x00" + string(e.Type) + "\x00" + message
		if seen[key] {
			continue
		}
		seen[key] = true
		field := e.Field
		if field == "<nil>" {
			field = ""
		}
		out = append(out, fieldError{Path: parseFieldPath(field), Field: field, Type: shortType(e.Type),
			Message: message, Detail: e.Detail, Origin: classify(e, origin, version)})
	}
	return out
}

func classify(e *field.Error, origin string, version *compiledVersion) string {
	if origin != "" {
		return origin
	}
	detail := e.Detail
	switch {
	case strings.HasPrefix(detail, "some validation rules were not checked"):
		return "skipped"
	case version != nil && version.celMessages[strings.TrimSpace(detail)],
		strings.HasPrefix(detail, "failed rule: "),
		strings.Contains(detail, "cost budget"), strings.Contains(detail, "evaluating rule"),
		strings.Contains(detail, "rule compile"), strings.Contains(detail, "for rule: "):
		return "cel"
	case e.Type == field.ErrorTypeDuplicate:
		return "list"
	case e.Field == "metadata" || strings.HasPrefix(e.Field, "metadata."):
		return "metadata"
	case e.Field == "apiVersion" || e.Field == "kind" || e.Field == "<nil>" || e.Field == "":
		return "request"
	}
	return "schema"
}

// parseFieldPath reads a path as field.Path prints it: names joined by dots, [index] and [key] after them.
func parseFieldPath(text string) []any {
	out := []any{}
	for i := 0; i < len(text); {
		switch text[i] {
		case '.':
			i++
		case '[':
			end := strings.IndexByte(text[i:], ']')
			if end < 0 {
				return append(out, text[i:])
			}
			inside := text[i+1 : i+end]
			if n, err := strconv.Atoi(inside); err == nil && n >= 0 {
				out = append(out, n)
			} else {
				out = append(out, inside)
			}
			i += end + 1
		default:
			end := strings.IndexAny(text[i:], ".[")
			if end < 0 {
				end = len(text) - i
			}
			out = append(out, text[i:i+end])
			i += end
		}
	}
	return out
}
