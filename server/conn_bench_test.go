package server_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
)

// BenchmarkServeConn measures a connection's path, over loopback TCP:
// reading pipelined requests, running them, and the per-command and
// per-pipeline bookkeeping around them (output limits, client memory),
// which BenchmarkExec, in process, does not see. Each op is one command of
// a pipeline of depth commands, its reply read. Compare commits side by side
// with -count and benchstat.
func BenchmarkServeConn(b *testing.B) {
	srv, err := server.New(server.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	rd := bufio.NewReaderSize(nc, 64<<10)
	do := func(req []byte, replies int) {
		if _, err := nc.Write(req); err != nil {
			b.Fatal(err)
		}
		for range replies {
			line, err := rd.ReadSlice('\n')
			if err != nil {
				b.Fatal(err)
			}
			if line[0] == '-' {
				b.Fatalf("error reply %q", line)
			}
		}
	}
	do([]byte("*3\r\n$10\r\nCF.RESERVE\r\n$1\r\nk\r\n$7\r\n1000000\r\n"), 1)
	for _, cmd := range []string{"PING", "CF.EXISTS"} {
		for _, depth := range []int{1, 100} {
			b.Run(fmt.Sprintf("cmd=%s/depth=%d", cmd, depth), func(b *testing.B) {
				var one string
				if cmd == "PING" {
					one = "*1\r\n$4\r\nPING\r\n"
				} else {
					one = "*3\r\n$9\r\nCF.EXISTS\r\n$1\r\nk\r\n$4\r\nitem\r\n"
				}
				req := bytes.Repeat([]byte(one), depth)
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					if n%depth == 0 {
						do(req, depth)
					}
					n++
				}
			})
		}
	}
}
