package eval

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Experiments are the experiments, in the order Run runs them; Config.Only selects by name.
var Experiments = []string{"probes", "rates", "fpr", "space", "maxload", "concurrency", "deletes", "growth"}

// Config is one evaluation run.
type Config struct {
	Out   string   // directory for report.md and the plots; created if missing
	Quick bool     // small sizes: about a minute
	Only  []string // experiment names; empty for all
	Seed  uint64
	// Step, if set, is called as each experiment starts, with its index
	// and name (for a progress bar).
	Step func(i int, name string)
}

// sizes are an evaluation's table sizes.
type sizes struct {
	probeSlots, probeLookups int
	rateSmall, rateLarge     int // slots: inside the caches, far beyond them
	rateLookups, rateReps    int
	fprN, fprAbsent          int
	spaceN, spaceAbsent      int
	spaceGrid                int // rates a decade
	maxSlots, maxSeeds       int
	kicks                    []int
	insertN                  uint64
	concN                    int
	concTime                 time.Duration
	deleteN, deleteAbsent    int
	growth                   GrowthConfig // without its Seed
}

func sizesFor(quick bool) sizes {
	if quick {
		return sizes{
			probeSlots: 1 << 16, probeLookups: 20000,
			rateSmall: 1 << 14, rateLarge: 1 << 22, rateLookups: 1 << 18, rateReps: 2,
			fprN: 50000, fprAbsent: 500000,
			spaceN: 50000, spaceAbsent: 500000, spaceGrid: 20,
			maxSlots: 1 << 16, maxSeeds: 2, kicks: []int{50, 100, 200, 500, 1000, 2000},
			insertN: 1 << 20, concN: 1 << 16, concTime: 100 * time.Millisecond,
			deleteN: 100000, deleteAbsent: 500000,
			growth: GrowthConfig{First: 1000, Final: 100000, Points: 100, Timed: 10, Absent: 25000, Lookups: 20000, Reps: 7},
		}
	}
	return sizes{
		probeSlots: 1 << 20, probeLookups: 200000,
		rateSmall: 1 << 15, rateLarge: 1 << 26, rateLookups: 1 << 21, rateReps: 3,
		fprN: 1000000, fprAbsent: 10000000,
		spaceN: 1000000, spaceAbsent: 10000000, spaceGrid: 40,
		maxSlots: 1 << 22, maxSeeds: 3, kicks: []int{50, 100, 200, 500, 1000, 2000},
		insertN: 1 << 24, concN: 1 << 20, concTime: time.Second,
		deleteN: 1000000, deleteAbsent: 10000000,
		growth: GrowthConfig{First: 1000, Final: 1000000, Points: 200, Timed: 10, Absent: 100000, Lookups: 100000, Reps: 7},
	}
}

// Run runs the selected experiments and writes Out/report.md and one plot
// per experiment (PNG and SVG). It returns the report's path.
func Run(cfg Config) (string, error) {
	for _, name := range cfg.Only {
		if !slices.Contains(Experiments, name) {
			return "", fmt.Errorf("eval: no experiment %q (have %v)", name, Experiments)
		}
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return "", err
	}
	sz := sizesFor(cfg.Quick)
	var b bytes.Buffer
	mode := "full"
	if cfg.Quick {
		mode = "quick (--quick: small sizes)"
	}
	fmt.Fprintf(&b, "# cuckoo eval\n\nMachine: %s. Run: %s, %s.\n\n", ThisMachine(), mode, time.Now().UTC().Format(time.RFC3339))
	if m := ThisMachine(); m.CPUs <= 2 {
		fmt.Fprintf(&b, "This machine has %d logical CPUs: times are of one core, and other processes on it add noise.\n\n", m.CPUs)
	}
	img := func(files ...string) {
		for _, f := range files {
			fmt.Fprintf(&b, "![%s](%s)\n\n", f, f)
		}
	}
	selected := func(name string) bool { return len(cfg.Only) == 0 || slices.Contains(cfg.Only, name) }
	step := 0
	for _, name := range Experiments {
		if !selected(name) {
			continue
		}
		if cfg.Step != nil {
			cfg.Step(step, name)
		}
		step++
		if err := runOne(&b, cfg, sz, name, img); err != nil {
			return "", fmt.Errorf("eval: %s: %w", name, err)
		}
	}
	path := filepath.Join(cfg.Out, "report.md")
	return path, os.WriteFile(path, b.Bytes(), 0o644)
}

func runOne(b *bytes.Buffer, cfg Config, sz sizes, name string, img func(...string)) error {
	switch name {
	case "probes":
		rows, err := Probes(sz.probeSlots, sz.probeLookups, cfg.Seed)
		if err != nil {
			return err
		}
		WriteProbes(b, rows, sz.probeSlots, sz.probeLookups)
		fmt.Fprintln(b, "The classic figure quoted for chaining, about 5.5 comparisons at load 1.0, is not what chaining does: "+
			"a successful search in a chained table compares 1 + α/2 keys (1.5 at α = 1), as measured here. "+
			"5.5 is linear probing's successful search at α = 0.9. The cuckoo map compares about one key per lookup at every load, "+
			"because its one-byte tags reject almost every other slot before a key is read; it reads 6 to 12 tags to do so.")
		fmt.Fprintln(b)
		files, err := PlotProbes(cfg.Out, rows)
		if err != nil {
			return err
		}
		img(files...)
	case "rates":
		fmt.Fprintf(b, "## Lookup time vs load factor\n\n")
		fmt.Fprintln(b, "Each structure holds load × its slots keys (the Go map the same keys as the cuckoo map). "+
			"Far beyond the caches, a lookup's time is its cache misses: the filter reads one or two bucket lines; "+
			"the cuckoo map's hit reads its bucket's line and then the entry's (keys and values live outside the table, "+
			"so moves and updates are pointer stores), and its miss reads the second bucket only when the first bucket's "+
			"overflow count for the key's tag class says a key of that class lives there, which grows with the load; the Go map keeps keys in its groups.")
		fmt.Fprintln(b)
		for _, c := range []struct {
			slots       int
			title, base string
		}{
			{sz.rateSmall, fmt.Sprintf("Inside the caches (%d slots)", sz.rateSmall), "rates-cache"},
			{sz.rateLarge, fmt.Sprintf("Beyond the caches (%d slots)", sz.rateLarge), "rates-memory"},
		} {
			rows, err := LookupRates(c.slots, sz.rateLookups, sz.rateReps, cfg.Seed)
			if err != nil {
				return err
			}
			WriteLookupRates(b, c.title, rows)
			file, err := PlotLookupRates(cfg.Out, c.base, c.title, rows)
			if err != nil {
				return err
			}
			img(file)
		}
	case "fpr":
		rows, err := FPR(uint64(sz.fprN), sz.fprAbsent, cfg.Seed)
		if err != nil {
			return err
		}
		WriteFPR(b, rows, uint64(sz.fprN))
		var bits []float64
		for _, r := range rows {
			if r.BucketSize == 4 {
				bits = append(bits, r.BitsPerItem)
			}
		}
		peers, err := PeerFPR(sz.fprN, sz.fprAbsent, bits, cfg.Seed)
		if err != nil {
			return err
		}
		WritePeerFPR(b, peers, sz.fprN)
		fmt.Fprintf(b, "Where a cuckoo filter of plain buckets (b=4, 95.5%% load) overtakes an optimal Bloom filter: at a rate of about %.2f%% "+
			"(the two spaces, (log2(1/ε)+3)/0.955 and 1.44·log2(1/ε) bits a key, cross there; compare the rows above). "+
			"The paper's \"below 3%%\" is for its semi-sorted variant, which saves a bit a key; the next section measures it, "+
			"and the ranked buckets filter.New builds, against Bloom.\n\n",
			100*CrossoverRate(4, 0.955))
		file, err := PlotFPR(cfg.Out, rows, peers)
		if err != nil {
			return err
		}
		img(file)
	case "space":
		rows, grid, err := Space(sz.spaceN, sz.spaceAbsent, sz.spaceGrid, cfg.Seed)
		if err != nil {
			return err
		}
		WriteSpace(b, rows, grid, sz.spaceN, sz.spaceGrid)
		file, err := PlotSpace(cfg.Out, rows, grid)
		if err != nil {
			return err
		}
		img(file)
	case "maxload":
		rows, err := MaxLoad(sz.maxSlots, sz.kicks, sz.maxSeeds)
		if err != nil {
			return err
		}
		WriteMaxLoad(b, rows, sz.maxSlots)
		file, err := PlotMaxLoad(cfg.Out, rows)
		if err != nil {
			return err
		}
		img(file)
		ins, err := InsertRates(sz.insertN, cfg.Seed)
		if err != nil {
			return err
		}
		WriteInsertRates(b, ins, sz.insertN)
		file, err = PlotInsertRates(cfg.Out, ins)
		if err != nil {
			return err
		}
		img(file)
	case "concurrency":
		rows, err := Concurrency(sz.concN, sz.concTime, cfg.Seed)
		if err != nil {
			return err
		}
		WriteConcurrency(b, rows, sz.concN, sz.concTime, ThisMachine())
		files, err := PlotConcurrency(cfg.Out, rows)
		if err != nil {
			return err
		}
		img(files...)
	case "deletes":
		r, err := Deletes(uint64(sz.deleteN), sz.deleteAbsent, cfg.Seed)
		if err != nil {
			return err
		}
		WriteDeletes(b, r)
		bits := 12.64
		deleted, absent := BloomAfterDeletes(sz.deleteN, sz.deleteAbsent, bits, cfg.Seed)
		fmt.Fprintf(b, "A Bloom filter of the same keys at %.2f bits a key cannot delete: it still finds %.1f%% of the \"deleted\" keys "+
			"and %.3f%% of never-inserted ones; the cuckoo filter finds %.3f%% of the deleted keys, its false-positive rate.\n\n",
			bits, 100*deleted, 100*absent, 100*r.FPRDeleted)
	case "growth":
		gc := sz.growth
		gc.Seed = cfg.Seed
		res, err := Growth(gc)
		if err != nil {
			return err
		}
		WriteGrowth(b, res)
		files, err := PlotGrowth(cfg.Out, res)
		if err != nil {
			return err
		}
		img(files...)
	}
	return nil
}
