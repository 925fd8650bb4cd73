package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/cuckoohash/cuckoo/server"
	"github.com/redis/go-redis/v9"
)

// Since Redis 8.0 the cuckoo filters are part of Redis, and their DUMP
// payloads carry Redis 8's RDB version, 13, in the footer. The fixtures in
// ../redisbloom/testdata/fixtures-redis8 were captured from Redis 8.6.3
// with RedisBloom 8.6.2 (that directory's commands.txt gives the commands);
// their schema is in ../redisbloom/testdata/capture/main.go. This test
// reads what it needs of them.

type redis8Fixture struct {
	Name     string          `json:"name"`
	Redis    string          `json:"redis"`
	Key      string          `json:"key"`
	Info     json.RawMessage `json:"info"`
	ScanDump []struct {
		Next int64  `json:"next"`
		Data []byte `json:"data"`
	} `json:"scandump"`
	Dump      []byte `json:"dump"`
	DumpPlain []byte `json:"dump_plain"`
	Probes    struct {
		Items  []string `json:"items"`
		Exists []int64  `json:"exists"`
	} `json:"probes"`
}

func loadRedis8Fixtures(t *testing.T) []*redis8Fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "redisbloom", "testdata", "fixtures-redis8", "*.json.gz"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Redis 8 fixtures: %v", err)
	}
	var out []*redis8Fixture
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		js, err := io.ReadAll(zr)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		fx := new(redis8Fixture)
		if err := json.Unmarshal(js, fx); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if fx.Redis != "8.6.3" || len(fx.Probes.Exists) != len(fx.Probes.Items) {
			t.Fatalf("%s: captured from Redis %q, or malformed", path, fx.Redis)
		}
		out = append(out, fx)
	}
	return out
}

// footerVersion is the RDB version in a DUMP payload's footer.
func footerVersion(p []byte) uint16 { return binary.LittleEndian.Uint16(p[len(p)-10:]) }

// TestRestoreRedis8Fixtures RESTOREs every payload Redis 8 wrote (with and
// without rdbcompression) into cuckoo serve with either cf-layout: each is
// taken as a filter of RedisBloom's layout that answers CF.INFO and
// CF.EXISTS for every probe (false positives included) as Redis 8 did, and
// DUMPs back Redis 8's bytes but for the footer, RDB version 10, which
// Redis 7.0 reads as well as Redis 8. Redis 8's CF.SCANDUMP chunks load
// into the same filter.
func TestRestoreRedis8Fixtures(t *testing.T) {
	fixtures := loadRedis8Fixtures(t)
	for _, layout := range []string{"cuckoo", "redisbloom"} {
		t.Run("cf-layout="+layout, func(t *testing.T) {
			_, addr := start(t, server.Config{})
			// RESP2, where CF.INFO is the flat array the fixtures hold.
			c := client(t, addr, func(o *redis.Options) { o.Protocol = 2 })
			ctx := context.Background()
			if err := c.ConfigSet(ctx, "cf-layout", layout).Err(); err != nil {
				t.Fatal(err)
			}
			for _, fx := range fixtures {
				t.Run(fx.Name, func(t *testing.T) {
					c.FlushAll(ctx)
					for _, p := range []struct {
						key     string
						payload []byte
					}{{"dump", fx.Dump}, {"dump_plain", fx.DumpPlain}} {
						if v := footerVersion(p.payload); v != 13 {
							t.Fatalf("%s: RDB version %d, want Redis 8's 13", p.key, v)
						}
						if err := c.Restore(ctx, p.key, 0, string(p.payload)).Err(); err != nil {
							t.Fatalf("RESTORE of Redis 8's %s: %v", p.key, err)
						}
						checkRedis8Filter(t, c, p.key, fx)
						back, err := c.Dump(ctx, p.key).Bytes()
						if err != nil {
							t.Fatal(err)
						}
						n := len(fx.Dump) - 10
						if len(back) != len(fx.Dump) || !bytes.Equal(back[:n], fx.Dump[:n]) || footerVersion(back) != 10 {
							t.Errorf("DUMP of %s: %d bytes, version %d; want Redis 8's %d bytes, version 10",
								p.key, len(back), footerVersion(back), len(fx.Dump))
						}
					}
					if fx.ScanDump[0].Next == 0 {
						return // no items: nothing to load in chunks
					}
					for _, ch := range fx.ScanDump {
						if ch.Next == 0 {
							break
						}
						if err := c.Do(ctx, "CF.LOADCHUNK", "chunks", ch.Next, ch.Data).Err(); err != nil {
							t.Fatalf("CF.LOADCHUNK at %d: %v", ch.Next, err)
						}
					}
					checkRedis8Filter(t, c, "chunks", fx)
				})
			}
		})
	}
}

// checkRedis8Filter requires key to be a filter of RedisBloom's layout
// with Redis 8's CF.INFO and CF.EXISTS answers.
func checkRedis8Filter(t *testing.T, c *redis.Client, key string, fx *redis8Fixture) {
	t.Helper()
	ctx := context.Background()
	if enc := c.ObjectEncoding(ctx, key).Val(); enc != "redisbloom" {
		t.Errorf("%s: OBJECT ENCODING %q, want redisbloom", key, enc)
	}
	info, err := c.Do(ctx, "CF.INFO", key).Slice()
	if err != nil {
		t.Fatal(err)
	}
	var want []any
	d := json.NewDecoder(bytes.NewReader(fx.Info))
	d.UseNumber()
	if err := d.Decode(&want); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(info) != fmt.Sprint(want) {
		t.Errorf("%s: CF.INFO %v\nRedis 8: %v", key, info, want)
	}
	const batch = 1000
	pipe := c.Pipeline()
	var cmds []*redis.BoolSliceCmd
	for start := 0; start < len(fx.Probes.Items); start += batch {
		items := fx.Probes.Items[start:min(start+batch, len(fx.Probes.Items))]
		args := make([]any, len(items))
		for i, it := range items {
			args[i] = it
		}
		cmds = append(cmds, pipe.CFMExists(ctx, key, args...))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var bad int
	for b, cmd := range cmds {
		for i, got := range cmd.Val() {
			j := b*batch + i
			if got != (fx.Probes.Exists[j] == 1) {
				if bad++; bad <= 3 {
					t.Errorf("%s: CF.EXISTS %s = %v, Redis 8 %d", key, fx.Probes.Items[j], got, fx.Probes.Exists[j])
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d probes differ from Redis 8's", key, bad, len(fx.Probes.Items))
	}
}

// TestRestoreRDBVersions: RESTORE takes a Redis 8 payload at every RDB
// version from 0 to 13, as Redis 8.6.3 does, and answers Redis's error,
// byte for byte as Redis 8.6.3 and 7.0.15 send it, to a newer version or a
// wrong CRC-64. A CRC-64 of 0, which Redis 8.6 takes as "not computed",
// is taken, and refused under redisbloom-compat 2.6 as Redis 7.0 refuses
// it. The value is read from the payload's start, footer included, and
// what follows it is left unread, as both Redis read it.
func TestRestoreRDBVersions(t *testing.T) {
	_, addr := start(t, server.Config{})
	c := client(t, addr)
	ctx := context.Background()
	var small *redis8Fixture
	for _, fx := range loadRedis8Fixtures(t) {
		if fx.Name == "small" {
			small = fx
		}
	}
	if small == nil {
		t.Fatal("no fixture small")
	}
	body := small.Dump[:len(small.Dump)-10]
	footer := func(body []byte, version uint16, crc func([]byte) uint64) string {
		p := binary.LittleEndian.AppendUint16(bytes.Clone(body), version)
		return string(binary.LittleEndian.AppendUint64(p, crc(p)))
	}
	withFooter := func(version uint16, crc func([]byte) uint64) string { return footer(body, version, crc) }
	for v := range uint16(14) {
		key := fmt.Sprint("v", v)
		if err := c.Restore(ctx, key, 0, withFooter(v, crc64Jones)).Err(); err != nil {
			t.Errorf("RESTORE at RDB version %d: %v", v, err)
		}
		if !c.CFExists(ctx, key, "item:0").Val() {
			t.Errorf("RESTORE at RDB version %d: item:0 is not there", v)
		}
	}
	for _, tc := range []struct {
		name    string
		payload string
	}{
		{"version 14", withFooter(14, crc64Jones)},
		{"version 0xffff", withFooter(0xffff, crc64Jones)},
		{"a wrong CRC-64", withFooter(13, func(p []byte) uint64 { return crc64Jones(p) ^ 1 })},
	} {
		// go-redis keeps the text after "-"; Redis 8.6.3 and 7.0.15 both
		// send -ERR DUMP payload version or checksum are wrong\r\n.
		wantErr(t, c.Restore(ctx, "bad", 0, tc.payload).Err(), "ERR DUMP payload version or checksum are wrong")
	}
	wantInt(t, "EXISTS bad", c.Do(ctx, "EXISTS", "bad"), 0)
	// A CRC-64 of 0 is a checksum not computed: Redis 8.6.3 takes it (and
	// reads the value, refusing a damaged one with Bad data format);
	// Redis 7.0.15 refuses it, and so does redisbloom-compat 2.6.
	zero := withFooter(13, func([]byte) uint64 { return 0 })
	if err := c.Restore(ctx, "crc0", 0, zero).Err(); err != nil || !c.CFExists(ctx, "crc0", "item:0").Val() {
		t.Errorf("RESTORE with a CRC-64 of 0: %v; want it restored, as Redis 8 does", err)
	}
	damaged := []byte(zero)
	damaged[1] ^= 0xff // the module type id
	wantErr(t, c.Restore(ctx, "crc0bad", 0, string(damaged)).Err(), "ERR Bad data format")
	// Checked against Redis 8.6.3: junk between the value and the footer,
	// and a module EOF that is the footer's first byte (RDB version 0 and a
	// CRC-64 of 0: a payload cut just before its EOF and ten zero bytes).
	junk := footer(append(bytes.Clone(body), "junk after the value"...), 13, crc64Jones)
	eofInFooter := footer(body[:len(body)-1], 0, func([]byte) uint64 { return 0 })
	for key, p := range map[string]string{"junk": junk, "eof-in-footer": eofInFooter} {
		if err := c.Restore(ctx, key, 0, p).Err(); err != nil || !c.CFExists(ctx, key, "item:0").Val() {
			t.Errorf("RESTORE %s: %v; want it restored, as Redis 8 does", key, err)
		}
	}
	c.ConfigSet(ctx, "redisbloom-compat", "2.6")
	wantErr(t, c.Restore(ctx, "crc0-26", 0, zero).Err(), "ERR DUMP payload version or checksum are wrong")
	if err := c.Restore(ctx, "junk-26", 0, junk).Err(); err != nil {
		t.Errorf("RESTORE junk under redisbloom-compat 2.6: %v; want it restored, as Redis 7.0 reads the value alike", err)
	}
}

// crc64Jones is Redis's CRC-64 (reflected, polynomial 0xad93d23594c935a9,
// initial value 0, no final xor), bit by bit: slow, and written apart from
// the one the server uses.
func crc64Jones(b []byte) uint64 {
	const reflected = 0x95ac9329ac4bc9b5 // 0xad93d23594c935a9, bits reversed
	var crc uint64
	for _, x := range b {
		crc ^= uint64(x)
		for range 8 {
			if crc&1 == 1 {
				crc = crc>>1 ^ reflected
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}
