package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// memoryExit is the exit status krc reads as "stopped at the memory limit" (compiler/native/client.py).
const memoryExit = 86

// watchMemory stops the process when the Go heap passes KRC_ENGINE_MAX_MEMORY_MB. GOMEMLIMIT (set by krc too)
// only makes the collector work harder; a runaway policy or chart would still take the machine's memory, so
// past the hard limit the engine exits with a line naming the limit, and krc names what it was evaluating.
func watchMemory() {
	raw := os.Getenv("KRC_ENGINE_MAX_MEMORY_MB")
	limitMB, err := strconv.ParseUint(raw, 10, 32)
	if raw == "" || err != nil || limitMB == 0 {
		return
	}
	limit := limitMB << 20
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		for range time.Tick(20 * time.Millisecond) {
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > limit {
				fmt.Fprintf(os.Stderr, "krc-engine: stopped at its memory limit of %d MiB "+
					"(KRC_ENGINE_MAX_MEMORY_MB)\n", limitMB)
				os.Exit(memoryExit)
			}
		}
	}()
}

// collectNearLimit turns the collector's proportional target off: the heap grows to GOMEMLIMIT (krc's soft limit)
// before the collector runs. A krc command that compiles a few environments asks for it: compiling KubeRay's four
// CRDs spends a third of its time collecting garbage otherwise, and the command waits for those CRDs. A run that
// shares the engine with workers compiles many, where the memory matters more: the first worker to connect turns
// the usual target back on (collectAsUsual).
func collectNearLimit() {
	collecting.Lock()
	defer collecting.Unlock()
	if !collectingLate {
		usualPercent = debug.SetGCPercent(-1)
		collectingLate = true
	}
}

// collectAsUsual restores the collector's target as it was before collectNearLimit (GOGC as krc starts the
// engine) and gives the system back what the heap grew to meanwhile (a collection, then the free pages returned,
// off the caller's path): the run compiles many environments after all, and the engine would otherwise keep up to
// its soft limit resident for the whole run. krc asks for it (the "collect" op) as soon as it knows; a worker's
// connection does too (listenForWorkers).
func collectAsUsual() {
	collecting.Lock()
	defer collecting.Unlock()
	if collectingLate {
		debug.SetGCPercent(usualPercent)
		collectingLate = false
		go debug.FreeOSMemory()
	}
}

// collectOp is the "collect" request: collectAsUsual, answered with nothing.
func collectOp(json.RawMessage) (any, error) {
	collectAsUsual()
	return nil, nil
}

var (
	collecting     sync.Mutex
	collectingLate bool
	usualPercent   int // the collector's target before collectNearLimit turned it off
)

// collectAtLimit keeps the soft memory limit at least twice the live heap, for an engine krc starts with its
// collector's proportional target off (GOGC=off) and a low GOMEMLIMIT: the collector then runs only when the
// process nears that limit, which for `krc lint` costs less CPU than Go's default target at about the same peak.
// A bare limit near the live heap (a project whose compiled CRDs alone come near it) would have the collector
// run without pause; after each collection the limit is raised to twice the live heap, plus room for the
// runtime's own memory, when that is more than the limit krc set (and lowered back as the live heap shrinks).
func collectAtLimit() (stop func()) {
	floor := debug.SetMemoryLimit(-1) // -1 reads the limit without changing it
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var stopped atomic.Bool
	var afterCollection func(*[32]byte)
	afterCollection = func(*[32]byte) {
		if stopped.Load() {
			return
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			debug.SetMemoryLimit(roomAbove(floor, sample[0].Value.Uint64()))
		}
		runtime.SetFinalizer(new([32]byte), afterCollection) // found unreachable by the next collection
	}
	runtime.SetFinalizer(new([32]byte), afterCollection)
	return func() {
		stopped.Store(true)
		debug.SetMemoryLimit(floor)
	}
}

// runtimeRoom is what the memory limit allows beside twice the live heap: goroutine stacks, the collector's own
// metadata, heap pages not yet returned.
const runtimeRoom = 16 << 20

// roomAbove is the soft memory limit for a live heap of `live` bytes: the limit krc set, or twice the live heap
// and the runtime's room when that is more.
func roomAbove(floor int64, live uint64) int64 {
	if wanted := int64(2*live) + runtimeRoom; wanted > floor {
		return wanted
	}
	return floor
}
