// Command krc-engine is krc's native engine: one long-lived process that answers JSON requests, one per line, on
// two pipes krc hands over (file descriptors 3 and 4 unless --requests-fd and --answers-fd say otherwise). Libraries print to stdout and stderr; the protocol never shares
// them. Every request carries an id, an op and its arguments; every answer carries the id and either a result or
// an error.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
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
	"version":  func(json.RawMessage) (any, error) { return versions(), nil },
	"render":   renderOp,
	"validate": validateOp,
	"policy":   policyOp,
	"collect":  collectOp,
}

// prepares run in request order, before the request is answered alongside others: what a request hands over for
// the ones after it (a chart archive they will name by digest) is in place before any later request runs. A
// prepare that fails is that request's error.
var prepares = map[string]func(json.RawMessage) error{
	"render": storeArchive,
}

// slots bound the requests running in the whole process, whichever connection they came on: as many as the
// runtime has processors (the others wait, read and decoded, for a slot).
var slots = make(chan struct{}, runtime.GOMAXPROCS(0))

// serve answers requests as they come, several at a time (as many as the runtime has processors): krc sends a
// batch of renders ahead and takes the answers by id, in whatever order they finish. It returns when the request
// stream ends and every request under way has been answered.
func serve(in io.Reader, out io.Writer) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), maxMessageBytes)
	var (
		mu       sync.Mutex
		writeErr error
		running  sync.WaitGroup
	)
	encoder := json.NewEncoder(out)
	write := func(ans answer) {
		mu.Lock()
		defer mu.Unlock()
		if writeErr == nil {
			writeErr = encoder.Encode(ans)
		}
	}
	for scanner.Scan() {
		req, err := readRequest(scanner.Bytes())
		if err != nil {
			write(answer{Error: fmt.Sprintf("malformed request: %v", err)})
			continue
		}
		if prepare, ok := prepares[req.Op]; ok {
			if err := prepare(req.Args); err != nil {
				write(answer{ID: req.ID, Error: err.Error()})
				continue
			}
		}
		// the slot is taken by the request's goroutine, not here: the next lines are read (and their senders
		// unblocked) while every slot is busy, as when krc sends a chart's CRDs ahead to compile
		running.Add(1)
		go func() {
			defer running.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			write(answerOne(req))
		}()
	}
	running.Wait()
	if err := scanner.Err(); err != nil {
		return err
	}
	return writeErr
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
		"k8s.io/client-go": "", "github.com/google/cel-go": "", "cuelang.org/go": ""}
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

func usage(requestsFD, answersFD int) {
	fmt.Fprintf(os.Stderr, "krc-engine: krc starts this with requests on fd %d and answers on fd %d; "+
		"run krc, or 'krc-engine --version'\n", requestsFD, answersFD)
	os.Exit(2)
}

func main() {
	flags := flag.NewFlagSet("krc-engine", flag.ContinueOnError)
	showVersion := flags.Bool("version", false, "print the module versions the engine is built with, as JSON")
	requestsFD := flags.Int("requests-fd", 3, "the pipe krc writes requests to")
	answersFD := flags.Int("answers-fd", 4, "the pipe krc reads answers from")
	socket := flags.String("socket", "", "also serve krc's worker processes on this Unix socket")
	collectLate := flags.Bool("collect-late", false,
		"collect garbage only near GOMEMLIMIT until a worker connects (krc asks when it compiles a few environments)")
	atLimit := flags.Bool("collect-at-limit", false,
		"with GOGC=off, keep GOMEMLIMIT at least twice the live heap (krc asks for it for `krc lint`)")
	if err := flags.Parse(os.Args[1:]); err != nil || flags.NArg() != 0 {
		os.Exit(2)
	}
	if *showVersion {
		data, _ := json.Marshal(versions())
		fmt.Println(string(data))
		return
	}
	if *requestsFD < 3 || *answersFD < 3 || *requestsFD == *answersFD {
		usage(*requestsFD, *answersFD)
	}
	in, out := os.NewFile(uintptr(*requestsFD), "requests"), os.NewFile(uintptr(*answersFD), "answers")
	if !isPipe(in) || !isPipe(out) {
		usage(*requestsFD, *answersFD)
	}
	watchMemory()
	if *atLimit {
		defer collectAtLimit()()
	}
	if *collectLate {
		collectNearLimit()
	}
	if stop := profileCPU(os.Getenv("KRC_ENGINE_CPUPROFILE")); stop != nil {
		defer stop()
	}
	defer profileHeap(os.Getenv("KRC_ENGINE_HEAPPROFILE"))
	if *socket != "" {
		listener, err := listenForWorkers(*socket)
		if err != nil {
			fmt.Fprintf(os.Stderr, "krc-engine: cannot listen on %s: %v\n", *socket, err)
			os.Exit(3)
		}
		defer listener.Close()
	}
	if err := serve(in, out); err != nil {
		fmt.Fprintf(os.Stderr, "krc-engine: %v\n", err)
		os.Exit(3)
	}
}

// profileCPU writes a Go CPU profile of the whole run to path (a developer's switch, for `go tool pprof`); it
// answers the function that finishes the profile, or nil when path is empty or cannot be written.
func profileCPU(path string) func() {
	if path == "" {
		return nil
	}
	file, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "krc-engine: cannot write the CPU profile: %v\n", err)
		return nil
	}
	if err := pprof.StartCPUProfile(file); err != nil {
		fmt.Fprintf(os.Stderr, "krc-engine: cannot write the CPU profile: %v\n", err)
		file.Close()
		return nil
	}
	return func() {
		pprof.StopCPUProfile()
		file.Close()
	}
}

// profileHeap writes a Go heap profile to path as the run ends (what is still held, and what was allocated), for
// `go tool pprof -sample_index=inuse_space`; nothing when path is empty.
func profileHeap(path string) {
	if path == "" {
		return
	}
	file, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "krc-engine: cannot write the heap profile: %v\n", err)
		return
	}
	defer file.Close()
	if err := pprof.WriteHeapProfile(file); err != nil {
		fmt.Fprintf(os.Stderr, "krc-engine: cannot write the heap profile: %v\n", err)
	}
}
