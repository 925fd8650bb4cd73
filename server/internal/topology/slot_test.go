package topology_test

import (
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// TestKeySlot checks the slot hash against Redis's known values (Redis's
// cluster spec and its tests; 12739 is CRC16/XMODEM's check value, 0x31C3)
// and the hash tag rules, for strings and byte slices alike. The values
// agree with an independent CRC16/XMODEM, Python's binascii.crc_hqx(key, 0)
// mod 16384.
func TestKeySlot(t *testing.T) {
	for k, want := range map[string]int{
		"somekey": 11058, "foo": 12182, "bar": 5061, "hello": 866, "123456789": 12739,
		"foo{hash_tag}": 2515, "": 0, "{user1000}.following": 3443,
		// An empty tag, or a '{' with no '}' after it: the whole key.
		"foo{}{bar}": 8363, "{}": 15257, "{bar": 4015,
	} {
		if got := topology.KeySlot(k); got != want {
			t.Errorf("KeySlot(%q) = %d, want %d", k, got, want)
		}
		if got := topology.KeySlot([]byte(k)); got != want {
			t.Errorf("KeySlot([]byte(%q)) = %d, want %d", k, got, want)
		}
	}
	for _, same := range [][2]string{
		{"{user1000}.following", "{user1000}.followers"},
		{"foo{bar}{zap}", "bar"},     // the first tag only
		{"foo{{bar}}zap", "{bar"},    // from the first '{' to the first '}'
		{"foo{bar}", "{bar}baz"},     // a tag anywhere
		{"foo}{bar}", "bar"},         // a '}' before the '{' is not a tag's end
		{"foo{}{bar}", "foo{}{bar}"}, // an empty tag hashes the whole key
		{"{bar", "{bar"},             // no '}': the whole key
	} {
		if a, b := topology.KeySlot(same[0]), topology.KeySlot(same[1]); a != b {
			t.Errorf("KeySlot(%q) = %d, KeySlot(%q) = %d: want equal", same[0], a, same[1], b)
		}
	}
	for _, differ := range [][2]string{
		{"foo{}{bar}", "bar"}, // the tag after an empty one is not a tag
		{"{bar", "bar"},       // an unclosed '{' is part of the key
	} {
		if a, b := topology.KeySlot(differ[0]), topology.KeySlot(differ[1]); a == b {
			t.Errorf("KeySlot(%q) = KeySlot(%q) = %d: want different", differ[0], differ[1], a)
		}
	}
}

// TestKeySlotRange: every slot is in [0, Slots), for keys of every length
// and byte.
func TestKeySlotRange(t *testing.T) {
	key := make([]byte, 0, 300)
	for i := range 300 {
		key = append(key, byte(i*37))
		if s := topology.KeySlot(key); s < 0 || s >= topology.Slots {
			t.Fatalf("KeySlot(%x) = %d", key, s)
		}
	}
}

// TestKeySlotAllocs: the slot of a key, computed on every command in
// cluster mode, allocates nothing, for a string or a byte slice.
func TestKeySlotAllocs(t *testing.T) {
	b, s := []byte("user:{1000}:seen"), "user:{1000}:seen"
	if n := testing.AllocsPerRun(100, func() { topology.KeySlot(b); topology.KeySlot(s) }); n != 0 {
		t.Errorf("KeySlot allocates %v times", n)
	}
}

func BenchmarkKeySlot(b *testing.B) {
	key := []byte("user:{1000}:seen:2026-12-04")
	b.ReportAllocs()
	for b.Loop() {
		topology.KeySlot(key)
	}
}
