// Command krc-engine is krc's native engine: one long-lived process that answers JSON requests, one per line, on
// file descriptor 3 (requests) and 4 (answers). Libraries print to stdout and stderr; the protocol never shares
// them. Every request carries an id, an op and its arguments; every answer carries the id and either a result or
// an error.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

type request struct {
	ID   int             `json:"id"`
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args"`
}

type answer struct {
	ID     int    `json:"id"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// handlers maps each op to the function that answers it.
var handlers = map[string]func(json.RawMessage) (any, error){
	"version": func(json.RawMessage) (any, error) { return versions(), nil },
	"render":  renderOp,
}

func serve(in io.Reader, out io.Writer) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), maxMessageBytes)
	encoder := json.NewEncoder(out)
	for scanner.Scan() {
		var req request
		var ans answer
		if err := json.Unmarshal(scanner.Bytes(), &req); err != nil {
			ans.Error = fmt.Sprintf("malformed request: %v", err)
		} else {
			ans = answerOne(req)
		}
		if err := encoder.Encode(ans); err != nil {
			return err
		}
	}
	return scanner.Err()
}

// answerOne runs one request; a panic in a library becomes that request's error, not the end of the process.
func answerOne(req request) (ans answer) {
	ans.ID = req.ID
	handler, ok := handlers[req.Op]
	if !ok {
		ans.Error = fmt.Sprintf("unknown op %q", req.Op)
		return ans
	}
	defer func() {
		if r := recover(); r != nil {
			ans.Result, ans.Error = nil, fmt.Sprintf("internal error in %s: %v", req.Op, r)
		}
	}()
	result, err := handler(req.Args)
	if err != nil {
		ans.Error = err.Error()
	} else {
		ans.Result = result
	}
	return ans
}

// maxMessageBytes caps one request line, as Argo CD caps a plugin message.
const maxMessageBytes = 100 << 20

func versions() map[string]string {
	found := map[string]string{"go": "", "helm.sh/helm/v4": "", "k8s.io/apiextensions-apiserver": "",
		"k8s.io/client-go": "", "github.com/google/cel-go": ""}
	if info, ok := debug.ReadBuildInfo(); ok {
		found["go"] = info.GoVersion
		for _, dep := range info.Deps {
			if _, wanted := found[dep.Path]; wanted {
				found[dep.Path] = dep.Version
			}
		}
	}
	return found
}

// isPipe tells a pipe or socket krc handed over from a descriptor the Go runtime itself opened (its poller takes
// the lowest free numbers, 3 and 4 among them, when nothing was handed over).
func isPipe(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

func usage() {
	fmt.Fprintln(os.Stderr, "krc-engine: krc starts this with requests on fd 3 and answers on fd 4; "+
		"run krc, or 'krc-engine --version'")
	os.Exit(2)
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		data, _ := json.Marshal(versions())
		fmt.Println(string(data))
		return
	}
	in, out := os.NewFile(3, "requests"), os.NewFile(4, "answers")
	if !isPipe(in) || !isPipe(out) {
		usage()
	}
	if err := serve(in, out); err != nil {
		fmt.Fprintf(os.Stderr, "krc-engine: %v\n", err)
		os.Exit(3)
	}
}
