// Package metrics holds the server's Prometheus metrics: commands by name,
// command latency and fsync time, which the server observes as it runs, and
// the gauges (keys, items, filter memory, clients) it registers with Gauge
// to be read at scrape time. Handler serves them all, with the Go runtime's
// and the process's go_* and process_* metrics, in the Prometheus text
// format 0.0.4 (cuckoo serve --metrics-addr).
//
// The registry and the text are github.com/VictoriaMetrics/metrics's: it
// writes the format, the go_* and process_* families and Prometheus
// histograms with our buckets. Unlike the Prometheus client with its
// protobuf runtime (2.2 MiB), it costs a `cuckoo serve` little resident
// memory at rest: 16.24 MiB against 16.04 MiB with a hand-written writer
// (bench/scripts/rss-vs-redis.sh, medians of three runs of three rounds).
//
// Each Metrics has its own vm.Set, never the library's default one, so that
// servers in one process (tests start many) count apart and may register the
// same gauge names.
//
// Invariants: a family's name is registered once in a set (a second
// registration panics, the library's check); the set writes its families
// sorted by name, then come the library's go_* and process_* families; a
// histogram's buckets are cumulative when written, ending with le="+Inf"
// equal to its _count, all read under the histogram's lock, so a scrape
// never sees an observation in _count but not in _sum. Counting a command
// already seen allocates nothing: its counter is looked up by the command's
// name in a sync.Map.
//
// What the library cannot say: "# HELP" lines carry no text (the help is in
// comments here and in package server), and process_start_time_seconds is
// when the library was initialised, whole seconds, not /proc's start time.
//
// It lives apart from package server so that a Config (internal/conf) can
// carry one. It imports nothing of the server's; package server and
// internal/conf import it.
package metrics
