package main

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/cuckoohash/cuckoo/filter"
)

const infoHelp = `
Info prints the parameters of the filter FILE (a Filter, or a Scalable with
its entries by tail length), how full it is, its size, and its expected
false-positive rate now and once it holds its capacity (for a Scalable, the
bound it keeps while it grows). --json prints the same as one JSON
object: the totals at the top level, then "filter" or "scalable".
`

// infoReport is the output of info --json.
type infoReport struct {
	File          string        `json:"file"`
	Format        string        `json:"format"` // "filter" or "scalable"
	FileBytes     int64         `json:"file_bytes"`
	SizeBytes     uint64        `json:"size_bytes"` // in memory
	Capacity      uint64        `json:"capacity"`
	Items         uint64        `json:"items"`
	Load          float64       `json:"load"`
	BitsPerItem   *float64      `json:"bits_per_item"` // null when empty
	FPR           float64       `json:"fpr"`
	FPRAtCapacity float64       `json:"fpr_at_capacity"`
	Filter        *stageInfo    `json:"filter,omitempty"`
	Scalable      *scalableInfo `json:"scalable,omitempty"`
}

// stageInfo describes a Filter, or one stage of a Scalable.
type stageInfo struct {
	Buckets         uint64   `json:"buckets"`
	BucketSize      int      `json:"bucket_size"`
	FingerprintBits int      `json:"fingerprint_bits"`
	Packing         string   `json:"packing"` // plain, semi-sorted or ranked
	Seed            uint64   `json:"seed"`
	MaxKicks        int      `json:"max_kicks"`
	Capacity        uint64   `json:"capacity"`
	Items           uint64   `json:"items"`
	Load            float64  `json:"load"`
	SizeBytes       uint64   `json:"size_bytes"`
	BitsPerItem     *float64 `json:"bits_per_item"`
	FPR             float64  `json:"fpr"`
	FPRAtCapacity   float64  `json:"fpr_at_capacity"`
	VictimUsed      bool     `json:"victim_used"`
}

// scalableInfo is a Scalable's configuration and table.
type scalableInfo struct {
	InitialCapacity uint64   `json:"initial_capacity"`
	TargetFPR       float64  `json:"target_fpr"`
	BucketSize      int      `json:"bucket_size"`
	MaxKicks        int      `json:"max_kicks"`
	Seed            uint64   `json:"seed"`
	Buckets         uint64   `json:"buckets"`
	SlotBits        int      `json:"slot_bits"`
	FingerprintBits int      `json:"fingerprint_bits"`
	Doublings       int      `json:"doublings"`
	Entries         uint64   `json:"entries"`
	Stashed         int      `json:"stashed"`
	Tails           []uint64 `json:"entries_by_tail_bits"`
}

func runInfo(e *env, args []string) error {
	fs := e.flags(infoHelp)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := e.parse(fs, args, []string{"FILE"}, 1); err != nil {
		return err
	}
	path := fs.Arg(0)
	l, err := load(path)
	if err != nil {
		return err
	}
	if err := writeReport(e.stdout, report(path, l), *asJSON); err != nil {
		return fmt.Errorf("info: %w", err)
	}
	return nil
}

// writeReport prints r as indented JSON, or as text: info and cluster
// info's --json.
func writeReport(w io.Writer, r interface{ writeText(io.Writer) error }, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return r.writeText(w)
}

func perItem(bytes, items uint64) *float64 {
	if items == 0 {
		return nil
	}
	b := 8 * float64(bytes) / float64(items)
	return &b
}

// rateAt returns f's expected false-positive rate at the given load, from
// its fingerprint range (a ranked table's is not 2^f).
func rateAt(f *filter.Filter, load float64) float64 {
	return filter.Layout{BucketSize: f.BucketSize(), FingerprintRange: f.FingerprintRange()}.ExpectedFalsePositiveRate(load)
}

func describeStage(f *filter.Filter, victim bool) stageInfo {
	full := float64(f.Capacity()) / float64(f.Slots())
	return stageInfo{
		Buckets:         f.Buckets(),
		BucketSize:      f.BucketSize(),
		FingerprintBits: f.FingerprintBits(),
		Packing:         f.Packing().String(),
		Seed:            f.Seed(),
		MaxKicks:        f.MaxKicks(),
		Capacity:        f.Capacity(),
		Items:           f.Len(),
		Load:            f.LoadFactor(),
		SizeBytes:       f.SizeInBytes(),
		BitsPerItem:     perItem(f.SizeInBytes(), f.Len()),
		FPR:             f.FalsePositiveRate(),
		FPRAtCapacity:   rateAt(f, full),
		VictimUsed:      victim,
	}
}

func report(path string, l *loaded) *infoReport {
	r := &infoReport{File: path, FileBytes: l.size}
	if f := l.filter; f != nil {
		st := describeStage(f, l.victim)
		r.Format = "filter"
		r.Filter = &st
		r.SizeBytes, r.Capacity, r.Items, r.Load = st.SizeBytes, st.Capacity, st.Items, st.Load
		r.FPR, r.FPRAtCapacity = st.FPR, st.FPRAtCapacity
	} else {
		s := l.scalable
		cfg := s.Config()
		r.Format = "scalable"
		r.Scalable = &scalableInfo{
			InitialCapacity: cfg.InitialCapacity,
			TargetFPR:       cfg.FalsePositiveRate,
			BucketSize:      cfg.BucketSize,
			MaxKicks:        cfg.MaxKicks,
			Seed:            cfg.Seed,
			Buckets:         s.Buckets(),
			SlotBits:        s.SlotBits(),
			FingerprintBits: s.FingerprintBits(),
			Doublings:       s.Stages() - 1,
			Entries:         s.Entries(),
			Stashed:         s.Stashed(),
			Tails:           s.Tails(),
		}
		r.SizeBytes, r.Capacity, r.Items, r.Load = s.SizeInBytes(), s.Capacity(), s.Len(), s.LoadFactor()
		// A Scalable grows rather than fill: its bound is the rate it was
		// configured with (filter/doc.go, "Growing filters").
		r.FPR, r.FPRAtCapacity = s.FalsePositiveRate(), cfg.FalsePositiveRate
	}
	r.BitsPerItem = perItem(r.SizeBytes, r.Items)
	return r
}

func (r *infoReport) writeText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(name, format string, args ...any) { fmt.Fprintf(tw, name+"\t"+format+"\n", args...) }
	row("file", "%s (%d bytes)", r.File, r.FileBytes)
	if f := r.Filter; f != nil {
		row("format", "Filter")
		row("buckets", "%d", f.Buckets)
		row("bucket size", "%d", f.BucketSize)
		row("fingerprint bits", "%d", f.FingerprintBits)
		row("packing", "%s", f.Packing)
		row("seed", "%d", f.Seed)
		row("max kicks", "%d", f.MaxKicks)
	} else {
		s := r.Scalable
		row("format", "Scalable, grown %s", count(s.Doublings, "doubling", "doublings"))
		row("initial capacity", "%d", s.InitialCapacity)
		row("target fpr", "%s", percent(s.TargetFPR))
		row("buckets", "%d", s.Buckets)
		row("bucket size", "%d", s.BucketSize)
		row("slot bits", "%d (%d of fingerprint, the rest tail)", s.SlotBits, s.FingerprintBits)
		row("entries", "%d (%d stashed)", s.Entries, s.Stashed)
		row("seed", "%d", s.Seed)
		row("max kicks", "%d", s.MaxKicks)
	}
	row("capacity", "%d", r.Capacity)
	row("items", "%d", r.Items)
	row("load", "%.2f%%", 100*r.Load)
	row("size", "%d bytes in memory", r.SizeBytes)
	row("bits/item", "%s", formatPerItem(r.BitsPerItem))
	row("fpr now", "%s (expected, at the current load)", percent(r.FPR))
	if r.Scalable != nil {
		row("fpr bound", "%s (configured; it grows rather than fill)", percent(r.FPRAtCapacity))
	} else {
		row("fpr at capacity", "%s (expected, once it holds its capacity)", percent(r.FPRAtCapacity))
	}
	if r.Filter != nil {
		row("victim", "%s", usedOrNot(r.Filter.VictimUsed))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Scalable == nil {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "tail bits\tentries\t")
	for n, c := range r.Scalable.Tails {
		fmt.Fprintf(tw, "%d\t%d\t\n", n, c)
	}
	return tw.Flush()
}

func formatPerItem(b *float64) string {
	if b == nil {
		return "- (empty)"
	}
	return fmt.Sprintf("%.2f", *b)
}

func usedOrNot(used bool) string {
	if used {
		return "used"
	}
	return "unused"
}
