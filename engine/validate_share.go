package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash"
	"reflect"
	"sort"
	"sync"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	openapi "k8s.io/kube-openapi/pkg/validation/spec"
)

// Compiled schemas share their identical parts. A KubeRay CRD holds a Pod template's schema at every place a Pod
// is described (a RayCluster's head and worker groups, a RayJob's cluster and submitter, a RayService's
// cluster), the same in each CRD and mostly the same from one chart version to the next: compiled once per
// place, those copies were most of the engine's live memory. After a version is compiled (and before anything
// reads it) each subtree is replaced by the first one seen with the same content, so each distinct subtree is
// held once. The trees are only read from then on (validation, pruning, defaulting, CEL), and a subtree's
// content decides everything that is read of it, so sharing changes no answer.
//
// Content is a subtree's sha256: the node's own fields (the common ones written as they are, any others as JSON)
// and its children's hashes, with whether each field is absent or empty, so two subtrees share only when they
// are identical.

type sharedSchemas struct {
	mu         sync.Mutex
	openAPI    map[[32]byte]*openapi.Schema
	structural map[[32]byte]*structuralschema.Structural
}

// schemaShare is the engine's table, for the CRDs krc asks to share (validateArgs.Share); nil: none shares.
var schemaShare = newSharedSchemas()

func newSharedSchemas() *sharedSchemas {
	return &sharedSchemas{openAPI: map[[32]byte]*openapi.Schema{}, structural: map[[32]byte]*structuralschema.Structural{}}
}

// forget drops the table (the compiled CRD cache calls it when it lets a CRD go, so the table never keeps a
// schema alive); what is compiled later shares with what is compiled after that.
func (s *sharedSchemas) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.openAPI = map[[32]byte]*openapi.Schema{}
	s.structural = map[[32]byte]*structuralschema.Structural{}
}

// shareOpenAPI makes root's subtrees the shared ones (root itself stays the caller's).
func (s *sharedSchemas) shareOpenAPI(root *openapi.Schema) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.openAPINode(root)
	return err
}

// shareStructural is shareOpenAPI for the structural schema.
func (s *sharedSchemas) shareStructural(root *structuralschema.Structural) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.structuralNode(root)
	return err
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

// presence writes whether a child field is absent (nil) or how many entries it has.
func presence(h hash.Hash, tag byte, isNil bool, count int) {
	marker := []byte{tag, 1}
	if isNil {
		marker[1] = 0
	}
	h.Write(marker)
	_ = binary.Write(h, binary.LittleEndian, int64(count))
}

// openAPINode shares node's children and returns node's content hash.
func (s *sharedSchemas) openAPINode(node *openapi.Schema) ([32]byte, error) {
	h := sha256.New()
	own := *node
	// the fields most nodes have are written as they are; the rest (rare) as JSON, when there are any
	writeString(h, own.Description)
	writeStrings(h, own.Type)
	writeString(h, own.Format)
	writeStrings(h, own.Required)
	own.Description, own.Type, own.Format, own.Required = "", nil, "", nil
	own.Properties, own.Items, own.AdditionalProperties = nil, nil, nil
	if err := writeRest(h, own); err != nil {
		return [32]byte{}, err
	}
	presence(h, 'P', node.Properties == nil, len(node.Properties))
	for _, name := range sortedKeys(node.Properties) {
		child := node.Properties[name]
		shared, sum, err := s.openAPIShared(&child)
		if err != nil {
			return [32]byte{}, err
		}
		node.Properties[name] = *shared
		h.Write([]byte(name))
		h.Write(sum[:])
	}
	presence(h, 'I', node.Items == nil, 0)
	if node.Items != nil {
		items := *node.Items // a copy: the SchemaOrArray may be another node's
		presence(h, 'S', items.Schema == nil, 0)
		if items.Schema != nil {
			shared, sum, err := s.openAPIShared(items.Schema)
			if err != nil {
				return [32]byte{}, err
			}
			items.Schema = shared
			h.Write(sum[:])
		}
		presence(h, 'T', items.Schemas == nil, len(items.Schemas))
		if items.Schemas != nil {
			schemas := make([]openapi.Schema, len(items.Schemas))
			for i := range items.Schemas {
				child := items.Schemas[i]
				shared, sum, err := s.openAPIShared(&child)
				if err != nil {
					return [32]byte{}, err
				}
				schemas[i] = *shared
				h.Write(sum[:])
			}
			items.Schemas = schemas
		}
		node.Items = &items
	}
	presence(h, 'A', node.AdditionalProperties == nil, 0)
	if node.AdditionalProperties != nil {
		additional := *node.AdditionalProperties
		h.Write([]byte{boolByte(additional.Allows)})
		presence(h, 'S', additional.Schema == nil, 0)
		if additional.Schema != nil {
			shared, sum, err := s.openAPIShared(additional.Schema)
			if err != nil {
				return [32]byte{}, err
			}
			additional.Schema = shared
			h.Write(sum[:])
		}
		node.AdditionalProperties = &additional
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// openAPIShared is the shared node with node's content (node itself, its children shared, when it is the first).
func (s *sharedSchemas) openAPIShared(node *openapi.Schema) (*openapi.Schema, [32]byte, error) {
	sum, err := s.openAPINode(node)
	if err != nil {
		return nil, sum, err
	}
	if known, ok := s.openAPI[sum]; ok {
		return known, sum, nil
	}
	s.openAPI[sum] = node
	return node, sum, nil
}

func (s *sharedSchemas) structuralNode(node *structuralschema.Structural) ([32]byte, error) {
	h := sha256.New()
	own := *node
	writeString(h, own.Description)
	writeString(h, own.Type)
	writeString(h, own.Title)
	h.Write([]byte{boolByte(own.Nullable), boolByte(own.XPreserveUnknownFields), boolByte(own.XEmbeddedResource),
		boolByte(own.XIntOrString)})
	writeStrings(h, own.XListMapKeys)
	writeOptionalString(h, own.XListType)
	writeOptionalString(h, own.XMapType)
	own.Description, own.Type, own.Title, own.Nullable = "", "", "", false
	own.Extensions = structuralschema.Extensions{}
	presence(h, 'V', own.ValueValidation == nil, 0)
	if own.ValueValidation != nil {
		values := *own.ValueValidation
		writeString(h, values.Format)
		writeStrings(h, values.Required)
		values.Format, values.Required = "", nil
		if err := writeRest(h, values); err != nil {
			return [32]byte{}, err
		}
		own.ValueValidation = nil
	}
	own.Properties, own.Items, own.AdditionalProperties = nil, nil, nil
	if err := writeRest(h, own); err != nil {
		return [32]byte{}, err
	}
	presence(h, 'P', node.Properties == nil, len(node.Properties))
	for _, name := range sortedKeys(node.Properties) {
		child := node.Properties[name]
		shared, sum, err := s.structuralShared(&child)
		if err != nil {
			return [32]byte{}, err
		}
		node.Properties[name] = *shared
		h.Write([]byte(name))
		h.Write(sum[:])
	}
	presence(h, 'I', node.Items == nil, 0)
	if node.Items != nil {
		shared, sum, err := s.structuralShared(node.Items)
		if err != nil {
			return [32]byte{}, err
		}
		node.Items = shared
		h.Write(sum[:])
	}
	presence(h, 'A', node.AdditionalProperties == nil, 0)
	if node.AdditionalProperties != nil {
		additional := *node.AdditionalProperties
		h.Write([]byte{boolByte(additional.Bool)})
		presence(h, 'S', additional.Structural == nil, 0)
		if additional.Structural != nil {
			shared, sum, err := s.structuralShared(additional.Structural)
			if err != nil {
				return [32]byte{}, err
			}
			additional.Structural = shared
			h.Write(sum[:])
		}
		node.AdditionalProperties = &additional
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

func (s *sharedSchemas) structuralShared(node *structuralschema.Structural) (*structuralschema.Structural, [32]byte,
	error) {
	sum, err := s.structuralNode(node)
	if err != nil {
		return nil, sum, err
	}
	if known, ok := s.structural[sum]; ok {
		return known, sum, nil
	}
	s.structural[sum] = node
	return node, sum, nil
}

func writeString(h hash.Hash, text string) {
	_ = binary.Write(h, binary.LittleEndian, int64(len(text)))
	h.Write([]byte(text))
}

func writeStrings(h hash.Hash, texts []string) {
	presence(h, 'L', texts == nil, len(texts))
	for _, text := range texts {
		writeString(h, text)
	}
}

func writeOptionalString(h hash.Hash, text *string) {
	presence(h, 'O', text == nil, 0)
	if text != nil {
		writeString(h, *text)
	}
}

// writeRest writes what is left of a node once its common fields are written and cleared: nothing when that is
// all it had (most nodes), else its JSON.
func writeRest(h hash.Hash, rest any) error {
	if reflect.ValueOf(rest).IsZero() {
		h.Write([]byte{0})
		return nil
	}
	data, err := json.Marshal(rest)
	if err != nil {
		return err
	}
	h.Write([]byte{1})
	writeString(h, string(data))
	return nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
