package cf

import "fmt"

// Compat is the RedisBloom release whose replies the server gives where
// RedisBloom changed them: the texts of CF.RESERVE's and CF.INSERT's
// argument errors, the bound on a new filter's capacity, the ranges and
// texts of CONFIG SET cf-*, and the ACL categories of the CF commands.
// Filters themselves (their layout, dumps and payloads) are the same in
// both releases.
type Compat uint8

const (
	// Compat86 answers as RedisBloom 8.6.2, the cuckoo filters Redis 8.6.3
	// is built with: the default, as Redis 8 is where RedisBloom goes on.
	Compat86 Compat = iota
	// Compat26 answers as RedisBloom 2.6.28, the last module for Redis 7,
	// for clients that match its texts.
	Compat26
)

// Compats are the names of the releases, as redisbloom-compat takes them.
var Compats = []string{Compat86: "8.6", Compat26: "2.6"}

func (c Compat) String() string { return Compats[c] }

// MaxNewCapacity is RedisBloom 8's bound on the capacity of a new filter
// (CF.RESERVE's, CF.INSERT's CAPACITY, cf-initial-size): 2^30. A larger
// filter that an older release made, or this server made under Compat26,
// still loads (DUMP and RESTORE, CF.LOADCHUNK, snapshots and logs), as in
// RedisBloom 8, whose loaders check the filter's shape, not its capacity.
const MaxNewCapacity = 1 << 30

// BucketRange is the range of BUCKETSIZE and of cf-bucket-size. RedisBloom
// 8 bounds it by half of cf-initial-size, so that a filter created at that
// capacity has a bucket at least.
func (d *Defaults) BucketRange() (lo, hi int64) {
	if d.Compat == Compat26 || d.InitialSize == 0 {
		return 1, MaxBucketSize
	}
	return 1, min(d.InitialSize/2, MaxBucketSize)
}

// InitialRange is the range of cf-initial-size, and in RedisBloom 8 of
// CF.INSERT's CAPACITY: at least twice cf-bucket-size, at most
// MaxNewCapacity (MaxCapacity under Compat26).
func (d *Defaults) InitialRange() (lo, hi int64) {
	if d.Compat == Compat26 {
		return 2 * d.RangeBucket(), MaxCapacity
	}
	return 2 * d.RangeBucket(), MaxNewCapacity
}

// SettingText is RedisBloom 8's refusal of a CONFIG SET of its setting
// name (the text after Redis's " - "): of a value that is not an integer
// (parsed false), or one out of [lo, hi].
func SettingText(name string, lo, hi int64, parsed bool) string {
	if !parsed {
		return fmt.Sprintf("Invalid value for `%s`", name)
	}
	return fmt.Sprintf("Value for `%s` must be in the range [%d, %d]", name, lo, hi)
}
