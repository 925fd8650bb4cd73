package server_test

import (
	"fmt"
	"strconv"
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

// BenchmarkExecLogged is BenchmarkExec with a data directory: every
// write also encodes its op and appends it to the log's buffer.
func BenchmarkExecLogged(b *testing.B) {
	benchExec(b, server.NewHarnessDir(b.TempDir()))
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
	b.Run("CF.EXISTS", func(b *testing.B) {
		args := [][]byte{[]byte("CF.EXISTS"), []byte("k"), nil}
		for i := 0; b.Loop(); i++ {
			args[2] = items[i&(len(items)-1)]
			h.Exec(args)
		}
	})
	// Distinct items, as a client's adds mostly are: adding a few over and
	// over would measure "Filter is full" once their buckets fill.
	b.Run("CF.ADD", func(b *testing.B) {
		args := [][]byte{[]byte("CF.ADD"), []byte("k"), nil}
		item := make([]byte, 0, 32)
		for i := len(items); b.Loop(); i++ {
			item = strconv.AppendInt(append(item[:0], "item:"...), int64(i), 10)
			args[2] = item
			h.Exec(args)
		}
	})
	b.Run("PING", func(b *testing.B) {
		args := [][]byte{[]byte("PING")}
		for b.Loop() {
			h.Exec(args)
		}
	})
}
