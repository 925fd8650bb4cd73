module github.com/cuckoohash/cuckoo

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/redis/go-redis/v9 v9.23.0
	github.com/schollz/progressbar/v3 v3.19.1
	github.com/tidwall/match v1.1.1
	github.com/tidwall/redcon v1.6.4
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/term v0.44.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/mitchellh/colorstring v0.0.0-20190213212951-d06e56a500db // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/tidwall/btree v1.1.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
