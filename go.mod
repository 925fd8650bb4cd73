module github.com/cuckoohash/cuckoo

go 1.26.0

require (
	github.com/anishathalye/porcupine v1.3.1
	github.com/zeebo/xxh3 v1.1.0
)

require (
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
