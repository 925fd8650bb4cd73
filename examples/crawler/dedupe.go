package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/cuckoohash/cuckoo/filter"
)

// defaultMaxURL is the longest line read by default (-max-url): 1 MiB,
// far beyond any URL a browser or server accepts, so that a longer line is
// most likely a file that is not one URL a line.
const defaultMaxURL = 1 << 20

// maxMaxURL bounds -max-url: a line is held whole in memory.
const maxMaxURL = 1 << 30

// fprBlock is how many lines share one reading of the filter's expected
// false-positive rate, which changes slowly as the filter fills.
const fprBlock = 1024

// filterPass is the frontier's de-duplication with a Scalable cuckoo filter.
type filterPass struct {
	lines  int
	unique int     // URLs the filter answered "new" for, and were inserted
	seen   *bitset // line i: the filter answered "already seen"
	// fpr[i/fprBlock] is the filter's expected false-positive rate while
	// line i was looked up.
	fpr         []float64
	stages      int    // doublings of the table, plus one
	buckets     uint64 // the table's buckets at the end
	slotBits    int
	bytes       uint64 // SizeInBytes
	heapBytes   int64  // what the heap grew by while the filter was built
	expectedFPR float64
	elapsed     time.Duration
}

// dedupeFilter streams the URLs of path through a new Scalable filter: a URL
// it may contain is skipped as seen, the others are inserted (InsertUnique
// does both in one call), as a crawler's frontier does before enqueueing.
func dedupeFilter(path string, cfg filter.ScalableConfig, maxURL int) (*filterPass, error) {
	p := &filterPass{seen: new(bitset)}
	sc, f, err := scanner(path, maxURL)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	before := heapAlloc()
	start := time.Now()
	s, err := filter.NewScalable(cfg)
	if err != nil {
		return nil, err
	}
	for sc.Scan() {
		if p.lines%fprBlock == 0 {
			p.fpr = append(p.fpr, s.FalsePositiveRate())
		}
		if len(sc.Bytes()) > maxURL {
			return nil, errTooLong(path, p.lines+1, maxURL)
		}
		inserted, err := s.InsertUnique(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", p.lines+1, err)
		}
		if inserted {
			p.unique++
		} else {
			p.seen.set(p.lines)
		}
		p.lines++
	}
	if err := scanErr(sc, path, p.lines, maxURL); err != nil {
		return nil, err
	}
	p.elapsed = time.Since(start)
	// The heap grew by the filter and by this pass's own records.
	p.heapBytes = heapAlloc() - before - int64(8*cap(p.seen.words)+8*cap(p.fpr))
	p.bytes = s.SizeInBytes()
	p.stages, p.buckets, p.slotBits = s.Stages(), s.Buckets(), s.SlotBits()
	p.expectedFPR = s.FalsePositiveRate()
	runtime.KeepAlive(s)
	runtime.KeepAlive(sc) // live across both measurements: it is not part of the filter
	return p, nil
}

// mapPass is the exact de-duplication with a map, checked against the filter's.
type mapPass struct {
	lines     int
	unique    int
	heapBytes int64 // what the heap grew by while the map was built
	// wronglySkipped counts new URLs that the filter answered "already seen"
	// for: its false positives, pages the crawl would never fetch.
	wronglySkipped int
	// expectedSkipped is the sum of the filter's expected false-positive
	// rate over the new URLs: the mean of wronglySkipped.
	expectedSkipped float64
	// missedRepeats counts URLs seen before that the filter answered "new"
	// for: false negatives, which a cuckoo filter never gives.
	missedRepeats int
	elapsed       time.Duration
}

// dedupeMap streams the URLs of path through a map[string]struct{}, the exact
// answer, and compares each with the filter pass's. The map's memory is what
// the live heap grew by, after a GC, from before the first URL to after the
// last, with the map still reachable: the map's table and the URL strings
// it keeps.
func dedupeMap(path string, fp *filterPass, maxURL int) (*mapPass, error) {
	p := &mapPass{}
	sc, f, err := scanner(path, maxURL)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	before := heapAlloc()
	start := time.Now()
	seen := map[string]struct{}{}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) > maxURL {
			return nil, errTooLong(path, p.lines+1, maxURL)
		}
		filterSeen := fp.seen.get(p.lines)
		if _, ok := seen[string(line)]; ok {
			if !filterSeen {
				p.missedRepeats++
			}
		} else {
			seen[string(line)] = struct{}{}
			p.unique++
			p.expectedSkipped += fp.fpr[p.lines/fprBlock]
			if filterSeen {
				p.wronglySkipped++
			}
		}
		p.lines++
	}
	if err := scanErr(sc, path, p.lines, maxURL); err != nil {
		return nil, err
	}
	p.elapsed = time.Since(start)
	p.heapBytes = heapAlloc() - before
	runtime.KeepAlive(seen)
	runtime.KeepAlive(sc)
	return p, nil
}

// scanner reads path a line at a time, lines of up to maxURL bytes.
func scanner(path string, maxURL int) (*bufio.Scanner, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	sc := bufio.NewScanner(f)
	// +2: room for the line's "\r\n", which the scanner holds with it; a
	// line of maxURL+1 bytes then fits too, and the loops refuse it.
	sc.Buffer(make([]byte, 0, min(64<<10, maxURL+2)), maxURL+2)
	return sc, f, nil
}

// scanErr is sc's error after lines lines of path were read, in the user's
// terms: a line over the limit is named, with the limit and the flag that
// raises it, rather than bufio's "token too long".
func scanErr(sc *bufio.Scanner, path string, lines, maxURL int) error {
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return errTooLong(path, lines+1, maxURL)
	}
	return err
}

// errTooLong says that line of path is longer than maxURL bytes.
func errTooLong(path string, line, maxURL int) error {
	return fmt.Errorf("%s: line %d is longer than %d bytes, the longest URL read (-max-url raises it)", path, line, maxURL)
}

// heapAlloc returns the bytes of live heap objects, after two collections
// (the second frees what finalizers of the first released).
func heapAlloc() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// bitset is a growing set of line numbers.
type bitset struct{ words []uint64 }

func (b *bitset) set(i int) {
	for i/64 >= len(b.words) {
		b.words = append(b.words, 0)
	}
	b.words[i/64] |= 1 << (i % 64)
}

func (b *bitset) get(i int) bool {
	return i/64 < len(b.words) && b.words[i/64]&(1<<(i%64)) != 0
}
