package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/cuckoohash/cuckoo/filter"
)

const buildHelp = `
Build reads INPUT, one key a line ("-" for stdin), and writes a cuckoo filter
holding its keys to FILE. A key is every byte of its line, spaces and tabs
included, but the line's "\n" or "\r\n" and, on the first line, a UTF-8 byte
order mark (EF BB BF, which Windows editors write). Blank lines are skipped
and a line may hold at most 1 MiB. A key that the filter already reports
present (a repeated key, or rarely a false positive) is not stored again, so
queries answer the same and repeats take no room.

The capacity defaults to the number of keys in INPUT. For a regular file they
are counted in a first pass. Other input (stdin, a pipe) is held in memory to
count it, unless --capacity or --scalable is given: then keys stream straight
into the filter. --capacity is what the filter is sure to hold, not a limit:
its table is rounded up, so it takes keys past --capacity while it has room
(a small one, several times as many). A build fails, and writes nothing, only
when the filter is full: an insert finds no free slot.

FILE is written atomically: to a temporary file in its directory, synced,
then renamed over FILE. FILE may not be INPUT (under any name, or as stdin):
build refuses, and writes nothing. A one-line summary goes to stderr.
`

// scalableStreamCapacity is the initial capacity of a Scalable built from a
// stream of unknown length.
const scalableStreamCapacity = 1 << 16

// progressMinKeys is the input size from which build shows a progress bar on
// a terminal unasked.
const progressMinKeys = 1 << 20

// builder is what build needs of a Filter or a Scalable.
type builder interface {
	InsertUnique(key []byte) (bool, error)
	Len() uint64
	Capacity() uint64
	LoadFactor() float64
	SizeInBytes() uint64
	FalsePositiveRate() float64
	io.WriterTo
}

func runBuild(e *env, args []string) error {
	fs := e.flags(buildHelp)
	out := fs.String("o", "", "write the filter to `FILE` (required)")
	fpr := fs.Float64("fpr", 0.01, "target false-positive `rate`, in (0, 1)")
	capacity := capacityVar(fs, "capacity", "keys the filter is sure to hold (`N`: 1000000, 1_000_000 or 1e6), not a limit; 0 counts INPUT's keys")
	bucketSize := fs.Int("bucket-size", 4, "slots per bucket: 2, 4 or 8")
	bits := fs.Int("fingerprint-bits", 0, "fingerprint width, 4..32; 0 derives it from --fpr")
	seed := fs.Uint64("seed", 0, "hash seed")
	scalable := fs.Bool("scalable", false, "build a Scalable filter that grows past --capacity (its initial size)")
	progress := fs.Bool("progress", false, "show a progress bar on stderr (default: on a terminal, for inputs of over a million keys)")
	if err := e.parse(fs, args, []string{"INPUT"}, 1); err != nil {
		return err
	}
	input := fs.Arg(0)
	switch {
	case *out == "":
		return e.usageErrorf("-o FILE is required")
	case !(*fpr > 0 && *fpr < 1):
		return e.usageErrorf("--fpr %v: the rate must be in (0, 1)", *fpr)
	case *bucketSize != 2 && *bucketSize != 4 && *bucketSize != 8:
		return e.usageErrorf("--bucket-size %d: it must be 2, 4 or 8", *bucketSize)
	case *bits != 0 && (*bits < 4 || *bits > 32):
		return e.usageErrorf("--fingerprint-bits %d: it must be in 4..32", *bits)
	case *bits != 0 && isSet(fs, "fpr"):
		return e.usageErrorf("give --fpr or --fingerprint-bits, not both")
	case *bits != 0 && *scalable:
		return e.usageErrorf("--fingerprint-bits does not apply to --scalable (its slots are sized from --fpr)")
	}
	shape := filter.Config{BucketSize: *bucketSize, FingerprintBits: *bits}
	if *bits == 0 {
		shape.FalsePositiveRate = *fpr
	}
	if err := capacity.check(shape); err != nil {
		return e.usageErrorf("%v", err)
	}

	if err := refuseInputAsOutput(e, *out, input); err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	src, err := openKeys(e, input, capacity.n == 0 && !*scalable)
	if err != nil {
		return err
	}
	defer src.close()
	c := uint64(capacity.n)
	if c == 0 {
		switch {
		case src.total >= 0:
			c = uint64(max(src.total, 1)) // an empty input makes an empty filter
		default:
			c = scalableStreamCapacity
		}
	}
	var b builder
	if *scalable {
		b, err = filter.NewScalable(filter.ScalableConfig{
			InitialCapacity: c, FalsePositiveRate: *fpr, BucketSize: *bucketSize, Seed: *seed,
		})
	} else {
		cfg := filter.Config{Capacity: c, BucketSize: *bucketSize, FingerprintBits: *bits, Seed: *seed}
		if *bits == 0 {
			cfg.FalsePositiveRate = *fpr
		}
		b, err = filter.New(cfg)
	}
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}

	show := *progress
	if !isSet(fs, "progress") {
		show = isTerminal(e.stderr) && (src.total < 0 || src.total >= progressMinKeys)
	}
	bar := newProgress(e.stderr, show, src.total)
	var keys, repeats uint64 // keys stored, and keys that Contains already reported
	for {
		key, err := src.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			bar.abort()
			return fmt.Errorf("build: %s: %w", src.name, err)
		}
		added, err := b.InsertUnique(key)
		if errors.Is(err, filter.ErrFull) {
			bar.abort()
			return fmt.Errorf("build: the filter is full after %s, at %s (capacity %d): "+
				"rerun with a larger --capacity (or without it, to count the keys, or with --scalable)",
				count(keys+repeats, "key", "keys"), src.where(), b.Capacity())
		}
		if err != nil {
			bar.abort()
			return fmt.Errorf("build: %w", err)
		}
		if added {
			keys++
		} else {
			repeats++
		}
		bar.add()
	}
	bar.finish()

	size, err := writeAtomic(*out, b)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	fmt.Fprintf(e.stderr, "%s: %s", *out, count(keys+repeats, "key", "keys"))
	if repeats > 0 {
		fmt.Fprintf(e.stderr, " (%d stored, %d already reported present: repeats or false positives)", keys, repeats)
	}
	fmt.Fprintf(e.stderr, ", load %.1f%%, %s bits/item, expected false-positive rate %s, %d bytes\n",
		100*b.LoadFactor(), bitsPerItem(b.SizeInBytes(), b.Len()), percent(b.FalsePositiveRate()), size)
	return nil
}

// count formats n and the noun, singular for 1: "1 key", "2 keys".
func count[N int | uint64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// bitsPerItem formats the bits of memory per stored key.
func bitsPerItem(bytes, items uint64) string {
	if items == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", 8*float64(bytes)/float64(items))
}

// percent formats a rate with three significant digits.
func percent(r float64) string {
	if r == 0 {
		return "0%"
	}
	digits := max(0, 2-int(math.Floor(math.Log10(100*r))))
	return fmt.Sprintf("%.*f%%", digits, 100*r)
}

// keySource yields the keys of INPUT.
type keySource struct {
	name  string // for messages: the path, or "stdin"
	total int64  // number of keys, or -1 when unknown
	lines *lineReader
	arena *keyArena // the keys, when held in memory
	index int       // next key of arena
	close func()
}

// openKeys opens input ("-" for stdin). It counts the keys of a regular
// file in a first pass; other input it reads into memory when mustCount.
func openKeys(e *env, input string, mustCount bool) (*keySource, error) {
	src := &keySource{name: input, total: -1, close: func() {}}
	var r io.Reader = e.stdin
	if input == "-" {
		src.name = "stdin"
	} else {
		fh, err := os.Open(input)
		if err != nil {
			return nil, fmt.Errorf("build: %w", err)
		}
		src.close = func() { fh.Close() }
		r = fh
		st, err := fh.Stat()
		if err != nil {
			fh.Close()
			return nil, fmt.Errorf("build: %w", err)
		}
		if st.IsDir() {
			fh.Close()
			return nil, fmt.Errorf("build: %s is a directory", input)
		}
		if st.Mode().IsRegular() {
			n, err := countKeys(fh)
			if err == nil {
				_, err = fh.Seek(0, io.SeekStart)
			}
			if err != nil {
				fh.Close()
				return nil, fmt.Errorf("build: %s: %w", input, err)
			}
			src.total = n
			mustCount = false
		}
	}
	src.lines = newLineReader(r)
	if mustCount {
		src.arena = new(keyArena)
		for {
			key, err := src.lines.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				src.close()
				return nil, fmt.Errorf("build: %s: %w", src.name, err)
			}
			src.arena.add(key)
		}
		src.total = int64(src.arena.len())
	}
	return src, nil
}

func countKeys(r io.Reader) (int64, error) {
	lines := newLineReader(r)
	var n int64
	for {
		_, err := lines.next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		n++
	}
}

func (s *keySource) next() ([]byte, error) {
	if s.arena == nil {
		return s.lines.next()
	}
	if s.index == s.arena.len() {
		return nil, io.EOF
	}
	start := 0
	if s.index > 0 {
		start = s.arena.ends[s.index-1]
	}
	s.index++
	return s.arena.data[start:s.arena.ends[s.index-1]], nil
}

// where names the position of the key last returned, for messages.
func (s *keySource) where() string {
	if s.arena != nil {
		return fmt.Sprintf("key %d of %s", s.index, s.name)
	}
	return fmt.Sprintf("%s line %d", s.name, s.lines.line)
}

// writeAtomic writes w to path through a temporary file in the same
// directory, synced before it is renamed over path, so that path holds
// either its old contents or all of the new ones.
// It returns the number of bytes written. Its errors name path, the name
// the user gave, not the temporary file.
func writeAtomic(path string, w io.WriterTo) (n int64, err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return 0, fmt.Errorf("writing %s: %w", path, cause(err))
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("writing %s: %w", path, cause(err))
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if n, err = w.WriteTo(bw); err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return 0, err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return 0, err
	}
	if err = tmp.Sync(); err != nil {
		return 0, err
	}
	if err = tmp.Close(); err != nil {
		return 0, err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return 0, err
	}
	// Make the rename itself durable. Not every system can sync a directory;
	// the data is written either way.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return n, nil
}

// cause strips the file names from err (a *PathError or *LinkError of the
// temporary file), leaving what went wrong, for a message that names the
// user's path instead.
func cause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// checkOutput fails early, before any key is read, when -o cannot name a
// file: it is a directory, or its directory does not exist. Writing it
// reports any other problem (permissions, a full disk).
func checkOutput(out string) error {
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return fmt.Errorf("build: -o %s is a directory: name a file to write the filter to", out)
	}
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("build: -o %s: its directory %s: %w", out, dir, cause(err))
	case !st.IsDir():
		return fmt.Errorf("build: -o %s: %s is not a directory", out, dir)
	}
	return nil
}

// refuseInputAsOutput fails when out is the file the keys are read from
// (input, or stdin for "-"), by file identity, so that symlinks, hard links
// and other names of it count: the rename that installs the filter would
// replace the keys.
func refuseInputAsOutput(e *env, out, input string) error {
	outInfo, err := os.Stat(out)
	if err != nil {
		return nil // no such file yet; writing it reports any other problem
	}
	name := input
	var inInfo os.FileInfo
	if input == "-" {
		f, ok := e.stdin.(*os.File)
		if !ok {
			return nil
		}
		name = "standard input"
		inInfo, err = f.Stat()
	} else {
		inInfo, err = os.Stat(input)
	}
	if err != nil || !os.SameFile(outInfo, inInfo) {
		return nil // opening the input reports its errors
	}
	return fmt.Errorf("build: -o %s is the input file (%s): refusing to replace the keys with the filter; choose another -o", out, name)
}
