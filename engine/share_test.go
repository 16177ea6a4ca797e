package main

import (
	"bufio"
	"encoding/json"
	"net"
	"path/filepath"
	"testing"
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
