// Command respfloor is the cheapest RESP server there can be: it parses each
// command with redcon and answers PING with PONG, GET with a nil bulk and
// every other command with the integer 0, doing no other work. Run redis-benchmark against it beside cuckoo serve and redis-server to
// see how much of an unpipelined request's cost is the network and the Go
// runtime rather than the server: its rate is the ceiling for any Go server
// built the same way.
//
//	go run ./cmd/respfloor --mode net  --addr 127.0.0.1:6392   # a goroutine per connection
//	go run ./cmd/respfloor --mode gnet --addr 127.0.0.1:6393   # gnet's epoll event loops
//	go run ./cmd/respfloor --mode uring --addr 127.0.0.1:6394  # io_uring loops, one a core
//	redis-benchmark -p 6392 -n 300000 -c 50 -P 1 -r 100000000 -q CF.EXISTS k __rand_int__
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"runtime"

	"github.com/panjf2000/gnet/v2"
	"github.com/tidwall/redcon"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6392", "listen address")
	mode := flag.String("mode", "net", "net (a goroutine per connection, as cuckoo serve), gnet (epoll event loops) or uring (io_uring loops)")
	multicore := flag.Bool("multicore", true, "gnet: one event loop per core (false: one loop)")
	loops := flag.Int("loops", runtime.GOMAXPROCS(0), "uring: io_uring loops, each with its own ring and SO_REUSEPORT listener")
	flag.Parse()
	var err error
	switch *mode {
	case "net":
		err = serveNet(*addr)
	case "gnet":
		err = gnet.Run(&floor{}, "tcp://"+*addr, gnet.WithMulticore(*multicore))
	case "uring":
		err = serveUring(*addr, *loops, nil)
	default:
		err = fmt.Errorf("unknown --mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "respfloor:", err)
		os.Exit(1)
	}
}

// serveNet serves each connection in its own goroutine, reading pipelines
// with redcon's Reader and flushing one reply batch per pipeline.
func serveNet(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	for {
		nc, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer nc.Close()
			rd, wr := redcon.NewReader(nc), redcon.NewWriter(nc)
			var out []byte
			for {
				cmds, err := rd.ReadCommands()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						log.Print(err)
					}
					return
				}
				out = out[:0]
				for _, c := range cmds {
					out = appendReply(out, c.Args)
				}
				wr.WriteRaw(out)
				if wr.Flush() != nil {
					return
				}
			}
		}()
	}
}

// floor is the gnet handler: each readable event parses every complete
// command in the inbound buffer and writes the replies at once.
type floor struct {
	gnet.BuiltinEventEngine
}

func (*floor) OnTraffic(c gnet.Conn) gnet.Action {
	in, err := c.Peek(-1)
	if err != nil {
		return gnet.Close
	}
	var out []byte
	var args [][]byte
	rest := in
	for {
		complete, a, _, left, err := redcon.ReadNextCommand(rest, args[:0])
		if err != nil {
			log.Print(err)
			return gnet.Close
		}
		if !complete {
			break
		}
		args, rest = a, left
		out = appendReply(out, a)
	}
	if _, err := c.Discard(len(in) - len(rest)); err != nil {
		return gnet.Close
	}
	if len(out) > 0 {
		if _, err := c.Write(out); err != nil {
			return gnet.Close
		}
	}
	return gnet.None
}
