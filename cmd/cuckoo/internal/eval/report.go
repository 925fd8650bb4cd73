package eval

import (
	"fmt"
	"io"
	"math"
	"time"
)

// The Write functions render an experiment's rows as a markdown section.

func fnum(x float64, prec int) string {
	if math.IsNaN(x) {
		return "–"
	}
	return fmt.Sprintf("%.*f", prec, x)
}

// WriteProbes renders the probe experiment.
func WriteProbes(w io.Writer, rows []ProbeRow, slots, lookups int) {
	fmt.Fprintf(w, "## Key comparisons per lookup vs load factor\n\n")
	fmt.Fprintf(w, "Tables of about %d slots (chaining: %d list heads), %d successful and %d unsuccessful lookups a row. "+
		"Theory: Knuth's formulas (chaining: 1 + α/2 and α; linear probing: ½(1 + 1/(1-α)) and ½(1 + 1/(1-α)²) probes, "+
		"one fewer key comparison for a miss, whose last probe finds an empty slot). "+
		"Slots: list nodes or slots inspected, for the cuckoo map the tags compared.\n\n", slots, slots, lookups, lookups)
	fmt.Fprintln(w, "| structure | load | hit: compares | theory | miss: compares | theory | hit: slots | miss: slots |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range rows {
		load := fnum(r.Load, 3)
		if r.Max {
			load += " (max)"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Structure, load,
			fnum(r.HitCompares, 3), fnum(r.HitTheory, 3), fnum(r.MissCompares, 3), fnum(r.MissTheory, 3),
			fnum(r.HitSlots, 2), fnum(r.MissSlots, 2))
	}
	fmt.Fprintln(w)
}

// WriteLookupRates renders the lookup-rate experiment at one table size.
func WriteLookupRates(w io.Writer, title string, rows []RateRow) {
	fmt.Fprintf(w, "### %s\n\n", title)
	fmt.Fprintln(w, "| structure | load | keys | hit ns/lookup | miss ns/lookup |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %.3f | %d | %.1f | %.1f |\n", r.Structure, r.Load, r.Keys, r.HitNs, r.MissNs)
	}
	fmt.Fprintln(w)
}

// WriteFPR renders the false-positive experiment.
func WriteFPR(w io.Writer, rows []FPRRow, n uint64) {
	fmt.Fprintf(w, "## False-positive rate vs bits per item\n\n")
	fmt.Fprintf(w, "Cuckoo filters of capacity %d filled to capacity; the rate is measured on never-inserted keys. "+
		"Bound: 2b/2^f. Expected: 1-(1-1/(2^f-1))^(2b·load).\n\n", n)
	fmt.Fprintln(w, "| b | f | load | bits/item | measured | expected | bound | measured/bound |")
	fmt.Fprintln(w, "|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %d | %d | %.3f | %.2f | %.3g%% | %.3g%% | %.3g%% | %.2f |\n", r.BucketSize, r.FingerprintBits,
			r.Load, r.BitsPerItem, 100*r.Measured, 100*r.Expected, 100*r.Bound, r.Measured/r.Bound)
	}
	fmt.Fprintln(w)
}

// WriteMaxLoad renders the maximum-load experiment.
func WriteMaxLoad(w io.Writer, rows []MaxLoadRow, slots int) {
	fmt.Fprintf(w, "## Maximum load vs bucket size and kick bound\n\n")
	fmt.Fprintf(w, "Tables of about %d slots, filled until the first insert fails (the filter: until it needs its victim slot). "+
		"The paper (Fan et al. 2014, 500 kicks): b=1 50%%, b=2 84%%, b=4 95%%, b=8 98%%.\n\n", slots)
	fmt.Fprintln(w, "| insertion | b | kicks | load (mean) | load (min) | seeds |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %d | %.4f | %.4f | %d |\n", r.Impl, r.BucketSize, r.MaxKicks, r.Load, r.MinLoad, r.Seeds)
	}
	fmt.Fprintln(w)
}

// WriteInsertRates renders the insert times by load band.
func WriteInsertRates(w io.Writer, rows []InsertRateRow, n uint64) {
	fmt.Fprintf(w, "### Insert time as the filter fills (capacity %d, b=4, f=12)\n\n", n)
	fmt.Fprintln(w, "| load band | ns/insert |")
	fmt.Fprintln(w, "|---|--:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %.2f–%.2f | %.1f |\n", r.FromLoad, r.ToLoad, r.NsPerInsert)
	}
	fmt.Fprintln(w)
}

// WriteDeletes renders the delete experiment.
func WriteDeletes(w io.Writer, r DeleteResult) {
	fmt.Fprintf(w, "## Deletion\n\n")
	fmt.Fprintf(w, "A filter of capacity %d (b=4, f=12) filled with %d keys (load %.3f), then %d of them deleted (load %.3f).\n\n",
		r.N, r.N, r.LoadBefore, r.Deleted, r.LoadAfter)
	fmt.Fprintln(w, "| figure | value |")
	fmt.Fprintln(w, "|---|--:|")
	fmt.Fprintf(w, "| deletes of present keys that failed | %d |\n", r.DeleteFailures)
	fmt.Fprintf(w, "| kept keys not found (false negatives) | %d |\n", r.FalseNegatives)
	fmt.Fprintf(w, "| never-inserted keys found | %.4f%% |\n", 100*r.FPRAbsent)
	fmt.Fprintf(w, "| deleted keys still found | %.4f%% |\n", 100*r.FPRDeleted)
	fmt.Fprintf(w, "| expected rate at the lower load | %.4f%% |\n", 100*r.ExpectedFPR)
	fmt.Fprintln(w)
}

// WritePeerFPR renders the peers of the false-positive experiment.
func WritePeerFPR(w io.Writer, rows []PeerFPRRow, n int) {
	fmt.Fprintf(w, "### Other filters of %d keys\n\n", n)
	fmt.Fprintln(w, "Bloom filters at the cuckoo filters' bits per item with the optimal number of hash functions; "+
		"the counting Bloom filter's space is 4 times a Bloom filter's for the same rate (computed, not built); "+
		"the binary fuse filters are static (built once from all keys, no inserts or deletes).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| filter | bits/item | false-positive rate |")
	fmt.Fprintln(w, "|---|--:|--:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %.2f | %.3g%% |\n", r.Filter, r.BitsPerItem, 100*r.Measured)
	}
	fmt.Fprintln(w)
}

// WriteConcurrency renders the concurrency experiment.
func WriteConcurrency(w io.Writer, rows []ConcurrencyRow, n int, d time.Duration, m Machine) {
	fmt.Fprintf(w, "## Throughput vs goroutines\n\n")
	fmt.Fprintf(w, "Structures of %d keys' capacity holding %d keys; each cell runs for %v. A lookup is of a present or an absent key; "+
		"an update inserts a goroutine's own fresh key and the next update deletes it. GOMAXPROCS=%d", n, n*9/10, d, m.GOMAXPROCS)
	if m.GOMAXPROCS <= 2 {
		fmt.Fprintf(w, ": on this machine more than %d goroutines only take turns, so the columns past %d show the cost of contention, not more parallelism", m.GOMAXPROCS, m.GOMAXPROCS)
	}
	fmt.Fprint(w, ". Millions of operations a second; finelock is a cuckoo filter with a lock per stripe of buckets (internal/stripedfilter), "+
		"mutex and rwmutex wrap filter.Filter.\n\n")
	type key struct {
		kind, impl string
		reads      int
	}
	cells := map[key]map[int]float64{}
	var order []key
	for _, r := range rows {
		k := key{r.Kind, r.Impl, r.ReadPct}
		if cells[k] == nil {
			cells[k] = map[int]float64{}
			order = append(order, k)
		}
		cells[k][r.Goroutines] = r.OpsPerSec
	}
	fmt.Fprintln(w, "| structure | lookups | 1 goroutine | 2 | 4 | 8 |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|")
	for _, k := range order {
		c := cells[k]
		fmt.Fprintf(w, "| %s %s | %d%% | %.1f | %.1f | %.1f | %.1f |\n", k.kind, k.impl, k.reads, c[1]/1e6, c[2]/1e6, c[4]/1e6, c[8]/1e6)
	}
	fmt.Fprintln(w)
}
