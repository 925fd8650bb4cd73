package monitor_test

import (
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/monitor"
)

func TestLine(t *testing.T) {
	now := time.Unix(1700000000, 42_000)
	got := string(monitor.Line(now, "127.0.0.1:5000", [][]byte{[]byte("CF.ADD"), []byte("k"), []byte("a b\n")}))
	if want := "+1700000000.000042 [0 127.0.0.1:5000] \"CF.ADD\" \"k\" \"a b\\n\"\r\n"; got != want {
		t.Errorf("Line = %q, want %q", got, want)
	}
}

// TestHub: each monitor gets every line in order; one whose queue is full
// is removed, its queue closed, and reported; Remove closes a queue once.
func TestHub(t *testing.T) {
	var h monitor.Hub[int]
	fast, slow := h.Add(1), h.Add(2)
	if h.Len() != 2 {
		t.Fatalf("Len %d, want 2", h.Len())
	}
	var behind []int
	for i := range monitor.Queue + 1 {
		h.Feed([]byte{byte(i)}, func(c int) { behind = append(behind, c) })
		if line := <-fast; line[0] != byte(i) { // the fast monitor keeps up, in order
			t.Fatalf("line %d: the fast monitor read %d", i, line[0])
		}
	}
	if len(behind) != 1 || behind[0] != 2 || h.Len() != 1 {
		t.Fatalf("behind %v, Len %d: want the slow monitor dropped once its queue filled, the fast one kept", behind, h.Len())
	}
	n := 0
	for range slow {
		n++
	}
	if n != monitor.Queue {
		t.Errorf("the slow monitor's queue held %d lines, want %d, then closed", n, monitor.Queue)
	}
	c := h.Add(3)
	h.Remove(3)
	h.Remove(3)
	h.Remove(1)
	if _, ok := <-c; ok || h.Len() != 0 {
		t.Error("Remove left the queue open or the monitor counted")
	}
}
