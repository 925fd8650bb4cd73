// Package metrics holds the server's Prometheus metrics: commands by name,
// command latency and fsync time, which the server observes as it runs, and
// the gauges (keys, items, filter memory, clients) it registers with Gauge
// to be read at scrape time. Handler serves them all in the Prometheus text
// format (cuckoo serve --metrics-addr).
//
// It lives apart from package server so that a Config (internal/conf) can
// carry one. It imports the standard library and the Prometheus client,
// nothing of the server's; package server and internal/conf import it.
package metrics
