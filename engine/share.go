package main

import (
	"net"
)

// listenForWorkers serves krc's worker processes on a Unix socket beside the pipes of the krc process that
// started the engine, so a run has one engine (one copy of every compiled CRD and chart) however many processes
// it compiles in. krc makes the socket's folder, which only its user can enter. The engine lives as long as its
// starter's pipe, not a worker's connection; a connection that ends only ends its own requests' answers. A
// worker's connection turns the collector's usual target back on (collectNearLimit).
func listenForWorkers(path string) (net.Listener, error) {
	listener, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			collectAsUsual() // a worker: the run compiles many environments
			go func() {
				defer conn.Close()
				_ = serve(conn, conn)
			}()
		}
	}()
	return listener, nil
}
