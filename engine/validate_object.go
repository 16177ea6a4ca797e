package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
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

// Judging one object against a compiled CRD: decoding, defaulting, then create or update (validate.go).

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
	version, errs, err := c.versionOf(obj)
	if err != nil {
		return result, err
	}
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
func (c *compiledCRD) versionOf(obj map[string]any) (*compiledVersion, field.ErrorList, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || gv.Group != c.group {
		return nil, field.ErrorList{field.Invalid(field.NewPath("apiVersion"), apiVersion,
			fmt.Sprintf("must be %s/<version> for CRD %s", c.group, c.name))}, nil
	}
	if kind != c.kind {
		return nil, field.ErrorList{field.Invalid(field.NewPath("kind"), kind, fmt.Sprintf("must be %s", c.kind))}, nil
	}
	if lazy, ok := c.versions[gv.Version]; !ok || !lazy.spec.Served {
		return nil, field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), apiVersion,
			prefixed(c.group+"/", c.served))}, nil
	}
	version, _, err := c.version(gv.Version)
	return version, nil, err
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
	oldVersion, errs, err := c.versionOf(obj)
	if err != nil {
		return nil, err
	}
	if len(errs) > 0 {
		compiled, defined, err := c.version(u.GroupVersionKind().Version)
		if !defined || u.GetKind() != c.kind {
			return nil, fmt.Errorf("not a %s of this CRD: %v", c.kind, errs.ToAggregate())
		}
		if err != nil {
			return nil, err
		}
		oldVersion = compiled
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
