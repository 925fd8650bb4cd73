package cf_test

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
)

const (
	errChecksum = "ERR DUMP payload version or checksum are wrong"
	errFormat   = "ERR Bad data format"
)

// TestPayloadRoundTrip: DUMP's payload RESTOREd into a new key gives the
// same filter, charged its size, within PayloadBound; CheckPayload takes it.
func TestPayloadRoundTrip(t *testing.T) {
	for _, d := range dumpShapes(t) {
		t.Run(d.name, func(t *testing.T) {
			b := d.f.DumpPayload()
			if bound := d.f.PayloadBound(); uint64(len(b)) > bound {
				t.Errorf("a payload of %d bytes, PayloadBound %d", len(b), bound)
			}
			if _, err := cf.CheckPayload(b); err != nil {
				t.Fatalf("CheckPayload: %v", err)
			}
			if cf.UncheckedPayload(b) {
				t.Error("UncheckedPayload of a checked payload")
			}
			m := newMeter(1 << 30)
			g := new(cf.Filter)
			if err := g.LoadPayload(b, m.charge, m.release); err != nil {
				t.Fatal(err)
			}
			if m.mem != int64(g.SizeBytes()) {
				t.Errorf("charged %d for a filter of %d bytes", m.mem, g.SizeBytes())
			}
			if g.Loading() {
				t.Error("a RESTOREd filter is loading")
			}
			checkFound(t, g, 0, d.n)
			sameFigures(t, d.f, g)
			addItems(t, g, d.n, d.n+100)
		})
	}
}

// TestPayloadSparse: an empty filter reserved for many items has a
// payload of a few bytes, and its bound is as small: a sparse filter is
// charged its size, not its table's.
func TestPayloadSparse(t *testing.T) {
	f := newFilter(t, cf.Params{Capacity: 1 << 22, BucketSize: 4, MaxIter: 20, Expansion: 1, Seed: 1, Slots: 4})
	b := f.DumpPayload()
	if len(b) > 128 || f.PayloadBound() > 4<<10 {
		t.Errorf("an empty filter of %d bytes: a payload of %d bytes, bound %d", f.SizeBytes(), len(b), f.PayloadBound())
	}
	addItems(t, f, 0, 1)
	if b := f.DumpPayload(); len(b) > 128+8 || f.PayloadBound() > 16<<10 {
		t.Errorf("one item in %d bytes: a payload of %d bytes, bound %d", f.SizeBytes(), len(b), f.PayloadBound())
	}
}

// TestPayloadCorrupt: a payload with a byte flipped, or cut short, is
// refused, never panics, and leaves nothing charged; this server's
// payloads say their checksum is wrong, RedisBloom's are refused with one
// of RESTORE's two texts.
func TestPayloadCorrupt(t *testing.T) {
	for _, d := range dumpShapes(t) {
		if d.name == "growing/b=2" || d.name == "fixed/b=2" || d.name == "fixed/b=5" {
			continue // the same code as their b=4 and b=5 kin, and long payloads
		}
		t.Run(d.name, func(t *testing.T) {
			b := d.f.DumpPayload()
			rb := d.f.Params().Layout == cf.LayoutRedisBloom
			for _, bad := range corruptions(b) {
				m := newMeter(1 << 30)
				g := new(cf.Filter)
				err := g.LoadPayload(bad, m.charge, m.release)
				switch {
				case err == nil && rb:
					// A flip RedisBloom's checksum does not cover: the
					// filter it loaded is charged its size.
					if m.mem != int64(g.SizeBytes()) {
						t.Fatalf("payload %x loaded: %d charged for %d bytes", bad, m.mem, g.SizeBytes())
					}
				case err == nil:
					t.Fatalf("a corrupt payload loaded (%d bytes of %d)", len(bad), len(b))
				case m.mem != 0:
					t.Fatalf("a refused payload left %d bytes charged: %v", m.mem, err)
				case !rb && err.Error() != errChecksum, rb && err.Error() != errChecksum && err.Error() != errFormat:
					t.Fatalf("a corrupt payload: %q", err)
				}
				if _, cerr := cf.CheckPayload(bad); cerr == nil && !rb {
					t.Fatalf("CheckPayload took a corrupt payload")
				}
			}
		})
	}
}

// reseal returns body closed as a payload of version v: the version and
// the CRC-32C of everything before it.
func reseal(body []byte, v uint16) []byte {
	b := binary.LittleEndian.AppendUint16(append([]byte(nil), body...), v)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}

// TestPayloadFields: payloads whose checksum is right and whose version or
// content is wrong: a version other than 1 is the checksum text, a damaged
// header, runs that do not match it, or bytes after them "Bad data
// format"; nothing is left charged.
func TestPayloadFields(t *testing.T) {
	f := newFilter(t, shapes[1].p)
	addItems(t, f, 0, 300)
	good := f.DumpPayload()
	body, err := cf.CheckPayload(good)
	if err != nil {
		t.Fatal(err)
	}
	if string(reseal(body, 1)) != string(good) {
		t.Fatal("reseal does not rebuild the payload: the test's own format is wrong")
	}
	// The header chunk's length is body's first byte (under 128 here).
	hl := int(body[0])
	header := body[1 : 1+hl]
	for _, tc := range []struct {
		name, err string
		payload   []byte
	}{
		{"version 2", errChecksum, reseal(body, 2)},
		{"version 0", errChecksum, reseal(body, 0)},
		{"5 bytes", errChecksum, good[:5]},
		{"empty", errChecksum, nil},
		{"no header", errFormat, reseal(nil, 1)},
		{"header cut", errFormat, reseal(append([]byte{byte(hl)}, header[:hl-1]...), 1)},
		{"header alone", errFormat, reseal(body[:1+hl], 1)},
		{"runs cut", errFormat, reseal(body[:len(body)-1], 1)},
		{"trailing byte", errFormat, reseal(append(append([]byte(nil), body...), 0), 1)},
		{"header damaged", errFormat, reseal(append(append([]byte{byte(hl)}, header[:hl-1]...), header[hl-1]^1), 1)},
	} {
		m := newMeter(1 << 30)
		err := new(cf.Filter).LoadPayload(tc.payload, m.charge, m.release)
		if err == nil || err.Error() != tc.err || m.mem != 0 {
			t.Errorf("%s: %v, %d bytes left charged; want %q, none", tc.name, err, m.mem, tc.err)
		}
	}
	// The runs of another filter of the same header's shape but other
	// items: the fingerprint count no longer matches the header's.
	other := newFilter(t, shapes[1].p)
	addItems(t, other, 1000, 1299)
	ob, _ := cf.CheckPayload(other.DumpPayload())
	if int(ob[0]) != hl {
		t.Fatalf("the other filter's header has %d bytes, this one's %d: the test needs them equal", ob[0], hl)
	}
	m := newMeter(1 << 30)
	mixed := reseal(append(append([]byte(nil), body[:1+hl]...), ob[1+hl:]...), 1)
	if err := new(cf.Filter).LoadPayload(mixed, m.charge, m.release); err == nil || err.Error() != errFormat || m.mem != 0 {
		t.Errorf("another filter's runs under this header: %v, %d bytes charged", err, m.mem)
	}
}

// TestPayloadRefused: a payload whose filter the memory limit refuses
// returns the refusal (not a format error), leaving nothing charged.
func TestPayloadRefused(t *testing.T) {
	for _, d := range dumpShapes(t) {
		m := newMeter(int64(d.f.SizeBytes()) - 1)
		err := new(cf.Filter).LoadPayload(d.f.DumpPayload(), m.charge, m.release)
		if !errors.Is(err, errRefused) || m.mem != 0 {
			t.Errorf("%s: %v, %d bytes left charged; want the refusal, none", d.name, err, m.mem)
		}
	}
}

// FuzzPayload gives RESTORE mutated payloads of every shape, as they are
// or (sealed) with their version and checksum made right again, so that
// mutations reach the fields behind the checksum: never a panic; a refused
// payload leaves nothing charged; one that loads is charged its size, and
// its own payload loads again into the same figures.
func FuzzPayload(f *testing.F) {
	for _, s := range shapes {
		g := new(cf.Filter)
		if err := g.Init(s.p, free); err != nil {
			f.Fatal(err)
		}
		for i := range 60 {
			g.Add(item(i), false, false, free)
		}
		b := g.DumpPayload()
		f.Add(b, false)
		if body, err := cf.CheckPayload(b); err == nil && s.p.Layout == cf.LayoutCuckoo {
			f.Add(body, true)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, sealed bool) {
		if sealed {
			b = reseal(b, 1)
		}
		m := newMeter(1 << 24)
		g := new(cf.Filter)
		if err := g.LoadPayload(b, m.charge, m.release); err != nil {
			if m.mem != 0 {
				t.Fatalf("a refused payload (%v) left %d bytes charged", err, m.mem)
			}
			return
		}
		if m.mem != int64(g.SizeBytes()) {
			t.Fatalf("charged %d for a filter of %d bytes", m.mem, g.SizeBytes())
		}
		h := new(cf.Filter)
		if err := h.LoadPayload(g.DumpPayload(), free, func(uint64) {}); err != nil {
			t.Fatalf("the loaded filter's own payload: %v", err)
		}
		sameFigures(t, g, h)
	})
}
