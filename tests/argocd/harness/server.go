package harness

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	cmpserver "github.com/argoproj/argo-cd/v3/cmd/argocd-cmp-server/commands"
	"github.com/argoproj/argo-cd/v3/common"
)

// ServeIfAsked runs Argo CD's argocd-cmp-server command when this executable was started under that name, as
// Argo CD's own multi-call binary dispatches on argv[0] (cmd/main.go); it does not return then.
func ServeIfAsked() {
	if filepath.Base(os.Args[0]) != common.CommandCMPServer {
		return
	}
	command := cmpserver.NewCommand()
	command.SetArgs(os.Args[1:])
	if command.Execute() != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// Server is a running argocd-cmp-server with krc's plugin.yaml, listening on krc.sock in SocketDir.
type Server struct {
	SocketDir string
	cmd       *exec.Cmd
	mu        sync.Mutex
	records   []map[string]any // its log, one JSON record per line
	exited    chan error
}

// StartServer starts this executable as argocd-cmp-server, reading plugin.yaml from configDir, with env as its
// whole environment (the sidecar's), and waits until it serves.
func StartServer(configDir, socketDir string, env []string) (*Server, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(socketDir, 0o755); err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path: self,
		Args: []string{common.CommandCMPServer, "--config-dir-path", configDir, "--loglevel", "debug", "--logformat", "json"},
		Env:  append(env, common.EnvPluginSockFilePath+"="+socketDir),
	}
	logs, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	server := &Server{SocketDir: socketDir, cmd: cmd, exited: make(chan error, 1)}
	serving := make(chan struct{})
	go server.read(logs, serving)
	go func() { server.exited <- cmd.Wait() }()
	select {
	case <-serving:
		return server, nil
	case err := <-server.exited:
		return nil, fmt.Errorf("argocd-cmp-server exited before serving (%v): %s", err, server.Log())
	case <-time.After(60 * time.Second):
		server.Stop()
		return nil, fmt.Errorf("argocd-cmp-server did not serve within 60 s: %s", server.Log())
	}
}

func (s *Server) read(r io.Reader, serving chan<- struct{}) {
	scanner := bufio.NewScanner(r)
	scanner.Buffer(make([]byte, 1<<20), 256<<20) // debug records carry whole plugin outputs
	announced := false
	for scanner.Scan() {
		var record map[string]any
		if json.Unmarshal(scanner.Bytes(), &record) != nil {
			record = map[string]any{"msg": scanner.Text()}
		}
		s.mu.Lock()
		s.records = append(s.records, record)
		s.mu.Unlock()
		if msg, _ := record["msg"].(string); !announced && strings.Contains(msg, "serving on") {
			announced = true
			close(serving)
		}
	}
}

// Records is the server's log so far, as JSON records.
func (s *Server) Records() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.records...)
}

// Log is the server's log as text, for failure messages.
func (s *Server) Log() string {
	var lines []string
	for _, record := range s.Records() {
		line, _ := json.Marshal(record)
		lines = append(lines, string(line))
	}
	return strings.Join(lines, "\n")
}

// Alive says whether the server process is still running.
func (s *Server) Alive() bool {
	select {
	case err := <-s.exited:
		s.exited <- err
		return false
	default:
		return true
	}
}

// Stop ends the server as Kubernetes ends the sidecar: SIGTERM, then SIGKILL. argocd-cmp-server v3.5.1 does not
// exit on SIGTERM (cmpserver.Shutdown removes the socket; Serve goes on), so in a pod it is the kubelet's SIGKILL
// after the grace period that ends it; here the grace period is 2 s.
func (s *Server) Stop() error {
	if !s.Alive() {
		return errors.New("argocd-cmp-server had already exited")
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		return nil
	case <-time.After(2 * time.Second):
	}
	if _, err := os.Stat(filepath.Join(s.SocketDir, "krc.sock")); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("argocd-cmp-server kept its socket after SIGTERM (%v)", err)
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
	return nil
}
