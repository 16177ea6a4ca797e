package glue

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
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
