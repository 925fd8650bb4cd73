package redisbloom_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

// TestPayloadRefuses: a payload cut short, with a byte changed, of another
// module type, or asking for more than the Reserve, is an error.
func TestPayloadRefuses(t *testing.T) {
	f := filled(t, redisbloom.Params{Capacity: 200, BucketSize: 2, MaxIterations: 20, Expansion: 2}, 600)
	p := f.AppendPayload(nil)
	if _, err := redisbloom.ParsePayload(p, nil); err != nil {
		t.Fatal(err)
	}
	for cut := range len(p) {
		if _, err := redisbloom.ParsePayload(p[:cut], nil); err == nil {
			t.Fatalf("a payload cut at %d of %d parsed", cut, len(p))
		}
	}
	for i := range len(p) {
		q := append([]byte(nil), p...)
		q[i] ^= 0x40
		if _, err := redisbloom.ParsePayload(q, nil); err == nil {
			t.Fatalf("a payload with byte %d changed parsed", i)
		}
	}
	refused := errors.New("no memory")
	if _, err := redisbloom.ParsePayload(p, func(uint64) error { return refused }); !errors.Is(err, refused) {
		t.Fatalf("a refused reservation: %v", err)
	}
}

// TestPayloadReadAsRedis: the value is read from the payload's first byte,
// footer included, and bytes after it are left unread, as Redis 8.6.3's
// RESTORE reads them (checked against it by hand, and by the server's
// differential test): a value with junk after it parses, the module's EOF
// may be the footer's first byte, and a payload cut short parses exactly
// when its last ten bytes are a footer RESTORE takes and the whole value
// is before the cut. What parses is the filter dumped.
func TestPayloadReadAsRedis(t *testing.T) {
	// One key in 8 buckets of 2 slots, the first key whose fingerprint is
	// in the first half: the slots then end in 9 zero bytes, and the payload
	// cut after its value ends in a footer of version 0 and a CRC of 0, as
	// the differential test once made it.
	var p, value []byte
	for i := 0; ; i++ {
		f := filled(t, redisbloom.Params{Capacity: 16, BucketSize: 2, MaxIterations: 20, Expansion: 1}, 0)
		if err := f.Add(fmt.Appendf(nil, "key:%d", i)); err != nil {
			t.Fatal(err)
		}
		p = f.AppendPayload(nil)
		value = p[:len(p)-rdb.FooterSize]
		if _, _, err := rdb.SplitPayload(value); err == nil {
			break
		}
	}
	same := func(name string, q []byte) {
		t.Helper()
		g, err := redisbloom.ParsePayload(q, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(g.AppendPayload(nil), p) {
			t.Fatalf("%s: parsed another filter", name)
		}
	}
	junk := append(append([]byte(nil), value...), "junk after the value"...)
	checked := rdb.AppendFooter(bytes.Clone(junk), 0)
	same("junk, then a checked footer", checked)
	unchecked := append(bytes.Clone(checked[:len(checked)-8]), make([]byte, 8)...)
	same("junk, then a CRC of 0", unchecked)
	// Version 0, whose low byte is the EOF opcode, and a CRC of 0.
	same("the EOF as the footer's first byte", append(bytes.Clone(value[:len(value)-1]), make([]byte, rdb.FooterSize)...))
	taken := 0
	for cut := range len(p) {
		q := p[:cut]
		_, _, footerErr := rdb.SplitPayload(q)
		_, err := redisbloom.ParsePayload(q, nil)
		switch want := footerErr == nil && cut >= len(value); {
		case want && err != nil:
			t.Fatalf("cut at %d of %d: %v", cut, len(p), err)
		case want:
			same("a cut payload", q)
			taken++
		case err == nil:
			t.Fatalf("a payload cut at %d of %d parsed", cut, len(p))
		}
	}
	if taken == 0 {
		t.Fatal("no cut of the payload left a footer RESTORE takes: the test checks nothing")
	}
}

// FuzzParsePayload parses any bytes: never a panic, never a filter past
// the Reserve; what parses dumps and parses back the same.
func FuzzParsePayload(f *testing.F) {
	for _, p := range []redisbloom.Params{
		{Capacity: 100, BucketSize: 2, MaxIterations: 20, Expansion: 1},
		{Capacity: 8, BucketSize: 1, MaxIterations: 3, Expansion: 2},
	} {
		g, _ := redisbloom.New(p)
		for _, it := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
			_ = g.Add([]byte(it))
		}
		f.Add(g.AppendPayload(nil))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		const limit = 1 << 20
		var total uint64
		g, err := redisbloom.ParsePayload(p, func(n uint64) error {
			if total+n > limit {
				return errors.New("too big")
			}
			total += n
			return nil
		})
		if err != nil {
			return
		}
		if g.Bytes() > limit {
			t.Fatalf("%d bytes past the limit", g.Bytes())
		}
		again, err := redisbloom.ParsePayload(g.AppendPayload(nil), nil)
		if err != nil || again.Info() != g.Info() {
			t.Fatalf("a parsed payload does not round-trip: %v", err)
		}
		g.Contains(p)
		_ = g.Add(p)
		g.Delete(p)
	})
}
