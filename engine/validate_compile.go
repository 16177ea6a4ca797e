package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	apihelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/registry/rest"
	openapi "k8s.io/kube-openapi/pkg/validation/spec"
)

// Compiling a CRD for the validate op, as the server's crdHandler.getOrCreateServingInfoFor does.

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
	versions              map[string]*lazyVersion
	served                []string
	// spec is the CRD as decoded, each version's schema dropped once that version is compiled (the decoded
	// schemas were a fifth of the engine's live memory; the compiled forms are what validation reads). Its
	// versions' compiles, which read spec and drop their schema from it, run one at a time (compileSlot).
	spec  *apiextensionsv1.CustomResourceDefinition
	share atomic.Bool // versions compiled from now on share their subtrees (validateArgs.Share)
}

// lazyVersion is compiled the first time an object asks for it: a CRD's other versions (v1alpha1 beside v1)
// cost neither time nor memory until then.
type lazyVersion struct {
	spec     apiextensionsv1.CustomResourceDefinitionVersion
	schema   json.RawMessage // the version's schema as sent, decoded only to compile it
	once     sync.Once
	compiled *compiledVersion
	err      error
}

// compileSlot lets one CRD version compile at a time in the whole process. A compile's decoded schema and the
// validators built from it are the engine's largest allocations, and a run's first validations ask for every
// pinned CRD at once: two compiles side by side took a cold render's engine to 155-175 MB, the peak of the whole
// run (500 environments, two charts: the run's peak 372 -> 346 MB, medians of four alternating runs, the wall
// time within their noise). The other requests go on meanwhile.
var compileSlot sync.Mutex

// compileStarted is called as each compile starts, holding compileSlot (a test counts overlapping compiles).
var compileStarted = func() {}

// version is the CRD's version `name` compiled (once, whoever asks first); defined says whether the CRD has it.
func (c *compiledCRD) version(name string) (compiled *compiledVersion, defined bool, err error) {
	lazy, ok := c.versions[name]
	if !ok {
		return nil, false, nil
	}
	lazy.once.Do(func() {
		compileSlot.Lock()
		defer compileSlot.Unlock()
		compileStarted()
		lazy.err = c.decodeSchema(lazy)
		if lazy.err == nil {
			lazy.compiled, lazy.err = compileVersion(c.spec, lazy.spec, c, crdserverscheme.NewUnstructuredObjectTyper())
		}
		if lazy.err != nil {
			lazy.err = fmt.Errorf("validate: CRD %s version %s: %v", c.name, lazy.spec.Name, lazy.err)
		}
		c.dropSchema(lazy)
	})
	return lazy.compiled, true, lazy.err
}

// decodeSchema puts the version's schema, decoded from what was sent, where the compile reads it.
func (c *compiledCRD) decodeSchema(lazy *lazyVersion) error {
	if len(lazy.schema) == 0 || string(lazy.schema) == "null" {
		return nil
	}
	schema := &apiextensionsv1.CustomResourceValidation{}
	if err := json.Unmarshal(lazy.schema, schema); err != nil {
		return fmt.Errorf("its schema is not a CustomResourceValidation: %v", err)
	}
	lazy.spec.Schema = schema
	for i := range c.spec.Spec.Versions {
		if c.spec.Spec.Versions[i].Name == lazy.spec.Name {
			c.spec.Spec.Versions[i].Schema = schema
		}
	}
	return nil
}

// dropSchema forgets the decoded schema of a version compiled now (or refused for good: the error is kept).
func (c *compiledCRD) dropSchema(lazy *lazyVersion) {
	lazy.schema = nil
	lazy.spec.Schema = nil
	for i := range c.spec.Spec.Versions {
		if c.spec.Spec.Versions[i].Name == lazy.spec.Name {
			c.spec.Spec.Versions[i].Schema = nil
		}
	}
}

// crdDocument is a CRD as sent with each version's schema left undecoded: a version's schema is decoded when an
// object asks for that version (decoded schemas of versions never asked for, such as a RayCluster's v1alpha1,
// were a tenth of the engine's live memory). The fields named here hide the embedded ones of the same name.
type crdDocument struct {
	apiextensionsv1.CustomResourceDefinition
	Spec crdSpecDocument `json:"spec"`
}

type crdSpecDocument struct {
	apiextensionsv1.CustomResourceDefinitionSpec
	Versions []crdVersionDocument `json:"versions"`
}

type crdVersionDocument struct {
	apiextensionsv1.CustomResourceDefinitionVersion
	Schema json.RawMessage `json:"schema,omitempty"`
}

func compileCRD(raw []byte) (*compiledCRD, error) {
	document := &crdDocument{}
	if err := json.Unmarshal(raw, document); err != nil {
		return nil, fmt.Errorf("validate: the CRD is not a CustomResourceDefinition: %v", err)
	}
	crd := &document.CustomResourceDefinition
	crd.Spec = document.Spec.CustomResourceDefinitionSpec
	crd.Spec.Versions = make([]apiextensionsv1.CustomResourceDefinitionVersion, len(document.Spec.Versions))
	schemas := map[string]json.RawMessage{}
	for i, version := range document.Spec.Versions {
		crd.Spec.Versions[i] = version.CustomResourceDefinitionVersion
		schemas[version.Name] = version.Schema
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
		versions:              map[string]*lazyVersion{},
	}
	if out.group == "" || out.kind == "" || len(crd.Spec.Versions) == 0 {
		return nil, fmt.Errorf("validate: CRD %q lacks spec.group, spec.names.kind or spec.versions", crd.Name)
	}
	out.spec = crd
	for _, v := range crd.Spec.Versions {
		out.versions[v.Name] = &lazyVersion{spec: v, schema: schemas[v.Name]}
		if v.Served {
			out.served = append(out.served, v.Name)
		}
	}
	return out, nil
}

func compileVersion(crd *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion,
	out *compiledCRD, typer *crdserverscheme.UnstructuredObjectTyper) (*compiledVersion, error) {
	compiled := &compiledVersion{name: v.Name, served: v.Served, celMessages: map[string]bool{}}
	var table *sharedSchemas
	if out.share.Load() {
		table = schemaShare
	}
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
			// The API server copies the structural schema before pruning its defaults in place, because it keeps
			// the unpruned one and does not own the defaults it shares with its CRD. This one and its defaults were
			// decoded for this compile alone, and the only other reader, the OpenAPI validator, reads no object
			// default: pruning in place gives the same verdicts without copying the schema (a tenth of a CRD's
			// compile).
			if err := structuraldefaulting.PruneDefaults(structural); err != nil {
				return nil, fmt.Errorf("pruning defaults: %v", err)
			}
		}
		if structural != nil && table != nil {
			if err := table.shareStructural(structural); err != nil {
				return nil, err
			}
		}
		compiled.structural = structural
		collectCELMessages(structural, compiled.celMessages)
	}
	validator, err := sharedSchemaValidator(internalProps, table)
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
				if statusValidator, err = sharedSchemaValidator(&statusSchema, table); err != nil {
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

// sharedSchemaValidator is apiservervalidation.NewSchemaValidator with the converted schema's subtrees shared
// through table (validate_share.go; nil: not shared) before the validator is made from it.
func sharedSchemaValidator(props *apiextensionsinternal.JSONSchemaProps, table *sharedSchemas) (
	apiservervalidation.SchemaValidator, error) {
	openAPI := &openapi.Schema{}
	if props != nil {
		strip := apiservervalidation.StripUnsupportedFormatsPostProcessorForVersion(environment.DefaultCompatibilityVersion())
		if err := apiservervalidation.ConvertJSONSchemaPropsWithPostProcess(props, openAPI, strip); err != nil {
			return nil, err
		}
		if table != nil {
			if err := table.shareOpenAPI(openAPI); err != nil {
				return nil, err
			}
		}
	}
	return apiservervalidation.NewSchemaValidatorFromOpenAPI(openAPI), nil
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
