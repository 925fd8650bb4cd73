module github.com/cuckoohash/cuckoo/server

go 1.26.0

// The server is developed with the library in this repository (see go.work).
replace github.com/cuckoohash/cuckoo => ../

require (
	github.com/VictoriaMetrics/metrics v1.45.0
	github.com/cuckoohash/cuckoo v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	github.com/tidwall/match v1.2.0
	github.com/tidwall/redcon v1.6.4
	github.com/zeebo/xxh3 v1.1.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/tidwall/btree v1.1.0 // indirect
	github.com/valyala/fastrand v1.1.0 // indirect
	github.com/valyala/histogram v1.2.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
