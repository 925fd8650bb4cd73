package rdb_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuckoohash/cuckoo/internal/redistest"
	"github.com/cuckoohash/cuckoo/internal/resptest"
	"github.com/cuckoohash/cuckoo/redisbloom/internal/rdb"
)

// These tests run a real redis-server, and skip without one. CI installs
// Debian's redis-server, so TestRedisStrings runs there; RedisBloom's module
// is usually absent, and TestRedisModule skips.

// startRedis starts redis-server (redistest.Start: no persistence, the
// extra arguments given) and returns a connection to it.
func startRedis(t *testing.T, args ...string) *resptest.Conn {
	t.Helper()
	return dialRedis(t, redistest.Start(t, args...))
}

// dialRedis connects to the Redis at addr, for the rest of the test. Its
// replies are resptest's: a bulk string is a string.
func dialRedis(t *testing.T, addr string) *resptest.Conn {
	t.Helper()
	c := resptest.Dial(t, addr)
	c.Timeout = 60 * time.Second
	return c
}

// diffStrings returns n strings that exercise every way Redis saves one:
// integers, short and long, runs, text from small alphabets (whose LZF
// output lands near the 4-byte bar Redis sets), random bytes.
func diffStrings(n int) [][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	out := [][]byte{{}, []byte("0"), []byte("-0"), []byte("007"), []byte("+1"),
		[]byte("-128"), []byte("-129"), []byte("32767"), []byte("32768"),
		[]byte("-2147483648"), []byte("2147483648"), []byte("12345678901")}
	for len(out) < n {
		size := rng.IntN(64)
		if rng.IntN(4) == 0 {
			size = rng.IntN(20000)
		}
		s := make([]byte, size)
		switch rng.IntN(6) {
		case 0: // random bytes
			for i := range s {
				s[i] = byte(rng.Uint32())
			}
		case 1: // a small alphabet
			k := 2 + rng.IntN(60)
			for i := range s {
				s[i] = 'A' + byte(rng.IntN(k))
			}
		case 2: // mostly zeros, as a sparse filter table
			for i := range s {
				if rng.IntN(50) == 0 {
					s[i] = byte(1 + rng.IntN(255))
				}
			}
		case 3: // runs
			for i := 0; i < len(s); {
				c, run := byte(rng.Uint32()), 1+rng.IntN(40)
				for ; run > 0 && i < len(s); run-- {
					s[i] = c
					i++
				}
			}
		case 4: // a decimal number
			s = strconv.AppendInt(nil, rng.Int64N(1<<40)-1<<39, 10)
		case 5: // random bytes with a few repeats: LZF saves a few bytes or none
			for i := range s {
				s[i] = byte(rng.Uint32())
			}
			for range rng.IntN(4) {
				if len(s) >= 20 {
					k := 3 + rng.IntN(8)
					from, to := rng.IntN(len(s)-k), rng.IntN(len(s)-k)
					copy(s[to:to+k], s[from:from+k])
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// TestRedisStrings checks AppendString against Redis's own DUMP of the same
// strings: the payloads must be identical, LZF stream included. And Redis
// must RESTORE what we write.
func TestRedisStrings(t *testing.T) {
	c := startRedis(t)
	n := 600
	if v, err := strconv.Atoi(os.Getenv("RDB_DIFF_STRINGS")); err == nil {
		n = v // a longer comparison, run by hand
	}
	if testing.Short() {
		n = 150
	}
	values := diffStrings(n)
	var reqs [][]any // pipelined: sent at once, then the replies read
	for i, v := range values {
		reqs = append(reqs, []any{"SET", fmt.Sprint("k", i), v}, []any{"DUMP", fmt.Sprint("k", i)})
	}
	c.SendAll(reqs...)
	reqs = reqs[:0]
	var compressed int
	for i, v := range values {
		if r := c.Read(); r != "OK" {
			t.Fatalf("SET: %v", r)
		}
		dumped, _ := c.Read().(string)
		ours := rdb.AppendFooter(rdb.AppendString([]byte{rdb.TypeString}, v), 0)
		if !bytes.Equal([]byte(dumped), ours) {
			t.Errorf("value %d (%d bytes, %.40q): Redis's DUMP\n%.200x\nours\n%.200x", i, len(v), v, dumped, ours)
		}
		if len(ours) > 1 && ours[1] == 0xc3 {
			compressed++
		}
		reqs = append(reqs, []any{"RESTORE", fmt.Sprint("r", i), 0, ours}, []any{"GET", fmt.Sprint("r", i)})
	}
	c.SendAll(reqs...)
	for i, v := range values {
		if r := c.Read(); r != "OK" {
			t.Fatalf("RESTORE of value %d: %v", i, r)
		}
		if got, _ := c.Read().(string); !bytes.Equal([]byte(got), v) {
			t.Errorf("value %d restored as %.40q, want %.40q", i, got, v)
		}
	}
	t.Logf("%d strings, %d of them stored LZF-compressed", len(values), compressed)
}

// TestRedisFooter checks SplitPayload against Redis's RESTORE, for Redis
// 7.0 (Debian's redis-server) and Redis 8 (redistest.Redis8): each accepts
// every RDB version up to its own and refuses newer ones, with the same
// error as a wrong checksum; SplitPayload accepts what Redis 8 accepts,
// and so everything Redis 7.0 accepts.
func TestRedisFooter(t *testing.T) {
	for _, srv := range []struct {
		name  string
		start func(t *testing.T) *resptest.Conn
	}{
		{"redis-7", func(t *testing.T) *resptest.Conn { return startRedis(t) }},
		{"redis-8", func(t *testing.T) *resptest.Conn { return dialRedis(t, redistest.StartRedis8(t)) }},
	} {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.start(t)
			newest := rdbVersionOf(t, c)
			body := rdb.AppendString([]byte{rdb.TypeString}, []byte("value"))
			for _, version := range []uint16{0, 1, 9, 10, 11, 12, 13, 14, 0x100, 0xffff} {
				p := binary.LittleEndian.AppendUint16(append([]byte(nil), body...), version)
				p = binary.LittleEndian.AppendUint64(p, rdb.CRC64(0, p))
				_, _, ours := rdb.SplitPayload(p)
				reply := c.Do("RESTORE", fmt.Sprint("v", version), 0, p)
				if (reply == "OK") != (version <= newest) {
					t.Errorf("version %d: Redis replied %v; its own is %d", version, reply, newest)
				}
				// SplitPayload takes all that any Redis takes, and refuses
				// what the newest it knows refuses.
				if reply == "OK" && ours != nil || reply != "OK" && ours == nil && newest == rdb.MaxVersion {
					t.Errorf("version %d: Redis replied %v, SplitPayload %v", version, reply, ours)
				}
				if err, ok := reply.(error); ok && err.Error() != "ERR "+rdb.ErrBadPayload.Error() {
					t.Errorf("version %d: Redis replied %q, want ERR + ErrBadPayload's text", version, err)
				}
			}
			bad := rdb.AppendFooter(append([]byte(nil), body...), 0)
			bad[len(bad)-1] ^= 1
			if reply := c.Do("RESTORE", "badcrc", 0, bad); fmt.Sprint(reply) != "ERR "+rdb.ErrBadPayload.Error() {
				t.Errorf("RESTORE with a wrong CRC: %v", reply)
			}
			// A CRC of 0 is "not computed" to Redis 8 (and a wrong one to
			// Redis 7.0); SplitPayload takes it, as Redis 8 does.
			zero := append(rdb.AppendFooter(append([]byte(nil), body...), 0)[:len(body)+2], make([]byte, 8)...)
			reply := c.Do("RESTORE", "crc0", 0, zero)
			if want := map[uint16]any{10: "ERR " + rdb.ErrBadPayload.Error(), 13: "OK"}[newest]; want != nil && fmt.Sprint(reply) != want {
				t.Errorf("RESTORE with a CRC of 0: %v, want %v", reply, want)
			}
			if _, _, err := rdb.SplitPayload(zero); err != nil || !rdb.Unchecked(zero) {
				t.Errorf("SplitPayload with a CRC of 0: %v (Unchecked %v)", err, rdb.Unchecked(zero))
			}
		})
	}
}

// rdbVersionOf is the RDB version the Redis at c writes, known from its
// release (INFO server's redis_version); it skips a Redis of another one.
func rdbVersionOf(t *testing.T, c *resptest.Conn) uint16 {
	t.Helper()
	info, _ := c.Do("INFO", "server").(string)
	var release string
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			release = strings.TrimSpace(v)
		}
	}
	// Redis 7.0 writes 10, 7.2 writes 11, 7.4 writes 12, 8.0 to 8.6 write 13.
	for prefix, v := range map[string]uint16{"7.0.": 10, "7.2.": 11, "7.4.": 12, "8.": 13} {
		if strings.HasPrefix(release, prefix) {
			return v
		}
	}
	t.Skipf("Redis %q: its RDB version is not known here", release)
	return 0
}

// TestRedisModule writes cuckoo filters' module values and has Redis with
// RedisBloom restore them, Redis 7.0 with RedisBloom 2.6 and Redis 8: it
// must accept them, see their items, and DUMP them back byte for byte, but
// for the footer's RDB version (and so its CRC-64), which is Redis's own.
func TestRedisModule(t *testing.T) {
	t.Run("redis-7", func(t *testing.T) {
		module, why := redistest.RedisBloomModule()
		if module == "" {
			t.Skip(why)
		}
		testRedisModule(t, startRedis(t, "--loadmodule", module))
	})
	t.Run("redis-8", func(t *testing.T) { testRedisModule(t, dialRedis(t, redistest.StartRedis8(t))) })
}

func testRedisModule(t *testing.T, c *resptest.Conn) {
	newest := rdbVersionOf(t, c)

	// A filter of one table of 512 buckets of 2, from Redis's own payload:
	// it holds foo and bar.
	body, _, err := rdb.SplitPayload(readGolden(t, "cf-foo-bar"))
	if err != nil {
		t.Fatal(err)
	}
	fooBar, err := readCF(rdb.NewReader(body), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	// Filters whose tables are stored raw, as an integer and compressed.
	digits := &cfValue{id: cfID, fields: [7]uint64{1, 2, 0, 0, 1, 20, 1},
		tables: []cfTable{{2, []byte("42")}}}
	sparse := &cfValue{id: cfID, fields: [7]uint64{2, 8, 3, 1, 4, 500, 2},
		tables: []cfTable{{8, []byte("\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x09")},
			{16, bytes.Repeat([]byte{0, 0, 0, 7}, 16)}}}
	for name, v := range map[string]*cfValue{"foo-bar": fooBar, "digits": digits, "sparse": sparse} {
		payload := rdb.AppendFooter(v.append(nil), 0)
		if r := c.Do("RESTORE", name, 0, payload); r != "OK" {
			t.Fatalf("RESTORE %s: %v", name, r)
		}
		want := binary.LittleEndian.AppendUint16(payload[:len(payload)-rdb.FooterSize:len(payload)-rdb.FooterSize], newest)
		want = binary.LittleEndian.AppendUint64(want, rdb.CRC64(0, want))
		if r, _ := c.Do("DUMP", name).(string); !bytes.Equal([]byte(r), want) {
			t.Errorf("DUMP %s after RESTORE:\n%x\nwe wrote, at version %d:\n%x", name, r, newest, want)
		}
		info, _ := c.Do("CF.INFO", name).([]any)
		if len(info) != 16 || info[5] != int64(v.fields[0]) || info[7] != int64(v.fields[2]) {
			t.Errorf("CF.INFO %s: %v, want %d filters and %d items", name, info, v.fields[0], v.fields[2])
		}
	}
	for _, item := range []string{"foo", "bar"} {
		if r := c.Do("CF.EXISTS", "foo-bar", item); r != int64(1) {
			t.Errorf("CF.EXISTS foo-bar %s after RESTORE: %v", item, r)
		}
	}
}
