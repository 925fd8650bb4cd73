package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/redisbloom"
	"github.com/redis/go-redis/v9"
)

// cuckoo migrate copies cuckoo filters between servers that speak
// RedisBloom's CF.* commands: from Redis 7 with RedisBloom (Redis Stack)
// or Redis 8 (whose cuckoo filters are built in) to cuckoo serve, back, or
// between two cuckoo serves. Redis 8's DUMP payloads carry its RDB version,
// 13, which cuckoo serve's RESTORE takes; cuckoo serve's carry 10, which
// Redis 7.0 and Redis 8 take. Redis 7.0 refuses 13: a payload it refuses
// is sent again as Redis 7.0 writes it (redis7Payload), so filters also
// move from Redis 8 to Redis 7 directly. It finds the source's
// filters with SCAN ... TYPE MBbloomCF and copies each with CF.SCANDUMP and
// CF.LOADCHUNK (an empty filter, which RedisBloom cannot dump in chunks,
// with DUMP and RESTORE), keeping its deadline, while the source keeps
// serving. Each copy is then checked against its source: the same CF.INFO
// item count and the same dump, byte for byte. A key the source changed
// while it was copied is copied again, up to migrateTries times. A key
// the target already holds with the same dump is skipped, so a rerun
// copies only what is missing or failed; one it holds with another dump is
// reported and left alone unless --replace.
//
// RedisBloom loads only filters of RedisBloom's layout: a key of cuckoo
// serve's own layout (OBJECT ENCODING growing, fixed or chain) is refused,
// with the reason, when the target is not cuckoo serve.

// migrateTries bounds the copies of one key that its source changed while
// it was being copied.
const migrateTries = 3

type migrateOptions struct {
	from, to, match string
	dryRun, replace bool
	progress        bool
	admin           *clusterAdmin
}

const migrateHelp = `
Copies cuckoo filters from one server to another: from Redis 7 with
RedisBloom (Redis Stack) or Redis 8 (cuckoo filters built in) to cuckoo
serve, back (filters of RedisBloom's layout: cuckoo serve --cf-layout
redisbloom, or loaded from RedisBloom), or between two cuckoo serves.
The source keeps serving meanwhile. Each key goes with CF.SCANDUMP and
CF.LOADCHUNK (an empty one with DUMP and RESTORE) with its deadline, and
is then checked against its source: the same item count and the same
dump, byte for byte. A rerun skips the keys already copied. The same
credentials and TLS settings are used on both servers.

  cuckoo migrate --from redis-stack:6379 --to 127.0.0.1:6379 --dry-run
  cuckoo migrate --from redis-stack:6379 --to 127.0.0.1:6379      # Redis 7 with RedisBloom
  cuckoo migrate --from redis8:6379 --to 127.0.0.1:6379           # Redis 8
  cuckoo migrate --from 127.0.0.1:6379 --to redis8:6379 --match 'rb:*'   # and back`

func runMigrate(e *env, args []string) error {
	fs := e.flags(migrateHelp)
	o := migrateOptions{}
	fs.StringVar(&o.from, "from", "", "the source server, `HOST:PORT` (Redis 7 with RedisBloom, Redis 8, or cuckoo serve)")
	fs.StringVar(&o.to, "to", "127.0.0.1:6379", "the target server, `HOST:PORT`")
	fs.StringVar(&o.match, "match", "*", "copy only the keys matching this `pattern` (SCAN's MATCH)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "list what would be copied and skipped; write nothing")
	fs.BoolVar(&o.replace, "replace", false, "replace a target key that holds another filter (default: report it and leave it)")
	fs.BoolVar(&o.progress, "progress", true, "show a progress bar on a terminal")
	o.admin = adminFlags(fs)
	fs.StringVar(&o.admin.password, "pass", "", "the same as --password, as redis-cli names it")
	if err := e.parse(fs, args, nil, 0); err != nil {
		return err
	}
	if o.from == "" {
		return e.usageErrorf("--from HOST:PORT is required")
	}
	if _, err := o.admin.tlsConfig(); err != nil {
		return e.usageErrorf("%v", err)
	}
	defer o.admin.close()
	o.admin.timeout = time.Minute // a 16 MiB chunk on a slow link
	sum, err := migrate(context.Background(), e.stderr, o)
	fmt.Fprintln(e.stdout, sum)
	return err
}

// migrateSummary is what a migration did.
type migrateSummary struct {
	copied, skipped, failed, refused int
	items, bytes                     int64
	took                             time.Duration
	dryRun                           bool
}

func (s migrateSummary) String() string {
	verb := "copied"
	if s.dryRun {
		verb = "would copy"
	}
	return fmt.Sprintf("%s %d keys (%d items, %s of filters), skipped %d already there, %d refused, %d failed, in %s",
		verb, s.copied, s.items, humanBytes(s.bytes), s.skipped, s.refused, s.failed, s.took.Round(time.Millisecond))
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// migrate copies o.from's filters to o.to, reporting each key it could not
// copy on log, and returns the summary; an error if any key failed.
func migrate(ctx context.Context, log io.Writer, o migrateOptions) (migrateSummary, error) {
	start := time.Now()
	sum := migrateSummary{dryRun: o.dryRun}
	src, dst := o.admin.client(o.from), o.admin.client(o.to)
	if err := src.Ping(ctx).Err(); err != nil {
		return sum, fmt.Errorf("migrate: --from %s: %w", o.from, err)
	}
	if err := dst.Ping(ctx).Err(); err != nil {
		return sum, fmt.Errorf("migrate: --to %s: %w", o.to, err)
	}
	toCuckoo := isCuckooServe(ctx, dst)
	keys, err := scanFilters(ctx, src, o.match)
	if err != nil {
		return sum, fmt.Errorf("migrate: SCAN of %s: %w", o.from, err)
	}
	bar := newProgress(log, o.progress && isTerminal(log), "copying", int64(len(keys)), false)
	for i, k := range keys {
		m := &keyMigration{ctx: ctx, src: src, dst: dst, key: k, replace: o.replace, dryRun: o.dryRun, toCuckoo: toCuckoo}
		outcome, err := m.run()
		switch outcome {
		case keyCopied:
			sum.copied++
			sum.items += m.items
			sum.bytes += m.bytes
		case keySkipped:
			sum.skipped++
		case keyRefused:
			sum.refused++
			fmt.Fprintf(log, "cuckoo migrate: %q: %v\n", k, err)
		case keyGone:
			// Deleted or expired on the source meanwhile: nothing to copy.
		default:
			sum.failed++
			fmt.Fprintf(log, "cuckoo migrate: %q: %v\n", k, err)
		}
		bar.tick(int64(i + 1))
	}
	bar.finish()
	sum.took = time.Since(start)
	if sum.failed > 0 || sum.refused > 0 {
		return sum, exitStatus(exitError)
	}
	return sum, nil
}

// isCuckooServe reports whether c is cuckoo serve, which loads both
// layouts: its INFO names its version.
func isCuckooServe(ctx context.Context, c *redis.Client) bool {
	info, err := c.Info(ctx, "server").Result()
	return err == nil && strings.Contains(info, "cuckoo_version:")
}

// scanFilters lists the source's cuckoo filters matching pattern.
func scanFilters(ctx context.Context, c *redis.Client, pattern string) ([]string, error) {
	var keys []string
	seen := map[string]bool{} // SCAN may return a key twice
	for cursor := uint64(0); ; {
		batch, next, err := c.ScanType(ctx, cursor, pattern, 1000, "MBbloomCF").Result()
		if err != nil {
			return nil, err
		}
		for _, k := range batch {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		if next == 0 {
			return keys, nil
		}
		cursor = next
	}
}

type keyOutcome int

const (
	keyFailed keyOutcome = iota
	keyCopied
	keySkipped
	keyRefused
	keyGone
)

// keyMigration copies one key.
type keyMigration struct {
	ctx             context.Context
	src, dst        *redis.Client
	key             string
	replace, dryRun bool
	toCuckoo        bool
	items, bytes    int64 // of the copy
}

// dumped is a filter's whole CF.SCANDUMP: its chunks and the iterators
// that load them; none for an empty filter.
type dumped struct {
	iters  []int64
	chunks [][]byte
}

func (d dumped) equal(e dumped) bool {
	if len(d.chunks) != len(e.chunks) {
		return false
	}
	for i := range d.chunks {
		if d.iters[i] != e.iters[i] || !bytes.Equal(d.chunks[i], e.chunks[i]) {
			return false
		}
	}
	return true
}

func (d dumped) size() (n int64) {
	for _, c := range d.chunks {
		n += int64(len(c))
	}
	return n
}

func readDump(ctx context.Context, c *redis.Client, key string) (dumped, error) {
	var d dumped
	for iter := int64(0); ; {
		r, err := c.Do(ctx, "CF.SCANDUMP", key, iter).Slice()
		if err != nil {
			return d, err
		}
		if len(r) != 2 {
			return d, fmt.Errorf("CF.SCANDUMP answered %d elements", len(r))
		}
		next, _ := r[0].(int64)
		if next == 0 {
			return d, nil
		}
		data, ok := r[1].(string)
		if !ok {
			return d, fmt.Errorf("CF.SCANDUMP answered no chunk at iterator %d", iter)
		}
		d.iters, d.chunks = append(d.iters, next), append(d.chunks, []byte(data))
		iter = next
	}
}

// itemsOf is CF.INFO's "Number of items inserted".
func itemsOf(ctx context.Context, c *redis.Client, key string) (int64, error) {
	info, err := c.CFInfo(ctx, key).Result()
	return info.NumItemsInserted, err
}

func (m *keyMigration) run() (keyOutcome, error) {
	ctx := m.ctx
	if !m.toCuckoo {
		enc, err := m.src.ObjectEncoding(ctx, m.key).Result()
		if errors.Is(err, redis.Nil) {
			return keyGone, nil
		}
		if err == nil && (enc == "growing" || enc == "fixed" || enc == "chain") {
			return keyRefused, fmt.Errorf("a filter of cuckoo serve's own layout (OBJECT ENCODING %s), which RedisBloom cannot load: only filters made with cf-layout redisbloom, or loaded from RedisBloom, can move to Redis", enc)
		}
	}
	var lastErr error
	for range migrateTries {
		src, err := readDump(ctx, m.src, m.key)
		if err != nil {
			if isNotFound(err) {
				return keyGone, nil
			}
			return keyFailed, fmt.Errorf("reading the source: %w", err)
		}
		have, err := m.dst.Exists(ctx, m.key).Result()
		if err != nil {
			return keyFailed, fmt.Errorf("the target: %w", err)
		}
		if have == 1 {
			dst, err := readDump(ctx, m.dst, m.key)
			if err == nil && dst.equal(src) && (len(src.chunks) > 0 || m.sameFigures()) {
				return keySkipped, nil
			}
			if !m.replace {
				return keyFailed, errors.New("the target holds another value under this key (--replace replaces it)")
			}
		}
		m.items, _ = itemsOf(ctx, m.src, m.key)
		m.bytes = src.size()
		if m.dryRun {
			return keyCopied, nil
		}
		if err := m.copy(src, have == 1); err != nil {
			return keyFailed, err
		}
		ok, err := m.check()
		if err != nil {
			return keyFailed, fmt.Errorf("checking the copy: %w", err)
		}
		if ok {
			return keyCopied, nil
		}
		lastErr = errors.New("the source changed while the key was copied")
	}
	return keyFailed, fmt.Errorf("%w, %d times: try again when it is quieter", lastErr, migrateTries)
}

// copy writes src's dump (or, for an empty filter, its DUMP payload) under
// the key on the target, then its deadline.
func (m *keyMigration) copy(src dumped, replace bool) error {
	ctx := m.ctx
	if replace {
		if err := m.dst.Del(ctx, m.key).Err(); err != nil {
			return fmt.Errorf("the target: DEL: %w", err)
		}
	}
	if len(src.chunks) == 0 {
		payload, err := m.src.Dump(ctx, m.key).Result()
		if err != nil {
			return fmt.Errorf("reading the source: DUMP: %w", err)
		}
		err = m.dst.Restore(ctx, m.key, 0, payload).Err()
		if err != nil && !m.toCuckoo {
			if older, ok := redis7Payload([]byte(payload)); ok {
				err = m.dst.Restore(ctx, m.key, 0, older).Err()
			}
		}
		if err != nil {
			return fmt.Errorf("the target: RESTORE: %w", err)
		}
	} else {
		for i, chunk := range src.chunks {
			if err := m.dst.Do(ctx, "CF.LOADCHUNK", m.key, src.iters[i], chunk).Err(); err != nil {
				return fmt.Errorf("the target: CF.LOADCHUNK at iterator %d: %w", src.iters[i], err)
			}
		}
	}
	at, err := m.src.PExpireTime(ctx, m.key).Result()
	if err != nil {
		return fmt.Errorf("reading the source: PEXPIRETIME: %w", err)
	}
	if at > 0 {
		if err := m.dst.PExpireAt(ctx, m.key, time.UnixMilli(int64(at/time.Millisecond))).Err(); err != nil {
			return fmt.Errorf("the target: PEXPIREAT: %w", err)
		}
	}
	return nil
}

// sameFigures reports whether the source's and the target's CF.DEBUG lines
// are the same: what tells two empty filters apart, which dump nothing.
func (m *keyMigration) sameFigures() bool {
	a, err := m.src.Do(m.ctx, "CF.DEBUG", m.key).Text()
	if err != nil {
		return false
	}
	b, err := m.dst.Do(m.ctx, "CF.DEBUG", m.key).Text()
	return err == nil && a == b
}

// check compares the copy with its source: item count and dump (for an
// empty filter, its figures).
func (m *keyMigration) check() (bool, error) {
	ctx := m.ctx
	a, err := readDump(ctx, m.src, m.key)
	if err != nil {
		return false, err
	}
	b, err := readDump(ctx, m.dst, m.key)
	if err != nil {
		return false, err
	}
	ia, err := itemsOf(ctx, m.src, m.key)
	if err != nil {
		return false, err
	}
	ib, err := itemsOf(ctx, m.dst, m.key)
	if err != nil {
		return false, err
	}
	return ia == ib && a.equal(b) && (len(a.chunks) > 0 || m.sameFigures()), nil
}

// isNotFound reports RedisBloom's and cuckoo serve's answer for a missing
// key.
func isNotFound(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "not found")
}

// redis7Payload returns a RedisBloom filter's DUMP payload of Redis 8 (RDB
// version 13 in its footer, which Redis 7.0 refuses) as Redis 7.0 writes
// it: the same filter, at version 10, which every Redis from 7.0 reads.
// The body is the same bytes at either version, but its CRC-64 covers the
// version, and package redisbloom writes it: the filter is parsed and
// written again, its slots held meanwhile (an empty filter's, the only one
// that goes by DUMP and RESTORE, are zeros), up to
// redisbloom.DefaultMaxBytes. ok is false for a payload of version 10 or
// older, or one that is not a RedisBloom filter's: the target's refusal
// stands.
func redis7Payload(p []byte) (older string, ok bool) {
	if len(p) < 10 || binary.LittleEndian.Uint16(p[len(p)-10:]) <= 10 {
		return "", false
	}
	f, err := redisbloom.ParsePayload(p, nil)
	if err != nil {
		return "", false
	}
	return string(f.AppendPayload(nil)), true
}
