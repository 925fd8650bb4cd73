package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"strconv"
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
	_, addr := start(b, server.Config{})
	nc, err := net.Dial("tcp", addr)
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

// BenchmarkServeConnLogged measures pipelines of CF.ADD of distinct items
// to a server with a data directory, over loopback TCP: each add also
// encodes its op and appends it to the log, and each pipeline writes the
// log before its replies (appendfsync everysec). Each op is one add.
func BenchmarkServeConnLogged(b *testing.B) {
	_, addr := start(b, server.Config{Dir: b.TempDir()})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	rd := bufio.NewReaderSize(nc, 64<<10)
	nc.Write([]byte("*3\r\n$10\r\nCF.RESERVE\r\n$1\r\nk\r\n$8\r\n20000000\r\n"))
	if line, err := rd.ReadSlice('\n'); err != nil || string(line) != "+OK\r\n" {
		b.Fatalf("CF.RESERVE: %q %v", line, err)
	}
	const depth = 16
	var req []byte
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if n%depth == 0 {
			req = req[:0]
			for i := range depth { // item:<13 digits>, built without allocating
				req = append(req, "*3\r\n$6\r\nCF.ADD\r\n$1\r\nk\r\n$18\r\nitem:"...)
				req = strconv.AppendInt(req, 1e12+int64(n+i), 10)
				req = append(req, "\r\n"...)
			}
			if _, err := nc.Write(req); err != nil {
				b.Fatal(err)
			}
			for range depth {
				if line, err := rd.ReadSlice('\n'); err != nil || line[0] != ':' {
					b.Fatalf("reply %q, %v", line, err)
				}
			}
		}
		n++
	}
}
