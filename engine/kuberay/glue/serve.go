// Package glue is the protocol every KubeRay build of krc speaks: JSON lines on two pipes krc hands over (the
// engine's protocol, engine/README.md), or on the connections to a Unix socket (--socket), answered one at a time. KubeRay's code reads process-wide state (feature
// gates, environment variables) that each request sets for itself, so two requests never run side by side.
package glue

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

// Handler answers one op: its result, or an error that becomes the request's.
type Handler func(json.RawMessage) (any, error)

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

// maxMessageBytes caps one request line, as the engine does.
const maxMessageBytes = 100 << 20

// oneAtATime keeps requests from running side by side, whichever connection they come on.
var oneAtATime sync.Mutex

// Serve answers requests in the order they come until the request stream ends.
func Serve(in io.Reader, out io.Writer, handlers map[string]Handler) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), maxMessageBytes)
	encoder := json.NewEncoder(out)
	for scanner.Scan() {
		var req request
		if err := json.Unmarshal(scanner.Bytes(), &req); err != nil {
			if err := encoder.Encode(answer{Error: fmt.Sprintf("malformed request: %v", err)}); err != nil {
				return err
			}
			continue
		}
		oneAtATime.Lock()
		ans := answerOne(req, handlers)
		oneAtATime.Unlock()
		if err := encoder.Encode(ans); err != nil {
			return err
		}
	}
	return scanner.Err()
}

// answerOne runs one request; a panic in KubeRay's code becomes that request's error, not the end of the process.
func answerOne(req request, handlers map[string]Handler) (ans answer) {
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

// ServeSocket answers the requests of every connection to a Unix socket at path (krc's worker processes share
// one build: compiler/native/shared_helper.py), one request at a time, until the starter's pipe on stdin
// closes. It says "ready" on stdout once connections are taken.
func ServeSocket(path string, stdin io.Reader, stdout io.Writer, handlers map[string]Handler) error {
	listener, err := net.Listen("unix", path)
	if err != nil {
		return err
	}
	defer listener.Close()
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				_ = Serve(conn, conn, handlers)
			}()
		}
	}()
	if _, err := fmt.Fprintln(stdout, "ready"); err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, stdin)
	return err
}

func isPipe(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0
}

// Main is a build's whole main: --version prints what version() gives, otherwise it serves on the pipes named by
// --requests-fd and --answers-fd (3 and 4 by default).
func Main(name string, version func() any, handlers map[string]Handler) {
	flags := flag.NewFlagSet(name, flag.ContinueOnError)
	showVersion := flags.Bool("version", false, "print the KubeRay version and modules this build holds, as JSON")
	requestsFD := flags.Int("requests-fd", 3, "the pipe krc writes requests to")
	answersFD := flags.Int("answers-fd", 4, "the pipe krc reads answers from")
	socketPath := flags.String("socket", "", "serve a run's processes on this Unix socket instead, until stdin closes")
	if err := flags.Parse(os.Args[1:]); err != nil || flags.NArg() != 0 {
		os.Exit(2)
	}
	if *showVersion {
		data, _ := json.Marshal(version())
		fmt.Println(string(data))
		return
	}
	if *socketPath != "" {
		if err := ServeSocket(*socketPath, os.Stdin, os.Stdout, handlers); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(3)
		}
		return
	}
	in, out := os.NewFile(uintptr(*requestsFD), "requests"), os.NewFile(uintptr(*answersFD), "answers")
	if *requestsFD < 3 || *answersFD < 3 || *requestsFD == *answersFD || !isPipe(in) || !isPipe(out) {
		fmt.Fprintf(os.Stderr, "%s: krc starts this with requests on fd %d and answers on fd %d; run krc, "+
			"or '%s --version'\n", name, *requestsFD, *answersFD, name)
		os.Exit(2)
	}
	if err := Serve(in, out, handlers); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(3)
	}
}
