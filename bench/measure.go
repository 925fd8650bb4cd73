package bench

import "time"

// Stats are the figures of a filter that holds n keys; see the package
// documentation for what each means.
type Stats struct {
	N           int
	BitsPerItem float64
	Load        float64
	FPR         float64 // measured on RateKeys
	FNR         float64 // inserted keys not found, over n
	Failed      int     // inserts that reported failure
}

// Fill returns a filter of impl holding keys: a dynamic filter filled by
// inserting them in order into a new filter, a static one built from them.
// It also returns the number of inserts that failed.
func Fill(impl Impl, keys Keys) (f Filter, failed int, err error) {
	f, failed, _, err = TimedFill(impl, keys)
	return f, failed, err
}

// TimedFill is Fill that also returns the time the inserts (or the build)
// took. A dynamic filter is Reset before the clock starts, so that mapping
// its fresh memory is not counted for one library and not another.
func TimedFill(impl Impl, keys Keys) (Filter, int, time.Duration, error) {
	if impl.Static() {
		start := time.Now()
		f, err := impl.Build(keys)
		return f, 0, time.Since(start), err
	}
	f := impl.New(keys.Len())
	f.Reset()
	start := time.Now()
	failed := f.InsertRange(keys, 0, keys.Len())
	return f, failed, time.Since(start), nil
}

// Measure returns the Stats of f, which holds present (failed of whose
// inserts failed), measuring its false-positive rate on rate. It looks up
// every present key.
func Measure(f Filter, present, rate Keys, failed int) Stats {
	n := present.Len()
	return Stats{
		N:           n,
		BitsPerItem: float64(f.SizeBits()) / float64(n),
		Load:        f.Load(),
		FPR:         float64(CountKeys(f, rate)) / float64(rate.Len()),
		FNR:         float64(n-CountKeys(f, present)) / float64(n),
		Failed:      failed,
	}
}

// CountKeys returns how many of keys f reports present.
func CountKeys(f Filter, keys Keys) (hits int) {
	const chunk = 4096
	buf := make([][]byte, chunk)
	for lo := 0; lo < keys.Len(); lo += chunk {
		hi := min(lo+chunk, keys.Len())
		for i := lo; i < hi; i++ {
			buf[i-lo] = keys.At(i)
		}
		hits += f.CountHits(buf[:hi-lo])
	}
	return hits
}
