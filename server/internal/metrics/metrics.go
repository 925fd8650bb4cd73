package metrics

import (
	"math"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Metrics are the server's Prometheus metrics: commands by name, command
// latency, keys, items, filter memory and fsync time. Pass one in
// Config.Metrics and serve Handler (cuckoo serve --metrics-addr).
type Metrics struct {
	commands sync.Map // command name -> *atomic.Uint64
	latency  *histogram
	fsync    *histogram

	mu     sync.Mutex
	gauges map[string]gauge // by name, the runtime's and process's included
}

type gauge struct {
	help    string
	kind    string // "gauge" or "counter"
	f       func() float64
	labels  string // {name="value",...} or ""
	present func() bool
}

// New returns a fresh set of metrics.
func New() *Metrics {
	m := &Metrics{
		latency: newHistogram("cuckoo_command_duration_seconds",
			"Command execution time (before the durability barrier).", exponential(1e-7, 4, 12)),
		fsync: newHistogram("cuckoo_fsync_duration_seconds",
			"Append-only log fsync time.", exponential(1e-5, 4, 10)),
		gauges: map[string]gauge{},
	}
	m.addRuntime()
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(m.appendText(nil))
	})
}

// ObserveFsync records one fsync of the log that took d.
func (m *Metrics) ObserveFsync(d time.Duration) { m.fsync.observe(d.Seconds()) }

// ObserveCommand records one run of the command name that took d.
func (m *Metrics) ObserveCommand(name string, d time.Duration) {
	c, ok := m.commands.Load(name)
	if !ok {
		c, _ = m.commands.LoadOrStore(name, new(atomic.Uint64))
	}
	c.(*atomic.Uint64).Add(1)
	m.latency.observe(d.Seconds())
}

// Gauge registers the gauge name, whose value f returns at scrape time. It
// panics if name is registered already (a programming error).
func (m *Metrics) Gauge(name, help string, f func() float64) {
	m.register(name, gauge{help: help, kind: "gauge", f: f})
}

func (m *Metrics) register(name string, g gauge) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.gauges[name]; dup || name == m.latency.name || name == m.fsync.name || name == commandsName {
		panic("metrics: " + name + " is registered twice")
	}
	m.gauges[name] = g
}

const commandsName = "cuckoo_commands_total"

// appendText appends every family, sorted by name, in the text format.
func (m *Metrics) appendText(b []byte) []byte {
	m.mu.Lock()
	names := make([]string, 0, len(m.gauges)+3)
	for name := range m.gauges {
		names = append(names, name)
	}
	gauges := make(map[string]gauge, len(m.gauges))
	for k, v := range m.gauges {
		gauges[k] = v
	}
	m.mu.Unlock()
	names = append(names, commandsName, m.latency.name, m.fsync.name)
	sort.Strings(names)
	for _, name := range names {
		switch name {
		case commandsName:
			b = m.appendCommands(b)
		case m.latency.name:
			b = m.latency.appendText(b)
		case m.fsync.name:
			b = m.fsync.appendText(b)
		default:
			g := gauges[name]
			if g.present != nil && !g.present() {
				continue
			}
			b = appendHeader(b, name, g.help, g.kind)
			b = appendSample(b, name, g.labels, g.f())
		}
	}
	return b
}

func (m *Metrics) appendCommands(b []byte) []byte {
	type child struct {
		name string
		n    uint64
	}
	var cs []child
	m.commands.Range(func(k, v any) bool {
		cs = append(cs, child{k.(string), v.(*atomic.Uint64).Load()})
		return true
	})
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	b = appendHeader(b, commandsName, "Commands executed, by name.", "counter")
	for _, c := range cs {
		b = appendSample(b, commandsName, string(appendLabel(nil, "command", c.name)), float64(c.n))
	}
	return b
}

// histogram is a Prometheus histogram: a count a bucket (not cumulative:
// one add an observation), their total, and the sum as float64 bits.
type histogram struct {
	name, help string
	upper      []float64       // the buckets' upper bounds, ascending
	counts     []atomic.Uint64 // len(upper)+1: the last is +Inf's
	sum        atomic.Uint64
}

func newHistogram(name, help string, upper []float64) *histogram {
	return &histogram{name: name, help: help, upper: upper, counts: make([]atomic.Uint64, len(upper)+1)}
}

// exponential is count bounds: start, start*factor, start*factor^2, ...
// (the client's ExponentialBuckets).
func exponential(start, factor float64, count int) []float64 {
	b := make([]float64, count)
	for i := range b {
		b[i] = start
		start *= factor
	}
	return b
}

func (h *histogram) observe(v float64) {
	h.counts[sort.SearchFloat64s(h.upper, v)].Add(1) // the first bound >= v
	for {
		old := h.sum.Load()
		if h.sum.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+v)) {
			return
		}
	}
}

func (h *histogram) appendText(b []byte) []byte {
	b = appendHeader(b, h.name, h.help, "histogram")
	var n uint64
	for i := range h.counts {
		n += h.counts[i].Load()
		le := math.Inf(1)
		if i < len(h.upper) {
			le = h.upper[i]
		}
		b = appendSample(b, h.name+"_bucket", string(appendLabel(nil, "le", formatFloat(le))), float64(n))
	}
	b = appendSample(b, h.name+"_sum", "", math.Float64frombits(h.sum.Load()))
	return appendSample(b, h.name+"_count", "", float64(n))
}
