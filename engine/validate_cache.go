package main

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
)

// The validate op's compiled CRDs, kept by the digest of the bytes krc sent (validate.go).

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
			if schemaShare != nil {
				schemaShare.forget()
			}
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
