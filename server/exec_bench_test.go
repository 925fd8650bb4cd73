package server_test

import (
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
)

// BenchmarkExec measures one command's dispatch and run, in process (no
// network): the path MULTI, RESP3, MONITOR and ACL hooks must not slow.
// Compare commits side by side with -count and benchstat.
func BenchmarkExec(b *testing.B) {
	benchExec(b, server.NewHarness())
}

// BenchmarkExecCluster is BenchmarkExec in cluster mode (one node owning
// every slot): the cost of the cluster check (the key's slot, the
// topology, the slot's lock) on every keyed command.
func BenchmarkExecCluster(b *testing.B) {
	benchExec(b, server.NewHarnessCluster())
}

func benchExec(b *testing.B, h *server.Harness) {
	defer h.Close()
	h.Exec([][]byte{[]byte("CF.RESERVE"), []byte("k"), []byte("20000000")})
	items := make([][]byte, 1<<16)
	for i := range items {
		items[i] = fmt.Appendf(nil, "item:%d", i)
	}
	for i := 0; i < len(items); i += 2 {
		h.Exec([][]byte{[]byte("CF.ADD"), []byte("k"), items[i]})
	}
	for _, name := range []string{"CF.EXISTS", "CF.ADD"} {
		b.Run(name, func(b *testing.B) {
			args := [][]byte{[]byte(name), []byte("k"), nil}
			for i := 0; b.Loop(); i++ {
				args[2] = items[i&(len(items)-1)]
				h.Exec(args)
			}
		})
	}
	b.Run("PING", func(b *testing.B) {
		args := [][]byte{[]byte("PING")}
		for b.Loop() {
			h.Exec(args)
		}
	})
}
