package main

import (
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
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
