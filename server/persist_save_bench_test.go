package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
)

// BenchmarkSave times SAVE of one key: a filter reserved for 2^28 items (a
// 600 MB table) holding one, whose snapshot reads only the block of 512
// buckets the item went to (issue 24: SAVE read every bucket, 5.7 s for a
// 2^32 reservation, and committed every page it read), and a filter of 2^20
// items' capacity filled to 90%, which it reads whole.
func BenchmarkSave(b *testing.B) {
	for _, c := range []struct {
		name     string
		capacity int
		items    int
	}{
		{"capacity=2^28/items=1", 1 << 28, 1},
		{"capacity=2^20/items=943718", 1 << 20, 1 << 20 * 9 / 10},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := server.NewHarnessDir(b.TempDir())
			defer h.Close()
			exec := func(args ...string) string {
				a := make([][]byte, len(args))
				for i, s := range args {
					a[i] = []byte(s)
				}
				return string(h.Exec(a))
			}
			if r := exec("CF.RESERVE", "k", fmt.Sprint(c.capacity)); r != "+OK\r\n" {
				b.Fatal(r)
			}
			for i := 0; i < c.items; i += 1000 {
				args := []string{"CF.INSERT", "k", "ITEMS"}
				for j := i; j < min(i+1000, c.items); j++ {
					args = append(args, fmt.Sprint("item", j))
				}
				if r := exec(args...); strings.HasPrefix(r, "-") {
					b.Fatal(r)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				if r := exec("SAVE"); r != "+OK\r\n" {
					b.Fatal(r)
				}
			}
		})
	}
}
