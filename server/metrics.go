package server

import "github.com/cuckoohash/cuckoo/server/internal/metrics"

// Metrics are the server's Prometheus metrics: commands by name, command
// latency, keys, items, filter memory and fsync time. Pass one in
// Config.Metrics and serve Handler (cuckoo serve --metrics-addr). They are
// package internal/metrics's.
type Metrics = metrics.Metrics

// NewMetrics returns a fresh set of metrics with its own registry.
func NewMetrics() *Metrics { return metrics.New() }

// attachMetrics registers with m the gauges read from s at scrape time.
func (s *Server) attachMetrics(m *Metrics) {
	gauge := m.Gauge
	gauge("cuckoo_keys", "Keys (filters) in the key space.", func() float64 { return float64(s.store.Len()) })
	gauge("cuckoo_items", "Items in all filters (inserted minus deleted).", func() float64 {
		_, n := s.store.ItemCount()
		return float64(n)
	})
	gauge("cuckoo_filter_memory_bytes", "Bytes of all filters' stages.", func() float64 { return float64(s.store.FilterBytes()) })
	gauge("cuckoo_connected_clients", "Open client connections.", func() float64 {
		s.mu.Lock()
		defer s.mu.Unlock()
		return float64(len(s.clients))
	})
}
