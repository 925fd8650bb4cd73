module github.com/cuckoohash/cuckoo/examples

go 1.26.0

require (
	github.com/cuckoohash/cuckoo v0.0.0-00010101000000-000000000000
	github.com/cuckoohash/cuckoo/server v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	modernc.org/sqlite v1.62.0
)

require (
	github.com/VictoriaMetrics/metrics v1.45.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/tidwall/btree v1.1.0 // indirect
	github.com/tidwall/match v1.2.0 // indirect
	github.com/tidwall/redcon v1.6.4 // indirect
	github.com/valyala/fastrand v1.1.0 // indirect
	github.com/valyala/histogram v1.2.0 // indirect
	github.com/zeebo/xxh3 v1.1.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

// The examples are developed with the library and the tool in this
// repository (see go.work).
replace github.com/cuckoohash/cuckoo => ..

replace github.com/cuckoohash/cuckoo/server => ../server
