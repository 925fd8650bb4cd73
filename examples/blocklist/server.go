package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/cuckoohash/cuckoo/server"
)

// listServer is `cuckoo serve` run in this process: the same server package,
// listening on 127.0.0.1 at a port the OS chose, its data (an append-only
// log and snapshots) in dir.
type listServer struct {
	srv    *server.Server
	addr   string
	served chan error // Serve's return
}

// startServer starts a server on 127.0.0.1:0. The listener is bound before
// it returns, so clients may connect at once.
func startServer(dir string, log *slog.Logger) (*listServer, error) {
	srv, err := server.New(server.Config{Dir: dir, AppendFsync: server.FsyncEverysec, Logger: log})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, err
	}
	s := &listServer{srv: srv, addr: ln.Addr().String(), served: make(chan error, 1)}
	go func() { s.served <- srv.Serve(ln) }()
	return s, nil
}

// stop shuts the server down gracefully (it answers what it is running,
// writes its log and a snapshot) and waits until Serve has returned.
func (s *listServer) stop(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if serr := <-s.served; !errors.Is(serr, server.ErrServerClosed) {
		err = errors.Join(err, fmt.Errorf("serve: %w", serr))
	}
	return err
}
