package main

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
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
// are identical. The common fields include a pattern, a default and vendor extensions of strings, booleans and
// lists of strings: written as JSON (through spec.Schema's own MarshalJSON), the 4,900 nodes per KubeRay chart
// that have one of those made the sharing a third of a CRD version's compile; compiling the eight versions of two
// charts now takes 355-374 ms against 426-448 before.

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
func (t *nodeTable[T]) shareChild(h *contentWriter, tag byte, child **T) error {
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
func (t *nodeTable[T]) shareProperties(h *contentWriter, properties map[string]T) error {
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

// contentWriter gathers what a node's content hash covers, for one sha256 over all of it: a node's own fields and
// its children's hashes are small writes, which cost more through a streaming hash (and binary.Write's
// interfaces) than the hashing itself.
type contentWriter struct {
	buf []byte
}

func newContentWriter() *contentWriter {
	return &contentWriter{buf: make([]byte, 0, 256)}
}

func (h *contentWriter) Write(data []byte) {
	h.buf = append(h.buf, data...)
}

func (h *contentWriter) writeInt(n int64) {
	h.buf = binary.LittleEndian.AppendUint64(h.buf, uint64(n))
}

// contentHash is the sha256 of what h has been given.
func contentHash(h *contentWriter) [32]byte {
	return sha256.Sum256(h.buf)
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
func presence(h *contentWriter, tag byte, isNil bool, count int) {
	h.buf = append(h.buf, tag, boolByte(!isNil))
	h.writeInt(int64(count))
}

// openAPINode shares node's children and returns node's content hash (structuralNode: the same for the
// structural schema).
func (s *sharedSchemas) openAPINode(node *openapi.Schema) ([32]byte, error) {
	h := newContentWriter()
	own := *node
	// the fields most nodes have are written as they are; the rest (rare) as JSON, when there are any
	writeString(h, own.Description)
	writeStrings(h, own.Type)
	writeString(h, own.Format)
	writeStrings(h, own.Required)
	writeString(h, own.Pattern)
	if err := writeJSONValue(h, 'D', own.Default); err != nil {
		return [32]byte{}, err
	}
	if writeSimpleExtensions(h, own.Extensions) {
		own.Extensions = nil
	}
	own.Description, own.Type, own.Format, own.Required, own.Pattern, own.Default = "", nil, "", nil, "", nil
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
	h := newContentWriter()
	own := *node
	writeString(h, own.Description)
	writeString(h, own.Type)
	writeString(h, own.Title)
	h.Write([]byte{boolByte(own.Nullable), boolByte(own.XPreserveUnknownFields), boolByte(own.XEmbeddedResource),
		boolByte(own.XIntOrString)})
	writeStrings(h, own.XListMapKeys)
	writeOptionalString(h, own.XListType)
	writeOptionalString(h, own.XMapType)
	if err := writeJSONValue(h, 'D', own.Default.Object); err != nil {
		return [32]byte{}, err
	}
	own.Description, own.Type, own.Title, own.Nullable = "", "", "", false
	own.Default = structuralschema.JSON{}
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

func writeString(h *contentWriter, text string) {
	h.writeInt(int64(len(text)))
	h.buf = append(h.buf, text...)
}

func writeStrings(h *contentWriter, texts []string) {
	presence(h, 'L', texts == nil, len(texts))
	for _, text := range texts {
		writeString(h, text)
	}
}

func writeOptionalString(h *contentWriter, text *string) {
	presence(h, 'O', text == nil, 0)
	if text != nil {
		writeString(h, *text)
	}
}

// writeJSONValue writes whether value is there and, when it is, its JSON (a default: a string, number, boolean,
// list or map decoded from the CRD).
func writeJSONValue(h *contentWriter, tag byte, value any) error {
	presence(h, tag, value == nil, 0)
	if value == nil {
		return nil
	}
	data, err := json.Marshal(value)
	if err != nil {
		return err
	}
	writeString(h, string(data))
	return nil
}

// writeSimpleExtensions writes a node's vendor extensions when each is a string, a boolean or a list of strings
// (x-kubernetes-list-type, -map-type, -list-map-keys, -int-or-string: most nodes that have any) and says so;
// otherwise it writes that it did not (a tag of its own), and they go with the rest of the node (writeRest).
func writeSimpleExtensions(h *contentWriter, extensions map[string]any) bool {
	for _, value := range extensions {
		switch value := value.(type) {
		case string, bool:
		case []any:
			for _, item := range value {
				if _, ok := item.(string); !ok {
					h.buf = append(h.buf, 'x')
					return false
				}
			}
		default:
			h.buf = append(h.buf, 'x')
			return false
		}
	}
	presence(h, 'X', extensions == nil, len(extensions))
	for _, name := range sortedKeys(extensions) {
		writeString(h, name)
		switch value := extensions[name].(type) {
		case string:
			h.buf = append(h.buf, 's')
			writeString(h, value)
		case bool:
			h.buf = append(h.buf, 'b', boolByte(value))
		case []any:
			presence(h, 'l', false, len(value))
			for _, item := range value {
				writeString(h, item.(string))
			}
		}
	}
	return true
}

// writeRest writes what is left of a node once its common fields are written and cleared: nothing when that is
// all it had (most nodes), else its JSON.
func writeRest(h *contentWriter, rest any) error {
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
