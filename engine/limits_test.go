package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestRoomAboveKeepsTheLimitOrTwiceTheLiveHeap(t *testing.T) {
	floor := int64(72 << 20)
	if got := roomAbove(floor, 20<<20); got != floor {
		t.Errorf("a small live heap keeps krc's limit: got %d", got)
	}
	if got, want := roomAbove(floor, 60<<20), int64(120<<20+runtimeRoom); got != want {
		t.Errorf("a live heap near the limit gets twice its size and the runtime's room: got %d, want %d", got, want)
	}
}

// limitAfterCollections collects until the memory limit is what `done` wants (the hook runs in the finalizer
// goroutine, after a collection), and answers the limit.
func limitAfterCollections(t *testing.T, done func(int64) bool) int64 {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(5 * time.Millisecond)
		if limit := debug.SetMemoryLimit(-1); done(limit) {
			return limit
		}
	}
	t.Fatalf("the memory limit stayed at %d", debug.SetMemoryLimit(-1))
	return 0
}

func TestCollectAtLimitRaisesTheLimitAboveALargeLiveHeapAndLowersItBack(t *testing.T) {
	floor := int64(48 << 20) // above twice the test binary's own live heap and the runtime's room
	before := debug.SetMemoryLimit(floor)
	defer debug.SetMemoryLimit(before)
	stop := collectAtLimit()
	defer stop()
	live := make([][]byte, 64)
	for i := range live {
		live[i] = make([]byte, 1<<20) // 64 MiB kept alive
	}
	raised := limitAfterCollections(t, func(limit int64) bool { return limit >= 2*64<<20 })
	if raised > 2*80<<20+runtimeRoom {
		t.Errorf("the limit rose to %d, far above twice the live heap", raised)
	}
	runtime.KeepAlive(live)
	live = nil
	limitAfterCollections(t, func(limit int64) bool { return limit == floor })
	stop()
	if limit := debug.SetMemoryLimit(-1); limit != floor {
		t.Errorf("stopping leaves krc's limit: got %d", limit)
	}
}
