package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// server is a redis-server child process with the module loaded, listening
// on 127.0.0.1 only, persisting nothing.
type server struct {
	cmd    *exec.Cmd
	addr   string
	dir    string
	exited chan struct{} // closed once the process has been waited for
}

// startServer starts redis-server on a free port and waits until it answers
// PING.
func startServer(binary, module string) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "redisbloom-capture-")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary,
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--loadmodule", module,
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
	)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &server{cmd: cmd, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(s.exited) }()
	if err := s.waitReady(10 * time.Second); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// freePort asks the kernel for a free port and releases it for the server.
// Another process could take it in between; the capture then fails to
// start and is run again.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-s.exited:
			return errors.New("redis-server exited before it was ready (its log is above)")
		default:
		}
		if c, err := dial(s.addr); err == nil {
			reply, err := c.do("PING")
			c.Close()
			if err == nil && reply == "PONG" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server did not answer PING on %s within %v", s.addr, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop ends the server by its process id and removes its directory.
func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	os.RemoveAll(s.dir)
}
