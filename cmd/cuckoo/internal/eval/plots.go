package eval

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// series is one named line of a plot.
type series struct {
	name string
	xy   plotter.XYs
}

// figure is a plot in the making: its title, axes and lines.
type figure struct {
	title, x, y string
	logX, logY  bool
	headroom    float64 // room above the data for the legend, a share of the y axis
	lines       []series
	points      []series // drawn as markers only
}

// add appends (x, y) to the line named name.
func (f *figure) add(name string, x, y float64) { f.lines = appendPoint(f.lines, name, x, y) }

// point appends (x, y) to the markers named name.
func (f *figure) point(name string, x, y float64) { f.points = appendPoint(f.points, name, x, y) }

// appendPoint appends (x, y) to the series named name, starting it if new.
func appendPoint(list []series, name string, x, y float64) []series {
	for i := range list {
		if list[i].name == name {
			list[i].xy = append(list[i].xy, plotter.XY{X: x, Y: y})
			return list
		}
	}
	return append(list, series{name: name, xy: plotter.XYs{{X: x, Y: y}}})
}

// drawable drops the points a log axis cannot show (zero: a rate too small
// to measure with the keys looked up).
func drawable(xy plotter.XYs, logY bool) plotter.XYs {
	if !logY {
		return xy
	}
	return slices.DeleteFunc(xy, func(p plotter.XY) bool { return !(p.Y > 0) })
}

// save writes the figure as base.png and base.svg in dir and returns the
// PNG's file name.
func (f *figure) save(dir, base string) (string, error) {
	p := plot.New()
	p.Title.Text = f.title
	p.X.Label.Text, p.Y.Label.Text = f.x, f.y
	if f.logX {
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	if f.logY {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	for i, s := range f.lines {
		xy := drawable(slices.Clone(s.xy), f.logY)
		slices.SortStableFunc(xy, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return "", fmt.Errorf("%s: %s: %w", base, s.name, err)
		}
		c := plotutil.Color(i)
		l.Color, pts.Color = c, c
		l.Width = vg.Points(1.5)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(s.name, l, pts)
	}
	for i, s := range f.points {
		sc, err := plotter.NewScatter(drawable(slices.Clone(s.xy), f.logY))
		if err != nil {
			return "", fmt.Errorf("%s: %s: %w", base, s.name, err)
		}
		sc.Color = color.Gray{Y: uint8(40 + 40*(i%4))}
		sc.Shape = plotutil.Shape(len(f.lines) + i)
		sc.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(s.name, sc)
	}
	if f.headroom > 0 {
		if f.logY {
			p.Y.Max *= math.Pow(p.Y.Max/p.Y.Min, f.headroom)
		} else {
			p.Y.Max += (p.Y.Max - p.Y.Min) * f.headroom
		}
	}
	p.Add(plotter.NewGrid())
	for _, ext := range []string{".png", ".svg"} {
		if err := p.Save(8*vg.Inch, 5*vg.Inch, filepath.Join(dir, base+ext)); err != nil {
			return "", err
		}
	}
	return base + ".png", nil
}

// PlotProbes draws key comparisons per lookup against load.
func PlotProbes(dir string, rows []ProbeRow) ([]string, error) {
	hit := &figure{title: "Successful lookups", x: "load factor", y: "key comparisons", logY: true}
	miss := &figure{title: "Unsuccessful lookups", x: "load factor", y: "key comparisons (log)", logY: true}
	for _, r := range rows {
		hit.add(r.Structure, r.Load, r.HitCompares)
		miss.add(r.Structure, r.Load, r.MissCompares)
	}
	a, err := hit.save(dir, "probes-hit")
	if err != nil {
		return nil, err
	}
	b, err := miss.save(dir, "probes-miss")
	return []string{a, b}, err
}

// PlotLookupRates draws lookup time against load.
func PlotLookupRates(dir, base, title string, rows []RateRow) (string, error) {
	f := &figure{title: title, x: "load factor", y: "ns per lookup (half hits, half misses)"}
	for _, r := range rows {
		f.add(r.Structure, r.Load, (r.HitNs+r.MissNs)/2)
	}
	return f.save(dir, base)
}

// PlotFPR draws false-positive rate against bits per item.
func PlotFPR(dir string, rows []FPRRow, peers []PeerFPRRow) (string, error) {
	f := &figure{title: "False positives vs space", x: "bits per item", y: "false-positive rate", logY: true}
	// Fingerprints under 7 bits leave too few alternates for the usual
	// loads (see the table's load column): those shapes are not drawn.
	for _, r := range rows {
		if r.FingerprintBits >= 7 {
			f.add(fmt.Sprintf("cuckoo b=%d, f=7..20 (measured)", r.BucketSize), r.BitsPerItem, r.Measured)
		}
	}
	for _, r := range rows {
		if r.BucketSize == 4 && r.FingerprintBits >= 7 {
			f.add("cuckoo b=4 bound 2b/2^f", r.BitsPerItem, r.Bound)
		}
	}
	for _, r := range peers {
		f.point(r.Filter, r.BitsPerItem, r.Measured)
	}
	return f.save(dir, "fpr")
}

// PlotMaxLoad draws the load reached against the kick bound.
func PlotMaxLoad(dir string, rows []MaxLoadRow) (string, error) {
	f := &figure{title: "Maximum load before the first failed insert", x: "kick bound", y: "load factor", logX: true}
	for _, r := range rows {
		f.add(fmt.Sprintf("%s b=%d", r.Impl, r.BucketSize), float64(r.MaxKicks), r.Load)
	}
	return f.save(dir, "maxload")
}

// PlotInsertRates draws insert time against load.
func PlotInsertRates(dir string, rows []InsertRateRow) (string, error) {
	f := &figure{title: "Insert time as the filter fills (b=4, f=12)", x: "load factor", y: "ns per insert"}
	for _, r := range rows {
		f.add("filter", (r.FromLoad+r.ToLoad)/2, r.NsPerInsert)
	}
	return f.save(dir, "insert-rates")
}

// PlotConcurrency draws throughput against goroutines, one figure per
// kind and mix.
func PlotConcurrency(dir string, rows []ConcurrencyRow) ([]string, error) {
	var files []string
	for _, kind := range []string{"filter", "map"} {
		for _, reads := range []int{95, 50} {
			f := &figure{title: fmt.Sprintf("%s: %d%% lookups", kind, reads), x: "goroutines", y: "million operations a second", logX: true}
			for _, r := range rows {
				if r.Kind == kind && r.ReadPct == reads {
					f.add(r.Impl, float64(r.Goroutines), r.OpsPerSec/1e6)
				}
			}
			file, err := f.save(dir, fmt.Sprintf("concurrency-%s-%d", kind, reads))
			if err != nil {
				return nil, err
			}
			files = append(files, file)
		}
	}
	return files, nil
}

// PlotGrowth draws bits a key, false-positive rate, lookup and insert time against
// the keys inserted, one figure each. The static filter's space is drawn
// as a level line at its bits a key at the final n: at fewer keys it is
// only emptier, not larger.
func PlotGrowth(dir string, res GrowthResult) ([]string, error) {
	cfg := res.Config
	bits := &figure{title: "Space while growing", x: "keys inserted (log)", y: "bits per key", logX: true, headroom: 0.45}
	fpr := &figure{title: "False-positive rate while growing", x: "keys inserted (log)", y: "false-positive rate (log)", logX: true, logY: true, headroom: 0.3}
	look := &figure{title: "Lookup time while growing (absent keys)", x: "keys inserted (log)", y: "ns per lookup (median)", logX: true, headroom: 0.3}
	ins := &figure{title: "Insert time while growing (since the previous point)", x: "keys inserted (log)", y: "ns per insert (median, log)", logX: true, logY: true, headroom: 0.3}
	for _, r := range res.Rows {
		if r.Structure != GrowthStatic {
			bits.add(r.Structure, float64(r.Keys), r.BitsPerKey)
		}
		fpr.add(r.Structure, float64(r.Keys), r.FPR)
		if !math.IsNaN(r.LookupNs) {
			look.add(r.Structure, float64(r.Keys), r.LookupNs)
		}
		if !math.IsNaN(r.InsertNs) {
			ins.add(r.Structure, float64(r.Keys), r.InsertNs)
		}
	}
	for _, s := range res.Summary {
		if s.Structure == GrowthStatic {
			name := fmt.Sprintf("%s (%.2f)", GrowthStatic, s.BitsAvg)
			bits.add(name, float64(cfg.First), s.BitsAvg)
			bits.add(name, float64(cfg.Final), s.BitsAvg)
		}
	}
	target := fmt.Sprintf("ε = %g%%, the target of all but the RedisBloom model", 100*growthRate)
	fpr.add(target, float64(cfg.First), growthRate)
	fpr.add(target, float64(cfg.Final), growthRate)
	var files []string
	for _, f := range []struct {
		fig  *figure
		base string
	}{{bits, "growth-bits"}, {fpr, "growth-fpr"}, {look, "growth-lookup"}, {ins, "growth-insert"}} {
		file, err := f.fig.save(dir, f.base)
		if err != nil {
			return nil, err
		}
		files = append(files, file)
	}
	return files, nil
}
