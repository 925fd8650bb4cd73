module github.com/cuckoohash/cuckoo/bench

go 1.26.0

replace github.com/cuckoohash/cuckoo => ../

require (
	github.com/FastFilter/xorfilter v0.4.2-0.20260120015552-4e5a4d9df65a
	github.com/alphadose/haxmap v1.4.0
	github.com/bits-and-blooms/bloom/v3 v3.7.1
	github.com/cuckoohash/cuckoo v0.0.0-00010101000000-000000000000
	github.com/orcaman/concurrent-map/v2 v2.0.1
	github.com/panjf2000/gnet/v2 v2.9.7
	github.com/puzpuzpuz/xsync/v4 v4.5.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/seiflotfy/cuckoofilter v0.0.0-20240715131351-a2f2c23f1771
	github.com/tidwall/redcon v1.6.4
	github.com/zeebo/xxh3 v1.1.0
	golang.org/x/sys v0.48.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.2 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-metro v0.0.0-20200812162917-85c65e2d0165 // indirect
	github.com/klauspost/cpuid/v2 v2.4.0 // indirect
	github.com/panjf2000/ants/v2 v2.11.3 // indirect
	github.com/tidwall/btree v1.1.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	go.uber.org/zap v1.27.0 // indirect
	golang.org/x/exp v0.0.0-20221031165847-c99f073a8326 // indirect
	golang.org/x/sync v0.11.0 // indirect
	gopkg.in/natefinch/lumberjack.v2 v2.2.1 // indirect
)
