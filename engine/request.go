package main

import (
	"bytes"
	"encoding/json"
)

// readRequest decodes one request line. A line in the form krc's channel writes, {"id":N,"op":"name","args":{...}}
// exactly, is taken apart by hand: json.Unmarshal would check the whole line, then scan the arguments again to
// copy them, and the op decodes (and checks) them a third time; for validation and policy requests of hundreds
// of kilobytes that was 2 % of the engine's time in a cold lint. The arguments are then checked by the op
// that decodes them, whose error is the request's. Any other line goes to json.Unmarshal, as before.
func readRequest(line []byte) (request, error) {
	if req, ok := krcRequest(line); ok {
		return req, nil
	}
	var req request
	err := json.Unmarshal(line, &req)
	return req, err
}

var (
	idPrefix   = []byte(`{"id":`)
	opPrefix   = []byte(`,"op":"`)
	argsPrefix = []byte(`","args":`)
)

// krcRequest reads the line's id, op and arguments where it has exactly the channel's form: an id of digits
// without a leading zero (as strconv writes it), an op of lowercase letters, arguments that start with a brace
// and end one brace before the line does. False for anything else.
func krcRequest(line []byte) (request, bool) {
	rest, ok := bytes.CutPrefix(line, idPrefix)
	if !ok {
		return request{}, false
	}
	// at most 18 digits: every such number fits an int
	id, digits := 0, 0
	for digits < len(rest) && digits < 18 && rest[digits] >= '0' && rest[digits] <= '9' {
		id = id*10 + int(rest[digits]-'0')
		digits++
	}
	if digits == 0 || (rest[0] == '0' && digits > 1) {
		return request{}, false
	}
	if rest, ok = bytes.CutPrefix(rest[digits:], opPrefix); !ok {
		return request{}, false
	}
	letters := 0
	for letters < len(rest) && rest[letters] >= 'a' && rest[letters] <= 'z' {
		letters++
	}
	op := string(rest[:letters])
	if rest, ok = bytes.CutPrefix(rest[letters:], argsPrefix); !ok || letters == 0 {
		return request{}, false
	}
	// rest is the arguments and the line's closing brace
	if len(rest) < 3 || rest[0] != '{' || rest[len(rest)-1] != '}' || rest[len(rest)-2] != '}' {
		return request{}, false
	}
	// a copy: the line's buffer is the scanner's, read into again while the request runs
	return request{ID: id, Op: op, Args: bytes.Clone(rest[:len(rest)-1])}, true
}
