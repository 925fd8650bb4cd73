package server

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/growing"
	"github.com/cuckoohash/cuckoo/internal/tables"
	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

// infoInt returns field of the harness's INFO memory.
func infoInt(t *testing.T, h *Harness, field string) int64 {
	t.Helper()
	reply := string(h.Exec([][]byte{[]byte("INFO"), []byte("memory")}))
	for _, line := range strings.Split(reply, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO has no %s: %q", field, reply)
	return 0
}

// TestRestartCountsFilledFilterOnce is issue 24's filled filter: a growing
// table of 8 million items' capacity (17.8 MB), every bucket full, saved and
// loaded again by a restart. used_memory after the restart is within an
// eighth (and 8 MB) of what it was before, and used_memory_filters the same:
// the load allocates the table once (it allocated New's segments, then
// Restore's, and used_memory read about twice the filter until the next
// collection). The collector is off during the restart, so that what the
// load allocates is all in used_memory, collected or not.
func TestRestartCountsFilledFilterOnce(t *testing.T) {
	dir := t.TempDir()
	nop := func(_, _ uint64) error { return nil }
	p := cf.Params{Capacity: 8 << 20, BucketSize: 4, MaxIter: 20, Expansion: 1, Seed: 1}
	c := new(cf.Filter)
	if err := c.Init(p, nop); err != nil {
		t.Fatal(err)
	}
	// Valid words, from a small table of the same bucket size filled.
	src, err := growing.New(growing.Config{InitialCapacity: 1000, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 900 {
		src.InsertString(fmt.Sprint(i))
	}
	var words []uint64
	for j := range src.Buckets() {
		if w := tables.OfGrowing(src).BucketBits(j); w != 0 {
			words = append(words, w)
		}
	}
	if err := c.FillForTest(words); err != nil {
		t.Fatal(err)
	}
	payload := c.DumpPayload()
	c = nil

	h := NewHarnessDir(dir)
	if r := h.Exec([][]byte{[]byte("RESTORE"), []byte("k"), []byte("0"), payload}); !bytes.Equal(r, []byte("+OK\r\n")) {
		t.Fatalf("RESTORE: %q", r)
	}
	payload = nil
	if r := h.Exec([][]byte{[]byte("SAVE")}); !bytes.Equal(r, []byte("+OK\r\n")) {
		t.Fatalf("SAVE: %q", r)
	}
	runtime.GC()
	filters := infoInt(t, h, "used_memory_filters")
	before := infoInt(t, h, "used_memory")
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	h = nil
	// The stopped server's goroutines may still be returning: wait until
	// its filter is collected, so that used_memory after the restart counts
	// only the new server's (a server whose memory is never freed fails
	// here).
	var ms runtime.MemStats
	for i := 0; ; i++ {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if int64(ms.HeapAlloc) < filters/2 {
			break
		}
		if i == 500 {
			t.Fatalf("the stopped server still holds its memory: %d bytes in the heap, its filter took %d", ms.HeapAlloc, filters)
		}
		time.Sleep(10 * time.Millisecond)
	}

	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	h = NewHarnessDir(dir)
	defer h.Close()
	after := infoInt(t, h, "used_memory")
	if got := infoInt(t, h, "used_memory_filters"); got != filters {
		t.Errorf("used_memory_filters %d after the restart, %d before", got, filters)
	}
	if d := after - before; d > filters/8+8<<20 || -d > filters/8+8<<20 {
		t.Errorf("used_memory %d after the restart, %d before, for used_memory_filters %d", after, before, filters)
	}
	t.Logf("used_memory %d before the restart, %d after; used_memory_filters %d", before, after, filters)
	if r := h.Exec([][]byte{[]byte("CF.INFO"), []byte("k")}); !bytes.Contains(r, []byte("Size")) {
		t.Fatalf("CF.INFO k after the restart: %q", r)
	}
}
