package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Lines in the channel's own form are taken apart by hand, and read exactly as json.Unmarshal reads them.
func TestKrcRequestsAreReadAsJSONReadsThem(t *testing.T) {
	args := []string{
		`{}`,
		`{"objects":[{"kind":"RayCluster","metadata":{"name":"a}b"}}],"crd":"x"}`,
		`{"s":"a \"quoted\" } brace, \"op\":\"render\",\"args\":{"}`,
		`{"n":[1,2.5,-3e4,null,true,false],"u":"\u00e9\ud83d\ude00"}`,
		`{"deep":{"a":{"b":{"c":[{"d":{}}]}}}}`,
	}
	for _, id := range []int{1, 9, 10, 12345, 999999999999999999} {
		for _, op := range []string{"render", "validate", "policy", "version", "collect", "x"} {
			for _, a := range args {
				line, err := json.Marshal(request{ID: id, Op: op, Args: json.RawMessage(a)})
				if err != nil {
					t.Fatal(err)
				}
				got, ok := krcRequest(line)
				if !ok {
					t.Fatalf("the channel's form was not taken apart: %s", line)
				}
				var want request
				if err := json.Unmarshal(line, &want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s\nread by hand: %+v\njson.Unmarshal: %+v", line, got, want)
				}
			}
		}
	}
}

// Every other line is json.Unmarshal's business: the same request, or its error.
func TestOtherLinesAreReadByJSON(t *testing.T) {
	lines := []string{
		`{ "id":1,"op":"render","args":{}}`,       // a space
		`{"id":1,"op":"val\u0069date","args":{}}`, // an escaped op
		`{"op":"render","id":1,"args":{}}`,        // another order
		`{"id":1,"op":"render"}`,                  // no arguments
		`{"id":-1,"op":"render","args":{}}`,
		`{"id":01,"op":"render","args":{}}`, // not JSON
		`{"id":1234567890123456789,"op":"render","args":{}}`,
		`{"id":1,"op":"render","args":[1]}`,
		`{"id":1,"op":"render","args":{} }`,
		`{"id":1,"op":"Render","args":{}}`,
		`{"id":1,"op":"","args":{}}`,
		`{"id":1,"op":"render","args":{},"more":2}`,
		`not json`,
		``,
	}
	for _, line := range lines {
		got, gotErr := readRequest([]byte(line))
		var want request
		wantErr := json.Unmarshal([]byte(line), &want)
		if _, byHand := krcRequest([]byte(line)); byHand {
			t.Fatalf("taken apart by hand, but not the channel's form: %s", line)
		}
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %+v (%v), json.Unmarshal %+v (%v)", line, got, gotErr, want, wantErr)
		}
	}
}

// Arguments that are not JSON reach the op, whose error answers that request, by its id (as does a line that only
// looks like the channel's: another member after the arguments, which json.Unmarshal would have ignored); the
// arguments are the request's own copy, not the line's buffer, which the scanner reads the next line into.
func TestArgumentsReadByHandAreCheckedByTheOp(t *testing.T) {
	line := []byte(`{"id":7,"op":"policy","args":{"policies":]}}`)
	req, err := readRequest(line)
	if err != nil || req.ID != 7 || req.Op != "policy" {
		t.Fatalf("%+v %v", req, err)
	}
	copy(line, bytes.Repeat([]byte("x"), len(line)))
	if string(req.Args) != `{"policies":]}` {
		t.Fatalf("the arguments share the line's buffer: %s", req.Args)
	}
	var out bytes.Buffer
	if err := serve(strings.NewReader(`{"id":7,"op":"policy","args":{"policies":]}}`+"\n"+
		`{"id":8,"op":"policy","args":{},"more":{}}`+"\n"), &out); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int{7, 8} {
		found := false
		for _, text := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var ans answer
			if json.Unmarshal([]byte(text), &ans) == nil && ans.ID == id {
				found = ans.Error != "" && ans.Result == nil
			}
		}
		if !found {
			t.Fatalf("request %d has no error answer: %s", id, out.String())
		}
	}
}
