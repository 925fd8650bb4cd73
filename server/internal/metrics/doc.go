// Package metrics holds the server's Prometheus metrics: commands by name,
// command latency and fsync time, which the server observes as it runs, and
// the gauges (keys, items, filter memory, clients) it registers with Gauge
// to be read at scrape time. Handler serves them all, with the Go runtime's
// and the process's usual go_* and process_* gauges, in the Prometheus text
// format 0.0.4 (cuckoo serve --metrics-addr).
//
// It writes the format itself rather than link the Prometheus client: that
// client and the protobuf runtime it brings cost every `cuckoo serve` 1.9 MB
// of resident memory at rest (their code and init), metrics on or off.
//
// Invariants: a family's name is registered once (Gauge panics on a second);
// families are written sorted by name and a counter's children sorted by
// label, so a scrape's text is a function of the values alone; a histogram's
// buckets are cumulative when written, ending with le="+Inf" equal to its
// _count. Observations are atomic adds, so a scrape may see an observation's
// count before its sum, never a torn number.
//
// It lives apart from package server so that a Config (internal/conf) can
// carry one. It imports the standard library alone, nothing of the server's;
// package server and internal/conf import it.
package metrics
