package server

import "github.com/cuckoohash/cuckoo/server/internal/metrics"

// Metrics are the server's Prometheus metrics: commands by name, command
// latency, keys, items, filter memory and fsync time. Pass one in
// Config.Metrics and serve Handler (cuckoo serve --metrics-addr). They are
// package internal/metrics's.
type Metrics = metrics.Metrics

// NewMetrics returns a fresh set of metrics with its own registry.
func NewMetrics() *Metrics { return metrics.New() }

// attachMetrics registers with m the gauges read from s at scrape time:
// keys (filters) in the key space, items in all filters (inserted minus
// deleted), bytes of all filters' stages, and open client connections.
func (s *Server) attachMetrics(m *Metrics) {
	m.Gauge("cuckoo_keys", func() float64 { return float64(s.store.Len()) })
	m.Gauge("cuckoo_items", func() float64 {
		_, n := s.store.ItemCount()
		return float64(n)
	})
	m.Gauge("cuckoo_filter_memory_bytes", func() float64 { return float64(s.store.FilterBytes()) })
	m.Gauge("cuckoo_connected_clients", func() float64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return float64(len(s.clients))
	})
}
