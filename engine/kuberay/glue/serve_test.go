package glue

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestServeAnswersInOrderAndSurvivesPanics(t *testing.T) {
	calls := 0
	handlers := map[string]Handler{
		"count": func(json.RawMessage) (any, error) { calls++; return calls, nil },
		"fail":  func(json.RawMessage) (any, error) { return nil, errors.New("bad input") },
		"panic": func(json.RawMessage) (any, error) { panic("boom") },
	}
	in := strings.NewReader(`{"id":1,"op":"count"}` + "\n" + `{"id":2,"op":"panic"}` + "\n" + `not json` + "\n" +
		`{"id":3,"op":"fail"}` + "\n" + `{"id":4,"op":"nope"}` + "\n" + `{"id":5,"op":"count"}` + "\n")
	var out bytes.Buffer
	if err := Serve(in, &out, handlers); err != nil {
		t.Fatal(err)
	}
	want := []string{`{"id":1,"result":1}`, `{"id":2,"error":"internal error in panic: boom"}`,
		`{"id":0,"error":"malformed request: invalid character 'o' in literal null (expecting 'u')"}`,
		`{"id":3,"error":"bad input"}`, `{"id":4,"error":"unknown op \"nope\""}`, `{"id":5,"result":2}`}
	got := strings.Split(strings.TrimSpace(out.String()), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("answers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// On a socket, every connection's requests are answered, one at a time across connections, until stdin closes.
func TestServeSocketAnswersEveryConnectionUntilStdinCloses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "build.sock")
	running, most := 0, 0
	var mu sync.Mutex
	handlers := map[string]Handler{"slow": func(json.RawMessage) (any, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return "done", nil
	}}
	stdinRead, stdinWrite := io.Pipe()
	stdout := &syncWriter{}
	served := make(chan error, 1)
	go func() { served <- ServeSocket(path, stdinRead, stdout, handlers) }()
	for !strings.Contains(stdout.String(), "ready") {
		time.Sleep(5 * time.Millisecond)
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("unix", path)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, `{"id":%d,"op":"slow"}`+"\n", i+1)
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil || line != fmt.Sprintf(`{"id":%d,"result":"done"}`+"\n", i+1) {
				t.Errorf("connection %d: %q %v", i, line, err)
			}
		}()
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d requests ran side by side", most)
	}
	stdinWrite.Close()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
