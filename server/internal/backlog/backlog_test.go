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
	b := backlog.New[pin](100, 0)
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
			backlog.New[pin](size, 0)
		})
	}
}

func TestAppendFrames(t *testing.T) {
	b := backlog.New[pin](1<<10, 0)
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
			b := backlog.New[pin](size, 0)
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
	b := backlog.New[pin](10, 0)
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

// TestPins: a pin holds the start at the end it was pinned at while the
// backlog stays within the pin limit; past it, or once unpinned, the
// backlog trims as if unpinned. The earliest of several pins holds.
func TestPins(t *testing.T) {
	const size, limit = 100, 1000
	b := backlog.New[pin](size, limit)
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
	b.Pin(1)
	for range 5 {
		add()
	}
	b.Pin(2)
	for b.Len()+28 <= limit {
		add()
		if b.Start() > first {
			t.Fatalf("Start %d moved past the pin at %d with %d bytes held", b.Start(), first, b.Len())
		}
	}
	if _, ok := b.Since(first); !ok {
		t.Fatalf("Since(%d), pinned, not ok", first)
	}
	add() // past the limit
	if b.Start() <= first || b.Len() >= size+28 {
		t.Fatalf("past the pin limit: Start %d, %d bytes held; want a trim to about %d", b.Start(), b.Len(), size)
	}

	// Once unpinned, the backlog trims past where the pin was.
	b.Unpin(1)
	b.Unpin(2)
	b.Pin(1)
	second := b.End()
	b.Unpin(1)
	for range 10 {
		add()
	}
	if b.Start() <= second {
		t.Fatalf("an unpinned backlog kept its start at %d (unpinned at %d)", b.Start(), second)
	}
	b.Unpin(3) // not pinned: nothing happens
	check(t, &b, &m)
}

// TestPinLimitBelowTwiceSize: pins never hold a backlog past twice its size.
func TestPinLimitBelowTwiceSize(t *testing.T) {
	b := backlog.New[pin](100, 10)
	var m model
	b.Pin(1)
	for range 20 {
		b.Append(payload(20))
		m.append(payload(20))
		check(t, &b, &m)
	}
	if b.Start() == 0 || b.Len() > 200 {
		t.Fatalf("Start %d, %d bytes held: the pin held past twice the size", b.Start(), b.Len())
	}
}

// TestSince: after a trim the bytes before the start are gone; the bytes
// returned stay as they were whatever the backlog does next.
func TestSince(t *testing.T) {
	b := backlog.New[pin](50, 0)
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

	b = backlog.New[pin](50, 0)
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
	b := backlog.New[pin](60, 0)
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
	b := backlog.New[pin](10, 0)
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
	b := backlog.New[pin](100, 0)
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
		b := backlog.New[pin](64, 256)
		var m model
		for len(ops) >= 2 {
			op, arg := ops[0]%5, ops[1]
			ops = ops[2:]
			switch op {
			case 0:
				b.Append(payload(int(arg)))
				m.append(payload(int(arg)))
			case 1:
				b.Pin(pin(arg % 4))
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
			if b.Len() > 256+64+keyspace.RecordHeader+255 {
				t.Fatalf("%d bytes held, past the pin limit and the size", b.Len())
			}
		}
	})
}

func ExampleBacklog() {
	b := backlog.New[string](32, 1<<20)
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
