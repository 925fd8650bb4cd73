package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/cuckoohash/cuckoo/filter"
)

const buildHelp = `
Build reads INPUT, one key a line ("-" for stdin), and writes a cuckoo filter
holding its keys to FILE. A key is every byte of its line, spaces and tabs
included, but the line's "\n" or "\r\n" and, on the first line, a UTF-8 byte
order mark (EF BB BF, which Windows editors write). Blank lines are skipped
and a line may hold at most 1 MiB.

Every distinct key of INPUT is stored once. A key listed again, anywhere, is
skipped: one delete of it (CF.DEL, filter.Delete) leaves it absent. A key the
filter would answer present before it is stored (a false positive of another
key) is stored all the same, so deleting either key never makes the other
answer absent. Build tells keys apart by a 128-bit hash of each (two distinct
keys share one with odds below 10^-20 for a billion keys): it holds 16 bytes
a key read, repeats included (160 MB for ten million), not the keys, then
sorts them.

The capacity defaults to the number of distinct keys that INPUT holds.
--capacity is what the filter is sure to hold, not a limit: its table is
rounded up, so it takes keys past --capacity while it has room (a small
one, several times as many). A build fails, and writes nothing, only
when the filter is full: an insert finds no free slot.

FILE is written atomically: to a temporary file in its directory, created
before any key is read, synced, then renamed over FILE. An error, SIGINT
(Ctrl-C), SIGTERM or SIGHUP removes the temporary file and leaves FILE as it
was; a signal then ends build as it would have without the handler (exit
status 130, 143 or 129 in a shell). FILE may not be INPUT (under any name, or
as stdin): build refuses, and writes nothing. A one-line summary goes to
stderr: the keys stored and, if INPUT repeats any, the keys read and the
repeats skipped.
`

// progressMinBytes is the input size from which build shows a progress bar
// on a terminal unasked: about a million keys of 32 bytes.
const progressMinBytes = 32 << 20

// reserveAfter is the number of keys read from a file after which build
// estimates how many keys the file holds, to make room for them at once.
const reserveAfter = 1 << 16

// availableMemory returns the memory the system can give a process without
// swapping (Linux's MemAvailable), and whether it knows.
var availableMemory = func() (uint64, bool) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			var kb uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb << 10, true
			}
		}
	}
	return 0, false
}

// fitsInMemory returns an error if the table cfg describes is larger than
// the memory available: allocating it would end the process with the Go
// runtime's out-of-memory crash (or swap), not an error.
func fitsInMemory(cfg filter.Config) error {
	lay, err := cfg.Layout()
	if err != nil {
		return nil // filter.New says what is wrong
	}
	if avail, ok := availableMemory(); ok && lay.TableBytes() > avail {
		return fmt.Errorf("a filter of capacity %d takes %s, more than the %s of memory available: lower --capacity",
			cfg.Capacity, humanBytes(int64(lay.TableBytes())), humanBytes(int64(avail)))
	}
	return nil
}

// packings are --packing's values.
var packings = map[string]filter.Packing{
	"auto":        filter.PackingAuto,
	"plain":       filter.PackingPlain,
	"semi-sorted": filter.PackingSemiSorted,
	"ranked":      filter.PackingRanked,
}

// builder is what build needs of a Filter or a Scalable.
type builder interface {
	InsertHash(h uint64) error
	Len() uint64
	Capacity() uint64
	LoadFactor() float64
	SizeInBytes() uint64
	FalsePositiveRate() float64
	io.WriterTo
}

// buildOptions are build's flags and INPUT, checked.
type buildOptions struct {
	out, input string
	fpr        float64
	capacity   uint64 // 0: fit INPUT's distinct keys
	bucketSize int
	bits       int
	packing    filter.Packing
	seed       uint64
	scalable   bool
	// progress is --progress, and progressSet whether it was given: unasked,
	// a bar shows on a terminal for a large or unknown input.
	progress, progressSet bool
}

func runBuild(e *env, args []string) error {
	o, err := parseBuildFlags(e, args)
	if err != nil {
		return err
	}
	if err := refuseInputAsOutput(e, o.out, o.input); err != nil {
		return err
	}
	if err := checkOutput(o.out); err != nil {
		return err
	}
	in, err := openInput(e, o.input)
	if err != nil {
		return err
	}
	defer in.close()
	// The temporary file that becomes FILE exists from here on: a directory
	// that cannot take it fails the build before any key is read, and it is
	// removed on every way out but success, SIGINT, SIGTERM and SIGHUP
	// included.
	tmp, err := createAtomic(o.out)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	defer tmp.discard()

	show := o.progress
	if !o.progressSet {
		show = isTerminal(e.stderr) && (in.size < 0 || in.size >= progressMinBytes)
	}
	bar := newProgress(e.stderr, show, "reading", in.size, in.size >= 0)
	keys, err := readKeys(in, o.seed, bar)
	if err != nil {
		bar.abort()
		return fmt.Errorf("build: %s: %w", in.name, err)
	}
	bar.finish()
	distinct := keys.sort()

	c := o.capacity
	if c == 0 {
		c = max(distinct, 1) // an empty input makes an empty filter
	}
	b, err := newBuilder(o, c)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	bar = newProgress(e.stderr, show, "inserting", int64(distinct), false)
	if err := insertKeys(b, keys, distinct, bar); err != nil {
		return err
	}
	size, err := tmp.commit(b)
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	printBuildSummary(e, o.out, in.name, keys.read, distinct, b, size)
	return nil
}

// parseBuildFlags parses build's flags and INPUT and checks them, before
// any file is touched.
func parseBuildFlags(e *env, args []string) (*buildOptions, error) {
	fs := e.flags(buildHelp)
	out := fs.String("o", "", "write the filter to `FILE` (required)")
	fpr := fs.Float64("fpr", 0.01, "target false-positive `rate`, in (0, 1)")
	capacity := capacityVar(fs, "capacity", "keys the filter is sure to hold (`N`: 1000000, 1_000_000 or 1e6), not a limit; 0 fits INPUT's distinct keys")
	bucketSize := fs.Int("bucket-size", 0, "slots per bucket: 2, 4 or 8; 0 chooses: the smallest layout that meets --fpr (4 with --fingerprint-bits or --scalable)")
	packingName := fs.String("packing", "auto", "how buckets are stored: plain, semi-sorted (4 slots, a bit a key less, slower lookups), ranked (4 slots, fingerprints of a fractional number of bits, for --fpr only) or auto (the smallest for --fpr; plain with --bucket-size or --fingerprint-bits)")
	bits := fs.Int("fingerprint-bits", 0, "fingerprint width, 4..32; 0 derives it from --fpr")
	seed := fs.Uint64("seed", 0, "hash seed")
	scalable := fs.Bool("scalable", false, "build a Scalable filter that grows past --capacity (its initial size)")
	progress := fs.Bool("progress", false, "show a progress bar on stderr (default: on a terminal, for a pipe or a file of over 32 MiB)")
	if err := e.parse(fs, args, []string{"INPUT"}, 1); err != nil {
		return nil, err
	}
	switch {
	case *out == "":
		return nil, e.usageErrorf("-o FILE is required")
	case !(*fpr > 0 && *fpr < 1):
		return nil, e.usageErrorf("--fpr %v: the rate must be in (0, 1)", *fpr)
	case *bucketSize != 0 && *bucketSize != 2 && *bucketSize != 4 && *bucketSize != 8:
		return nil, e.usageErrorf("--bucket-size %d: it must be 2, 4 or 8 (or 0 to choose)", *bucketSize)
	case *bits != 0 && (*bits < 4 || *bits > 32):
		return nil, e.usageErrorf("--fingerprint-bits %d: it must be in 4..32", *bits)
	case *bits != 0 && isSet(fs, "fpr"):
		return nil, e.usageErrorf("give --fpr or --fingerprint-bits, not both")
	case *bits != 0 && *scalable:
		return nil, e.usageErrorf("--fingerprint-bits does not apply to --scalable (its slots are sized from --fpr)")
	}
	packing, ok := packings[*packingName]
	switch {
	case !ok:
		return nil, e.usageErrorf("--packing %q: it must be auto, plain, semi-sorted or ranked", *packingName)
	case *scalable && packing != filter.PackingAuto:
		return nil, e.usageErrorf("--packing does not apply to --scalable (its slots hold a fingerprint and a tail)")
	}
	shape := filter.Config{BucketSize: *bucketSize, FingerprintBits: *bits, Packing: packing}
	if *scalable && shape.BucketSize == 0 {
		shape.BucketSize = 4 // a Scalable's default; its limit is the 4-slot table's
	}
	if *bits == 0 {
		shape.FalsePositiveRate = *fpr
	}
	if err := capacity.check(shape); err != nil {
		return nil, e.usageErrorf("%v", err)
	}
	return &buildOptions{
		out: *out, input: fs.Arg(0), fpr: *fpr, capacity: uint64(capacity.n), bucketSize: *bucketSize,
		bits: *bits, packing: packing, seed: *seed, scalable: *scalable,
		progress: *progress, progressSet: isSet(fs, "progress"),
	}, nil
}

// newBuilder makes the empty filter of o's shape for c keys: a Scalable, or
// a Filter if the memory available holds its table.
func newBuilder(o *buildOptions, c uint64) (builder, error) {
	if o.scalable {
		return filter.NewScalable(filter.ScalableConfig{
			InitialCapacity: c, FalsePositiveRate: o.fpr, BucketSize: o.bucketSize, Seed: o.seed,
		})
	}
	cfg := filter.Config{Capacity: c, BucketSize: o.bucketSize, FingerprintBits: o.bits, Packing: o.packing, Seed: o.seed}
	if o.bits == 0 {
		cfg.FalsePositiveRate = o.fpr
	}
	if err := fitsInMemory(cfg); err != nil {
		return nil, err
	}
	return filter.New(cfg)
}

// insertKeys inserts the distinct keys into b, ticking bar; a full filter
// is an error that says how far it got and what to rerun with.
func insertKeys(b builder, keys *distinctKeys, distinct uint64, bar *progress) error {
	var stored uint64
	err := keys.each(func(h uint64) error {
		if err := b.InsertHash(h); err != nil {
			return err
		}
		stored++
		bar.tick(int64(stored))
		return nil
	})
	if errors.Is(err, filter.ErrFull) {
		bar.abort()
		return fmt.Errorf("build: the filter is full after %d of %s (capacity %d): "+
			"rerun with a larger --capacity (or without it, to fit the keys, or with --scalable)",
			stored, count(distinct, "key", "keys"), b.Capacity())
	}
	if err != nil {
		bar.abort()
		return fmt.Errorf("build: %w", err)
	}
	bar.finish()
	return nil
}

// printBuildSummary writes build's one-line summary of the filter written
// to out (size bytes) to stderr, and a warning if input held no keys.
func printBuildSummary(e *env, out, input string, read, distinct uint64, b builder, size int64) {
	fmt.Fprintf(e.stderr, "%s: %s", out, count(distinct, "key", "keys"))
	if repeats := read - distinct; repeats > 0 {
		fmt.Fprintf(e.stderr, " (%d read, %s skipped)", read, count(repeats, "repeat", "repeats"))
	}
	fmt.Fprintf(e.stderr, ", load %.1f%%, %s bits/item, expected false-positive rate %s, %d bytes\n",
		100*b.LoadFactor(), bitsPerItem(b.SizeInBytes(), b.Len()), percent(b.FalsePositiveRate()), size)
	if distinct == 0 {
		// Not an error (an empty filter is a filter), but rarely meant.
		fmt.Fprintf(e.stderr, "cuckoo: build: warning: %s holds no keys: %s is an empty filter, which answers every query \"absent\"\n", input, out)
	}
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

// input is INPUT, opened: a file or stdin. It counts the bytes read, for the
// progress bar.
type input struct {
	name  string // for messages: the path, or "stdin"
	size  int64  // bytes, or -1 when unknown (a pipe, a terminal)
	r     io.Reader
	n     int64 // bytes read so far
	close func()
}

func (in *input) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	in.n += int64(n)
	return n, err
}

// readKeys reads the keys of in, one a line, and returns their identities.
func readKeys(in *input, seed uint64, bar *progress) (*distinctKeys, error) {
	keys := newDistinctKeys(seed)
	lines := newLineReader(in)
	var keyBytes uint64 // the bytes of the keys read, with a newline each
	for {
		key, err := lines.next()
		if err == io.EOF {
			return keys, nil
		}
		if err != nil {
			return nil, err
		}
		keys.add(key)
		keyBytes += uint64(len(key)) + 1
		if keys.read == reserveAfter && in.size > 0 {
			// Estimate the number of keys from the average so far, with a
			// tenth more, as the bins take twice their size if they grow.
			keys.reserve(uint64(1.1 * float64(in.size) / float64(keyBytes) * reserveAfter))
		}
		if in.size >= 0 {
			bar.tick(in.n)
		} else {
			bar.tick(int64(keys.read))
		}
	}
}

// openInput opens path ("-" for stdin).
func openInput(e *env, path string) (*input, error) {
	in := &input{name: path, size: -1, r: e.stdin, close: func() {}}
	if path == "-" {
		in.name = "stdin"
		if f, ok := e.stdin.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
				in.size = st.Size()
			}
		}
		return in, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("build: %w", err)
	}
	if st.IsDir() {
		fh.Close()
		return nil, fmt.Errorf("build: %s is a directory", path)
	}
	if st.Mode().IsRegular() {
		in.size = st.Size()
	}
	in.r, in.close = fh, func() { fh.Close() }
	return in, nil
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
