package metrics

import (
	"net/http"
	"strings"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// Metrics are the server's Prometheus metrics: commands by name, command
// latency, keys, items, filter memory and fsync time. Pass one in
// Config.Metrics and serve Handler (cuckoo serve --metrics-addr).
type Metrics struct {
	set      *vm.Set  // this server's alone: never the library's default set
	commands sync.Map // command name -> *vm.Counter, in set as cuckoo_commands_total{command="name"}
	latency  *vm.PrometheusHistogram
	fsync    *vm.PrometheusHistogram
}

const commandsName = "cuckoo_commands_total"

// New returns a fresh set of metrics with its own registry.
func New() *Metrics {
	// Write the "# HELP" and "# TYPE" lines. The switch is the library's
	// and process-wide; nothing else in the process turns it off.
	vm.ExposeMetadata(true)
	s := vm.NewSet()
	return &Metrics{
		set: s,
		// Command execution time (before the durability barrier): 100 ns to 0.42 s.
		latency: s.NewPrometheusHistogramExt("cuckoo_command_duration_seconds", vm.ExponentialBuckets(1e-7, 4, 12)),
		// Append-only log fsync time: 10 µs to 2.6 s.
		fsync: s.NewPrometheusHistogramExt("cuckoo_fsync_duration_seconds", vm.ExponentialBuckets(1e-5, 4, 10)),
	}
}

// Handler serves the metrics in the Prometheus text format: this server's,
// then the Go runtime's and the process's go_* and process_* ones.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		m.set.WritePrometheus(w)
		vm.WriteProcessMetrics(w)
		vm.WriteFDMetrics(w)
	})
}

// ObserveFsync records one fsync of the log that took d.
func (m *Metrics) ObserveFsync(d time.Duration) { m.fsync.Update(d.Seconds()) }

// ObserveCommand records one run of the command name that took d. For a
// name seen before it allocates nothing: the counter is looked up by name
// rather than by the sample's full name, which would have to be built.
func (m *Metrics) ObserveCommand(name string, d time.Duration) {
	c, ok := m.commands.Load(name)
	if !ok {
		// Two first runs may race here; the set hands both the same counter.
		c, _ = m.commands.LoadOrStore(name,
			m.set.GetOrCreateCounter(commandsName+`{command="`+labelEscaper.Replace(name)+`"}`))
	}
	c.(*vm.Counter).Inc()
	m.latency.Update(d.Seconds())
}

// The library writes label values as given; the text format wants these escaped.
var labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)

// Gauge registers the gauge name, whose value f returns at scrape time. It
// panics if name is registered already or is one the library writes (go_*,
// process_*), a programming error.
func (m *Metrics) Gauge(name string, f func() float64) {
	if name == commandsName || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
		panic("metrics: " + name + " is served already")
	}
	m.set.NewGauge(name, f) // panics on a name the set holds
}
