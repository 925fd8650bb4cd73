package eval

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
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

// WriteGrowth renders the growth experiment: the summary a structure a
// row, then lookup times at the timed points.
func WriteGrowth(w io.Writer, res GrowthResult) {
	cfg := res.Config
	fmt.Fprintf(w, "## Growth: space, false positives and lookup time from %d to %d keys\n\n", cfg.First, cfg.Final)
	fmt.Fprintf(w, "The same %d distinct keys go into each structure in the same order. The growing ones start at a capacity of %d; "+
		"the static filter is built for %d keys from the start. ε = %g%% where a structure takes a rate. "+
		"Measured at %d points from %d to %d keys, evenly spaced on a log scale (each %.1f%% more keys than the last): "+
		"bits a key (SizeInBytes·8 / keys inserted; the RedisBloom model counts its tables at a byte a slot and nothing else) "+
		"and the false-positive rate on the same %d never-inserted keys at every point (at a rate of 1%% that is %.0f expected false positives, "+
		"so a measurement is good to ±20%% at %.1f standard deviations). Lookups of absent keys (a chain's read every stage) are timed at %d of the points: "+
		"the median of %d passes over %d keys. Inserts are timed apart: each structure is built anew and grown from none to %d keys, "+
		"the structures in turn, %d times, with nothing read between inserts; the median ns an insert is reported over the whole growth and "+
		"between consecutive timed points. Bits a key are averaged over the points; issue 13 averaged over every 1%% of n instead, "+
		"which weighs the last decade most, so that average has a column too. The maximum is also checked right after every growth. "+
		"The static filter's space is fixed: its figures are at n. Then every other key is deleted and the rest are looked up.\n\n",
		cfg.Final, cfg.First, cfg.Final, 100*growthRate, countRows(res.Rows, GrowthChain2), cfg.First, cfg.Final,
		100*(math.Pow(float64(cfg.Final)/float64(cfg.First), 1/float64(cfg.Points))-1),
		cfg.Absent, 0.01*float64(cfg.Absent), 0.2*math.Sqrt(0.01*float64(cfg.Absent)), cfg.Timed, cfg.Reps, cfg.Lookups,
		cfg.Final, insertReps(cfg))
	fmt.Fprintln(w, "| structure | bits/key (avg, log points) | bits/key (avg, every 1% of n) | bits/key (max) | FPR (max) | stages at n | lookup ns at n | vs static | insert ns, growing to n | vs static | false negatives after deleting half | deletes that failed |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, s := range res.Summary {
		fmt.Fprintf(w, "| %s | %.2f | %.2f | %.2f | %.3f%% | %d | %.1f | %.2f× | %.1f | %.2f× | %d of %d | %d |\n", s.Structure, s.BitsAvg, s.BitsAvgLinear, s.BitsMax,
			100*s.FPRMax, s.Stages, s.LookupNs, s.VsStatic, s.InsertNs, s.InsertVsStatic, s.FalseNegatives, s.Kept, s.DeleteFailures)
	}
	fmt.Fprintln(w)
	writeTimedRows(w, res, "ns per lookup of an absent key, by keys inserted:", func(r GrowthRow) float64 { return r.LookupNs })
	writeTimedRows(w, res, "ns per insert since the previous column's keys (from none for the first), by keys inserted:",
		func(r GrowthRow) float64 { return r.InsertNs })
	writeGrowthNotes(w, res)
}

// insertReps is how many times the growth experiment times each
// structure's inserts.
func insertReps(cfg GrowthConfig) int {
	if cfg.InsertReps == 0 {
		return 3
	}
	return cfg.InsertReps
}

// writeTimedRows writes a table of the value of each structure at the
// timed points, where the value is not NaN.
func writeTimedRows(w io.Writer, res GrowthResult, title string, value func(GrowthRow) float64) {
	var timedKeys []int
	ns := map[string][]float64{}
	for _, r := range res.Rows {
		if math.IsNaN(value(r)) {
			continue
		}
		if !slices.Contains(timedKeys, r.Keys) {
			timedKeys = append(timedKeys, r.Keys)
		}
		ns[r.Structure] = append(ns[r.Structure], value(r))
	}
	fmt.Fprintf(w, "%s\n\n| structure |", title)
	for _, k := range timedKeys {
		fmt.Fprintf(w, " %d |", k)
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("--:|", len(timedKeys)))
	for _, s := range res.Summary {
		fmt.Fprintf(w, "| %s |", s.Structure)
		for _, x := range ns[s.Structure] {
			fmt.Fprintf(w, " %.1f |", x)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// writeGrowthNotes says what the growth figures mean, from the figures.
func writeGrowthNotes(w io.Writer, res GrowthResult) {
	sum := map[string]GrowthSummary{}
	for _, s := range res.Summary {
		sum[s.Structure] = s
	}
	var rb GrowthRow // the RedisBloom model at the final n
	for _, r := range res.Rows {
		if r.Structure == GrowthRedisBloom {
			rb = r
		}
	}
	g, c2, c4, m, st := sum[GrowthScalable], sum[GrowthChain2], sum[GrowthChain4], sum[GrowthRedisBloom], sum[GrowthStatic]
	fmt.Fprintf(w, "**The growing table** (filter.Scalable since format 2; filter/doc.go, \"Growing filters\") is one cuckoo table that splits "+
		"a bucket whenever its load passes its split load (91%% at the start and end of a round of splits, 88.5%% a third of the way in), "+
		"each entry giving a bit of its tail to the split: %.2f bits a key averaged over every 1%% of n "+
		"(%.2f over the log points), %.2f at most, %.2f× the static filter; its rate stayed at or below %.2f%%; a lookup reads two buckets at any size, "+
		"%.0f ns at n (%.2f× the static filter's time); an insert took %.0f ns on average while it grew (%.2f× the static filter's %.0f ns), "+
		"since every insert meets a table at its split load, where both of a key's buckets are often full and a path must be found; "+
		"deleting half the keys failed %d deletes and lost %d of %d kept keys.\n\n",
		g.BitsAvgLinear, g.BitsAvg, g.BitsMax, g.BitsAvgLinear/st.BitsAvg, 100*g.FPRMax, g.LookupNs, g.VsStatic,
		g.InsertNs, g.InsertVsStatic, st.InsertNs, g.DeleteFailures, g.FalseNegatives, g.Kept)
	fmt.Fprintf(w, "**Space.** The chain adds a stage, empty, Growth times the last one's capacity and with fingerprints a bit wider, "+
		"when the last one is full, so its bits a key are a sawtooth: %.1f on average and %.1f at the peak with Growth 2, %.1f and %.1f with Growth 4, "+
		"against %.2f for the static filter (%.1f× and %.1f× on average). "+
		"The RedisBloom model stores a byte a slot but doubles its whole size at each growth and grows when 20 kicks fail, "+
		"which in 2-slot buckets happens well before a table is full: %.1f bits a key on average, %.1f at most. "+
		"Its first sub-filter (%d slots for a capacity of %d) refused an insert at %d keys.\n\n",
		c2.BitsAvg, c2.BitsMax, c4.BitsAvg, c4.BitsMax, st.BitsAvg, c2.BitsAvg/st.BitsAvg, c4.BitsAvg/st.BitsAvg,
		m.BitsAvg, m.BitsMax, newRedisBloom(uint64(res.Config.First)).SizeInBytes(), res.Config.First, m.FirstGrowth)
	fmt.Fprintf(w, "**False positives.** The chain's stages' rates sum to below ε: at most %.2f%% measured (Growth 2). "+
		"The model's sub-filters all use 8-bit fingerprints, so each adds up to 2b/255 = %.2f%%: with %d sub-filters at %d keys it measured %.2f%% "+
		"(%.2f%% expected from their loads, %.2f%% if all were full). The static filter's rate rises with its load, to %.2f%% at n.\n\n",
		100*c2.FPRMax, 100*2*rbBucketSize/255.0, rb.Stages, rb.Keys, 100*rb.FPR, 100*rb.ExpectedFPR,
		100*float64(rb.Stages)*2*rbBucketSize/255, 100*st.FPRMax)
	fmt.Fprintf(w, "**Lookups.** A lookup of an absent key reads every stage: at %d keys the chain's %d stages take %.0f ns (%.1f× the static filter), "+
		"with Growth 4 %d stages %.0f ns (%.1f×), the model's %d sub-filters %.0f ns (%.1f×). "+
		"Each pass times the structures in turn, so that other work on the machine slows them alike: the ratios are steadier than the times.\n\n",
		res.Config.Final, c2.Stages, c2.LookupNs, c2.VsStatic, c4.Stages, c4.LookupNs, c4.VsStatic, m.Stages, m.LookupNs, m.VsStatic)
	fmt.Fprintf(w, "**Inserts.** Growing from none to %d keys, an insert took %.0f ns in the chain (%.2f× the static filter; Growth 4: %.0f ns, %.2f×), "+
		"whose newest stage fills from empty like a static filter and whose older stages it never touches, "+
		"and %.0f ns in the RedisBloom model (%.2f×), whose kicks are capped at 20 and which doubles rather than search further. "+
		"The static filter, sized for n from the start, is mostly empty while it fills: %.0f ns (its first inserts also fault in the pages of its whole table).\n\n",
		res.Config.Final, c2.InsertNs, c2.InsertVsStatic, c4.InsertNs, c4.InsertVsStatic, m.InsertNs, m.InsertVsStatic, st.InsertNs)
	fmt.Fprintf(w, "**Deleting half.** The chain's deletes failed %d times and %d of its %d kept keys were then reported absent (Growth 4: %d and %d). "+
		"A key that is also a false positive of a newer stage than its own has its delete take that stage's copy, which belongs to another key: "+
		"that key, if kept, is then reported absent, and if it is deleted later, its delete finds nothing (issue 13). "+
		"The RedisBloom model failed %d deletes and lost %d keys: its sub-filters share one fingerprint and their sizes are nested powers of two, "+
		"so two keys that collide in a newer sub-filter collide in every older one, and whichever copy a delete takes, the other key still finds one. "+
		"The compaction its deletes trigger moves fingerprints to older sub-filters under the same rule (here it went from %d sub-filters to %d). "+
		"The static filter: %d and %d.\n\n",
		c2.DeleteFailures, c2.FalseNegatives, c2.Kept, c4.DeleteFailures, c4.FalseNegatives,
		m.DeleteFailures, m.FalseNegatives, m.Stages, m.StagesAfterDeletes, st.DeleteFailures, st.FalseNegatives)
}

// countRows returns the rows of the named structure.
func countRows(rows []GrowthRow, name string) int {
	n := 0
	for _, r := range rows {
		if r.Structure == name {
			n++
		}
	}
	return n
}
