package main

import (
	"bufio"
	"encoding/json"
	"net"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"
)

// Two connections at once on the workers' socket, each answered on its own connection.
func TestWorkersAreServedOnTheSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "engine.sock")
	listener, err := listenForWorkers(path)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	for id := 1; id <= 2; id++ {
		conn, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte(`{"id":` + string(rune('0'+id)) + `,"op":"version"}` + "\n")); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(conn).ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var ans answer
		if err := json.Unmarshal(line, &ans); err != nil || ans.ID != id || ans.Error != "" {
			t.Fatalf("connection %d got %s", id, line)
		}
	}
}

// An engine asked to collect late (krc compiling a few environments) collects as usual once a worker connects.
func TestAWorkerConnectingTurnsTheUsualCollectorBackOn(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	collectNearLimit()
	if percent := debug.SetGCPercent(-1); percent != -1 {
		t.Fatalf("collecting late, the collector's target is %d, not off", percent)
	}
	path := filepath.Join(t.TempDir(), "engine.sock")
	listener, err := listenForWorkers(path)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		collecting.Lock()
		late := collectingLate
		collecting.Unlock()
		if !late {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a worker connected and the collector still waits for the memory limit")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if percent := debug.SetGCPercent(100); percent != 100 {
		t.Fatalf("after a worker connected the collector's target is %d, not 100", percent)
	}
}

// krc's "collect" request does what a worker's connection does: a command that started the engine for a few
// environments and then found many to compile has it collect as usual from then on.
func TestTheCollectRequestTurnsTheUsualCollectorBackOn(t *testing.T) {
	before := debug.SetGCPercent(150) // not Go's default: the target it had is the one restored
	defer debug.SetGCPercent(before)
	collectNearLimit()
	if ans := answerOne(request{ID: 7, Op: "collect"}); ans.ID != 7 || ans.Error != "" {
		t.Fatalf("the collect request was answered %+v", ans)
	}
	if percent := debug.SetGCPercent(150); percent != 150 {
		t.Fatalf("after the collect request the collector's target is %d, not the 150 it had", percent)
	}
	collecting.Lock()
	late := collectingLate
	collecting.Unlock()
	if late {
		t.Fatal("after the collect request the engine still counts itself collecting late")
	}
	if ans := answerOne(request{ID: 8, Op: "collect"}); ans.Error != "" { // asked again: nothing to do
		t.Fatalf("a second collect request was answered %+v", ans)
	}
}
