package backlog_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/backlog"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

type pin int

// model is the whole stream appended since the last reset: every record's
// offset, so that a test knows where records start.
type model struct {
	base   int64   // the offset the stream (re)started at
	stream []byte  // every record from base
	starts []int64 // each record's offset
}

func (m *model) append(payload []byte) {
	m.starts = append(m.starts, m.base+int64(len(m.stream)))
	m.stream = keyspace.AppendRecord(m.stream, payload)
}

func (m *model) reset(offset int64) { *m = model{base: offset} }

// next is where the record after the one at offset starts (or the end).
func (m *model) next(offset int64) int64 {
	for _, s := range m.starts {
		if s > offset {
			return s
		}
	}
	return m.end()
}

func (m *model) end() int64 { return m.base + int64(len(m.stream)) }

func (m *model) isStart(offset int64) bool {
	for _, s := range m.starts {
		if s == offset {
			return true
		}
	}
	return offset == m.end()
}

// check asserts the backlog's invariants against the model: it ends where
// the stream ends, starts where a record starts, holds exactly the
// stream's bytes from its start, and Len is End-Start.
func check(t *testing.T, b *backlog.Backlog[pin], m *model) {
	t.Helper()
	if b.End() != m.end() {
		t.Fatalf("End %d, want %d", b.End(), m.end())
	}
	if b.Len() != b.End()-b.Start() || b.Start() < m.base {
		t.Fatalf("Start %d, End %d, Len %d (stream from %d)", b.Start(), b.End(), b.Len(), m.base)
	}
	if !m.isStart(b.Start()) {
		t.Fatalf("Start %d is not where a record starts", b.Start())
	}
	data, ok := b.Since(b.Start())
	if !ok || !bytes.Equal(data, m.stream[b.Start()-m.base:]) {
		t.Fatalf("Since(Start) = %d bytes, %v; not the stream's last %d bytes", len(data), ok, b.Len())
	}
}

func payload(n int) []byte { return bytes.Repeat([]byte{byte(n)}, n) }

func TestNew(t *testing.T) {
	b := backlog.New[pin](100)
	if b.Start() != 0 || b.End() != 0 || b.Len() != 0 || b.Size() != 100 {
		t.Fatalf("New(100): Start %d, End %d, Len %d, Size %d", b.Start(), b.End(), b.Len(), b.Size())
	}
	if data, ok := b.Since(0); !ok || len(data) != 0 {
		t.Fatalf("Since(0) on an empty backlog = %q, %v", data, ok)
	}
}

func TestNewPanics(t *testing.T) {
	for _, size := range []int64{0, -1} {
		t.Run(fmt.Sprintf("size=%d", size), func(t *testing.T) {
			defer func() {
				if r := recover(); r != "backlog: the size must be positive" {
					t.Fatalf("New(%d) panicked with %v", size, r)
				}
			}()
			backlog.New[pin](size)
		})
	}
}

func TestAppendFrames(t *testing.T) {
	b := backlog.New[pin](1 << 10)
	var want []byte
	for _, p := range []string{"", "a", "hello"} {
		b.Append([]byte(p))
		want = keyspace.AppendRecord(want, []byte(p))
	}
	if data, _ := b.Since(0); !bytes.Equal(data, want) {
		t.Fatalf("Since(0) = %x, want %x", data, want)
	}
	if b.End() != int64(len(want)) || b.End() != 3*keyspace.RecordHeader+6 {
		t.Fatalf("End %d after 3 records of 6 bytes in all", b.End())
	}
}

// TestTrim: the backlog trims only past twice its size, then keeps at
// least size bytes and less than size plus the longest record, starting
// at a record, whatever the records' lengths.
func TestTrim(t *testing.T) {
	for _, c := range []struct{ size, longest int64 }{{1, 2}, {16, 32}, {100, 200}, {1000, 2000}, {1000, 100}, {100, 10}} {
		size := c.size
		t.Run(fmt.Sprintf("size=%d/payloads<%d", size, c.longest), func(t *testing.T) {
			b := backlog.New[pin](size)
			var m model
			rng := rand.New(rand.NewPCG(uint64(size), uint64(c.longest)))
			trims := 0
			for range 2000 {
				p := payload(rng.IntN(int(c.longest)))
				before := b.Start()
				b.Append(p)
				m.append(p)
				check(t, &b, &m)
				longest := keyspace.RecordHeader + c.longest
				if b.Start() != before {
					trims++
					if b.Len() < size || b.Len() >= size+longest {
						t.Fatalf("after a trim %d bytes held; want [%d, %d)", b.Len(), size, size+longest)
					}
				}
				// Past twice the size, only a first record that
				// reaches into the last size bytes stays.
				if b.Len() > 2*size && m.next(b.Start()) <= b.End()-size {
					t.Fatalf("%d bytes held untrimmed; the first record ends at %d", b.Len(), m.next(b.Start()))
				}
			}
			if trims == 0 {
				t.Fatal("never trimmed")
			}
			t.Logf("%d trims in 2000 appends", trims)
		})
	}
}

// TestTrimLongRecord: a record longer than the size is kept whole, alone.
func TestTrimLongRecord(t *testing.T) {
	b := backlog.New[pin](10)
	var m model
	for _, n := range []int{5, 5, 100} {
		b.Append(payload(n))
		m.append(payload(n))
	}
	check(t, &b, &m)
	if b.Start() != m.starts[2] {
		t.Fatalf("Start %d; want the long record's %d", b.Start(), m.starts[2])
	}
}

// TestPins: a pin holds the start at its offset however far the end moves;
// once unpinned, the backlog trims as if it never was. The earliest of
// several pins holds; a pin moved forward lets the start follow it.
func TestPins(t *testing.T) {
	const size = 100
	b := backlog.New[pin](size)
	var m model
	add := func() {
		b.Append(payload(20))
		m.append(payload(20))
		check(t, &b, &m)
	}
	for range 20 {
		add()
	}
	first := b.End()
	b.Pin(1, first)
	for range 5 {
		add()
	}
	b.Pin(2, b.End())
	if got, ok := b.Pinned(2); !ok || got != b.End() {
		t.Fatalf("Pinned(2) = %d, %v; want %d", got, ok, b.End())
	}
	for range 500 {
		add()
		if b.Start() > first {
			t.Fatalf("Start %d moved past the pin at %d with %d bytes held", b.Start(), first, b.Len())
		}
	}
	if _, ok := b.Since(first); !ok {
		t.Fatalf("Since(%d), pinned, not ok", first)
	}

	// Moved forward, the pin lets the start follow it, once a trim drops
	// as much as it keeps.
	b.Unpin(2)
	moved := m.starts[len(m.starts)-100]
	b.Pin(1, moved)
	for range 200 {
		add()
	}
	if b.Start() <= first || b.Start() > moved {
		t.Fatalf("after the pin moved to %d: Start %d (first pin %d)", moved, b.Start(), first)
	}

	// Once unpinned, the backlog trims past where the pin was.
	b.Unpin(1)
	if _, ok := b.Pinned(1); ok {
		t.Fatal("Pinned(1) after Unpin(1)")
	}
	second := b.End()
	for range 10 {
		add()
	}
	if b.Start() <= second || b.Len() > 2*size {
		t.Fatalf("an unpinned backlog kept its start at %d with %d bytes (unpinned at %d)", b.Start(), b.Len(), second)
	}
	b.Unpin(3) // not pinned: nothing happens
	check(t, &b, &m)
}

// TestPinnedTrimAmortized: a pin that lags far behind and creeps forward
// does not make every append copy what it holds: the bytes copied by
// trims stay within a small multiple of the bytes appended.
func TestPinnedTrimAmortized(t *testing.T) {
	const size, lag = 64, 100_000
	b := backlog.New[pin](size)
	var m model
	appended, copied := int64(0), int64(0)
	for i := range 20_000 {
		p := payload(30 + i%20)
		before := b.Start()
		b.Append(p)
		m.append(p)
		appended += int64(keyspace.RecordHeader + len(p))
		if b.Start() != before {
			copied += b.Len()
		}
		// The pin trails the end by about lag bytes, at a record start.
		if i%10 == 0 {
			for _, s := range m.starts {
				if s >= b.End()-lag {
					b.Pin(1, s)
					break
				}
			}
		}
		if p, _ := b.Pinned(1); b.Start() > p {
			t.Fatalf("Start %d past the pin %d", b.Start(), p)
		}
	}
	check(t, &b, &m)
	if copied > 3*appended {
		t.Fatalf("trims copied %d bytes for %d appended: not amortized", copied, appended)
	}
	t.Logf("trims copied %d bytes for %d appended", copied, appended)
}

// TestSince: after a trim the bytes before the start are gone; the bytes
// returned stay as they were whatever the backlog does next.
func TestSince(t *testing.T) {
	b := backlog.New[pin](50)
	var m model
	for range 3 {
		b.Append(payload(10))
		m.append(payload(10))
	}
	got, ok := b.Since(m.starts[1])
	if !ok {
		t.Fatalf("Since(%d) not ok", m.starts[1])
	}
	kept := bytes.Clone(got)
	if len(got) != cap(got) {
		t.Fatalf("Since returned a slice with room to append to (len %d, cap %d)", len(got), cap(got))
	}
	for range 20 {
		b.Append(payload(30))
		m.append(payload(30))
	}
	check(t, &b, &m)
	b.Reset(7)
	if !bytes.Equal(got, kept) {
		t.Fatal("bytes Since returned changed after appends, trims and a reset")
	}

	b = backlog.New[pin](50)
	m = model{}
	for range 20 {
		b.Append(payload(30))
		m.append(payload(30))
	}
	for _, c := range []struct {
		offset int64
		ok     bool
	}{
		{0, false},
		{b.Start() - 1, false},
		{b.Start(), true},
		{b.Start() + 1, true}, // inside a record: Since does not look
		{b.End(), true},
		{b.End() + 1, false},
	} {
		data, ok := b.Since(c.offset)
		if ok != c.ok || (ok && !bytes.Equal(data, m.stream[c.offset:])) {
			t.Errorf("Since(%d) = %d bytes, %v; want ok %v (backlog %d to %d)", c.offset, len(data), ok, c.ok, b.Start(), b.End())
		}
	}
	if data, _ := b.Since(b.End()); len(data) != 0 {
		t.Errorf("Since(End) = %d bytes", len(data))
	}
}

func TestLocate(t *testing.T) {
	b := backlog.New[pin](60)
	var m model
	for i := range 10 {
		b.Append(payload(10 + i))
		m.append(payload(10 + i))
	}
	check(t, &b, &m)
	start, end := b.Start(), b.End()
	if start == 0 {
		t.Fatal("no trim: the test needs a backlog that does not start at 0")
	}
	cases := map[int64]backlog.Position{
		0:                                 backlog.BeforeStart,
		start - 1:                         backlog.BeforeStart,
		start:                             backlog.AtRecord,
		start + 1:                         backlog.InsideRecord,
		start + keyspace.RecordHeader - 1: backlog.InsideRecord,
		end - 1:                           backlog.InsideRecord,
		end:                               backlog.AtRecord,
		end + 1:                           backlog.PastEnd,
		end + 100:                         backlog.PastEnd,
	}
	for _, s := range m.starts {
		if s >= start {
			cases[s] = backlog.AtRecord
		}
	}
	for offset, want := range cases {
		if got := b.Locate(offset); got != want {
			t.Errorf("Locate(%d) = %v, want %v (backlog %d to %d)", offset, got, want, start, end)
		}
	}
	for offset := start; offset <= end; offset++ {
		want := backlog.InsideRecord
		if m.isStart(offset) {
			want = backlog.AtRecord
		}
		if got := b.Locate(offset); got != want {
			t.Errorf("Locate(%d) = %v, want %v", offset, got, want)
		}
	}
}

func TestLocateEmpty(t *testing.T) {
	b := backlog.New[pin](10)
	b.Reset(-1)
	for offset, want := range map[int64]backlog.Position{-2: backlog.BeforeStart, -1: backlog.AtRecord, 0: backlog.PastEnd} {
		if got := b.Locate(offset); got != want {
			t.Errorf("empty at -1: Locate(%d) = %v, want %v", offset, got, want)
		}
	}
}

func TestPositionString(t *testing.T) {
	for p, want := range map[backlog.Position]string{
		backlog.BeforeStart: "BeforeStart", backlog.AtRecord: "AtRecord",
		backlog.InsideRecord: "InsideRecord", backlog.PastEnd: "PastEnd",
	} {
		if p.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(p), p.String(), want)
		}
	}
}

// TestReset: the backlog empties and the stream goes on from the offset,
// at any offset, -1 (no position) included.
func TestReset(t *testing.T) {
	b := backlog.New[pin](100)
	var m model
	for range 30 {
		b.Append(payload(20))
		m.append(payload(20))
	}
	for _, offset := range []int64{12345, 3, -1} {
		b.Reset(offset)
		m.reset(offset)
		if b.Start() != offset || b.End() != offset || b.Len() != 0 || b.Size() != 100 {
			t.Fatalf("Reset(%d): Start %d, End %d, Len %d, Size %d", offset, b.Start(), b.End(), b.Len(), b.Size())
		}
		if data, ok := b.Since(offset); !ok || len(data) != 0 {
			t.Fatalf("Reset(%d): Since(%d) = %d bytes, %v", offset, offset, len(data), ok)
		}
		if b.Locate(offset) != backlog.AtRecord {
			t.Fatalf("Reset(%d): Locate(%d) = %v", offset, offset, b.Locate(offset))
		}
		for range 30 {
			b.Append(payload(20))
			m.append(payload(20))
			check(t, &b, &m)
		}
	}
}

// FuzzBacklog drives a backlog with appends, pins, unpins and resets
// decoded from the input, checking it against the model after each, and
// Locate and Since at an offset the input picks.
func FuzzBacklog(f *testing.F) {
	f.Add([]byte{0, 10, 0, 50, 1, 0, 0, 200, 0, 200, 2, 0, 0, 90, 3, 5, 4, 7})
	f.Add(bytes.Repeat([]byte{0, 40}, 100))
	f.Fuzz(func(t *testing.T, ops []byte) {
		b := backlog.New[pin](64)
		var m model
		for len(ops) >= 2 {
			op, arg := ops[0]%5, ops[1]
			ops = ops[2:]
			switch op {
			case 0:
				b.Append(payload(int(arg)))
				m.append(payload(int(arg)))
			case 1:
				b.Pin(pin(arg%4), b.End())
			case 2:
				b.Unpin(pin(arg % 4))
			case 3:
				b.Reset(int64(arg) - 1)
				m.reset(int64(arg) - 1)
			case 4:
				offset := b.Start() + int64(arg) - 20
				data, ok := b.Since(offset)
				in := offset >= b.Start() && offset <= b.End()
				if ok != in || (ok && !bytes.Equal(data, m.stream[offset-m.base:])) {
					t.Fatalf("Since(%d) = %d bytes, %v (backlog %d to %d)", offset, len(data), ok, b.Start(), b.End())
				}
				want := backlog.PastEnd
				switch {
				case offset < b.Start():
					want = backlog.BeforeStart
				case offset > b.End():
				case m.isStart(offset):
					want = backlog.AtRecord
				default:
					want = backlog.InsideRecord
				}
				if got := b.Locate(offset); got != want {
					t.Fatalf("Locate(%d) = %v, want %v", offset, got, want)
				}
			}
			check(t, &b, &m)
			if op != 0 {
				continue // only an append trims
			}
			// Unpinned, a backlog holds at most twice its size and a
			// record; pinned, twice what its earliest pin holds too.
			held := int64(64)
			for p := range pin(4) {
				if o, ok := b.Pinned(p); ok {
					held = max(held, b.End()-o)
				}
			}
			if b.Len() > 2*held+2*(keyspace.RecordHeader+255) {
				t.Fatalf("%d bytes held, past twice the size and the pins", b.Len())
			}
		}
	})
}

func ExampleBacklog() {
	b := backlog.New[string](32)
	for _, op := range []string{"SET a", "SET b", "DEL a", "SET c", "DEL b"} {
		b.Append([]byte(op))
	}
	fmt.Println(b.Start(), b.End(), b.Len())
	fmt.Println(b.Locate(0), b.Locate(b.Start()), b.Locate(b.Start()+1), b.Locate(b.End()+1))
	data, ok := b.Since(b.Start())
	n := binary.LittleEndian.Uint32(data)
	fmt.Printf("%v %q\n", ok, data[keyspace.RecordHeader:keyspace.RecordHeader+n])
	// Output:
	// 26 65 39
	// BeforeStart AtRecord InsideRecord PastEnd
	// true "DEL a"
}
