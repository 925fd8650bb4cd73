package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are the server's Prometheus metrics: commands by name, command
// latency, keys, items, filter memory and fsync time. Pass one in
// Config.Metrics and serve Handler (cuckoo serve --metrics-addr).
type Metrics struct {
	reg      *prometheus.Registry
	commands *prometheus.CounterVec
	latency  prometheus.Histogram
	fsync    prometheus.Histogram
}

// New returns a fresh set of metrics with its own registry.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cuckoo_commands_total", Help: "Commands executed, by name.",
		}, []string{"command"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "cuckoo_command_duration_seconds", Help: "Command execution time (before the durability barrier).",
			Buckets: prometheus.ExponentialBuckets(1e-7, 4, 12),
		}),
		fsync: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "cuckoo_fsync_duration_seconds", Help: "Append-only log fsync time.",
			Buckets: prometheus.ExponentialBuckets(1e-5, 4, 10),
		}),
	}
	m.reg.MustRegister(m.commands, m.latency, m.fsync,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// ObserveFsync records one fsync of the log that took d.
func (m *Metrics) ObserveFsync(d time.Duration) { m.fsync.Observe(d.Seconds()) }

// ObserveCommand records one run of the command name that took d.
func (m *Metrics) ObserveCommand(name string, d time.Duration) {
	m.commands.WithLabelValues(name).Inc()
	m.latency.Observe(d.Seconds())
}

// Gauge registers the gauge name, whose value f returns at scrape time. It
// panics if name is registered already (a programming error).
func (m *Metrics) Gauge(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}
