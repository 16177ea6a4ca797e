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
	openAPI    *nodeTable[openapi.Schema]
	structural *nodeTable[structuralschema.Structural]
}

// nodeTable holds the first node seen with each content hash; hash shares a node's children and gives its hash.
type nodeTable[T any] struct {
	nodes map[[32]byte]*T
	hash  func(*T) ([32]byte, error)
}

// schemaShare is the engine's table, for the CRDs krc asks to share (validateArgs.Share); nil: none shares.
var schemaShare = newSharedSchemas()

func newSharedSchemas() *sharedSchemas {
	s := &sharedSchemas{}
	s.openAPI = &nodeTable[openapi.Schema]{nodes: map[[32]byte]*openapi.Schema{}, hash: s.openAPINode}
	s.structural = &nodeTable[structuralschema.Structural]{nodes: map[[32]byte]*structuralschema.Structural{},
		hash: s.structuralNode}
	return s
}

// forget drops the table (the compiled CRD cache calls it when it lets a CRD go, so the table never keeps a
// schema alive); what is compiled later shares with what is compiled after that.
func (s *sharedSchemas) forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.openAPI.nodes)
	clear(s.structural.nodes)
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

// shared is the table's node with node's content: node itself, its children shared, when it is the first.
func (t *nodeTable[T]) shared(node *T) (*T, [32]byte, error) {
	sum, err := t.hash(node)
	if err != nil {
		return nil, sum, err
	}
	if known, ok := t.nodes[sum]; ok {
		return known, sum, nil
	}
	t.nodes[sum] = node
	return node, sum, nil
}

// shareChild replaces *child (when there is one) by the shared node and writes whether it is there and its hash.
func (t *nodeTable[T]) shareChild(h hash.Hash, tag byte, child **T) error {
	presence(h, tag, *child == nil, 0)
	if *child == nil {
		return nil
	}
	shared, sum, err := t.shared(*child)
	if err != nil {
		return err
	}
	*child = shared
	h.Write(sum[:])
	return nil
}

// shareProperties replaces each property by the shared node and writes the names and hashes, in name order.
func (t *nodeTable[T]) shareProperties(h hash.Hash, properties map[string]T) error {
	presence(h, 'P', properties == nil, len(properties))
	for _, name := range sortedKeys(properties) {
		child := properties[name]
		shared, sum, err := t.shared(&child)
		if err != nil {
			return err
		}
		properties[name] = *shared
		writeString(h, name)
		h.Write(sum[:])
	}
	return nil
}

// contentHash is what h has been given.
func contentHash(h hash.Hash) [32]byte {
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
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

// openAPINode shares node's children and returns node's content hash (structuralNode: the same for the
// structural schema).
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
	if err := s.openAPI.shareProperties(h, node.Properties); err != nil {
		return [32]byte{}, err
	}
	presence(h, 'I', node.Items == nil, 0)
	if node.Items != nil {
		items := *node.Items // a copy: the SchemaOrArray may be another node's
		if err := s.openAPI.shareChild(h, 'S', &items.Schema); err != nil {
			return [32]byte{}, err
		}
		presence(h, 'T', items.Schemas == nil, len(items.Schemas))
		if items.Schemas != nil {
			schemas := make([]openapi.Schema, len(items.Schemas))
			for i := range items.Schemas {
				child := items.Schemas[i]
				shared, sum, err := s.openAPI.shared(&child)
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
		if err := s.openAPI.shareChild(h, 'S', &additional.Schema); err != nil {
			return [32]byte{}, err
		}
		node.AdditionalProperties = &additional
	}
	return contentHash(h), nil
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
	if err := s.structural.shareProperties(h, node.Properties); err != nil {
		return [32]byte{}, err
	}
	if err := s.structural.shareChild(h, 'I', &node.Items); err != nil {
		return [32]byte{}, err
	}
	presence(h, 'A', node.AdditionalProperties == nil, 0)
	if node.AdditionalProperties != nil {
		additional := *node.AdditionalProperties
		h.Write([]byte{boolByte(additional.Bool)})
		if err := s.structural.shareChild(h, 'S', &additional.Structural); err != nil {
			return [32]byte{}, err
		}
		node.AdditionalProperties = &additional
	}
	return contentHash(h), nil
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
