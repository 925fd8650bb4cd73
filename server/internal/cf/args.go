package cf

import (
	"fmt"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/integer"
)

// Defaults are RedisBloom's cf-* settings (Redis 8's names): the parameters
// of filters created without them, and the bound on growth. Zero fields take
// RedisBloom's defaults (WithDefaults), except BucketSize: 0 means "not set",
// and a filter created without BUCKETSIZE is then built with 4-slot buckets
// (see doc.go) while its capacity is checked against RedisBloom's default of
// 2.
type Defaults struct {
	BucketSize    int64  // cf-bucket-size, 1..255
	InitialSize   int64  // cf-initial-size: CF.ADD's and CF.INSERT's capacity, 4..2^32
	MaxIterations int64  // cf-max-iterations, 1..65535
	Expansion     int64  // cf-expansion-factor, 0..32768
	MaxExpansions int64  // cf-max-expansions, 1..65536: "Number of filters" at which inserts are refused
	Layout        Layout // cf-layout: the layout of the filters CF.RESERVE, CF.ADD and CF.INSERT create
	Compat        Compat // redisbloom-compat: the release whose texts and ranges the commands answer with
}

// WithDefaults fills zero fields (all but BucketSize) with RedisBloom's
// defaults.
func (d Defaults) WithDefaults() Defaults {
	if d.InitialSize == 0 {
		d.InitialSize = DefaultCapacity
	}
	if d.MaxIterations == 0 {
		d.MaxIterations = DefaultMaxIter
	}
	if d.Expansion == 0 {
		d.Expansion = DefaultExpansion
	}
	if d.MaxExpansions == 0 {
		d.MaxExpansions = DefaultMaxExpansions
	}
	return d
}

// RangeBucket is the bucket size capacity ranges are checked against when a
// command gives none: cf-bucket-size, or RedisBloom's default of 2.
func (d *Defaults) RangeBucket() int64 {
	if d.BucketSize == 0 {
		return 2
	}
	return d.BucketSize
}

// Create returns the parameters of a filter of capacity created with the
// defaults (CF.ADD, CF.INSERT); sized says the client gave the capacity
// (CF.INSERT's CAPACITY) rather than taking cf-initial-size.
func (d *Defaults) Create(capacity uint64, sized bool) *Params {
	return d.params(capacity, d.BucketSize, d.MaxIterations, d.Expansion, sized)
}

// params returns the parameters of a new filter. bucket is the bucket size
// asked for (BUCKETSIZE, else cf-bucket-size), 0 if neither: RedisBloom's
// default of 2 in its layout; in this server's (doc.go), 5 slots for a
// filter sized by its client, which is meant to hold about what it was
// sized for, and 4 for one that starts at cf-initial-size and grows.
func (d *Defaults) params(capacity uint64, bucket, maxIter, expansion int64, sized bool) *Params {
	p := &Params{Capacity: capacity, BucketSize: int(bucket), MaxIter: int(maxIter), Expansion: int(expansion), Layout: d.Layout}
	if d.Layout == LayoutRedisBloom {
		if p.BucketSize == 0 {
			p.BucketSize = 2
		}
		return p
	}
	if p.BucketSize == 0 {
		p.BucketSize = 4
		if sized {
			p.BucketSize = 5
		}
	}
	p.Slots = slotsFor(p.BucketSize)
	return p
}

// CheckGrowth refuses inserts into a filter that has as many filters as
// cf-max-expansions allows, as RedisBloom does.
func (d *Defaults) CheckGrowth(f *Filter) error {
	if int64(f.Filters()) >= d.MaxExpansions {
		return ErrMaxExpansions
	}
	return nil
}

// The texts of CF.RESERVE's and CF.INSERT's argument errors, and the bound
// on a new filter's capacity, changed in RedisBloom 8: they follow
// Defaults.Compat, in either layout. This server's layout has a bound of
// its own (MaxCapacity), which RedisBloom 2.6 has not.

// optionText is the reply to a CF.RESERVE option out of [lo, hi].
func optionText(c Compat, name string, lo, hi int64) error {
	if c == Compat26 {
		return reply(fmt.Sprintf("%s: value must be an integer between %d and %d, inclusive.", name, lo, hi))
	}
	return reply(fmt.Sprintf("%s: value must be in the range [%d, %d]", name, lo, hi))
}

// checkCapacity refuses a capacity below 2·bucket or above the bound (see
// above), saying so as RedisBloom; bucketName is how RedisBloom 8 names the
// bucket size in the text.
func (d *Defaults) checkCapacity(capacity, bucket int64, bucketName string) error {
	hi := int64(MaxNewCapacity)
	if d.Compat == Compat26 {
		if capacity < 2*bucket {
			return reply("Capacity must be at least (BucketSize * 2)")
		}
		if d.Layout == LayoutRedisBloom {
			return nil
		}
		hi = MaxCapacity
	}
	if capacity < 2*bucket || capacity > hi {
		return reply(fmt.Sprintf("Capacity must be in the range [%s, %d]", bucketName, hi))
	}
	return nil
}

// argIndex is the index of the first of argv equal to name, ignoring case,
// or -1: RedisBloom finds CF.RESERVE's options this way, anywhere among the
// arguments, so the first of a repeated option counts and words that are
// no option are ignored.
func argIndex(argv [][]byte, name string) int {
	for i, a := range argv {
		if strings.EqualFold(string(a), name) {
			return i
		}
	}
	return -1
}

// ParseReserve parses CF.RESERVE key capacity [BUCKETSIZE b]
// [MAXITERATIONS n] [EXPANSION e] (argv whole, the command's name first;
// the caller checked the count) into the parameters of the filter to
// create, as RedisBloom does: the options are looked up by name in the
// order MAXITERATIONS, BUCKETSIZE, EXPANSION, then the capacity is checked,
// each with RedisBloom's error text.
func ParseReserve(argv [][]byte, d *Defaults) (*Params, error) {
	capacity, ok := integer.Parse(argv[2])
	if !ok {
		return nil, reply("Bad capacity")
	}
	bucket, maxIter, expansion := d.BucketSize, d.MaxIterations, d.Expansion
	bucketLo, bucketHi := d.BucketRange()
	for _, o := range []struct {
		name   string
		lo, hi int64
		dst    *int64
	}{
		{"MAXITERATIONS", 1, MaxIterations, &maxIter},
		{"BUCKETSIZE", bucketLo, bucketHi, &bucket},
		{"EXPANSION", 0, MaxExpansion, &expansion},
	} {
		i := argIndex(argv, o.name)
		if i < 0 {
			continue
		}
		var v int64
		if i+1 < len(argv) {
			v, ok = integer.Parse(argv[i+1])
		}
		if i+1 == len(argv) || !ok {
			return nil, reply("Couldn't parse " + o.name)
		}
		if v < o.lo || v > o.hi {
			return nil, optionText(d.Compat, o.name, o.lo, o.hi)
		}
		*o.dst = v
	}
	rangeBucket := bucket
	if bucket == 0 {
		rangeBucket = 2
	}
	if err := d.checkCapacity(capacity, rangeBucket, "2 * BUCKETSIZE"); err != nil {
		return nil, err
	}
	return d.params(uint64(capacity), bucket, maxIter, expansion, true), nil
}

// ParseInsert parses CF.INSERT's and CF.INSERTNX's arguments after the key,
// [CAPACITY c] [NOCREATE] ITEMS item..., into the parameters of the filter
// to create if the key is missing (nil for NOCREATE) and the items, with
// RedisBloom's error texts; wrongArity is the reply for missing arguments.
func ParseInsert(args [][]byte, d *Defaults, wrongArity error) (create *Params, items [][]byte, err error) {
	capacity, sized, noCreate := uint64(d.InitialSize), false, false
	i := 0
	// RedisBloom tells the options apart by their first letter, so
	// "CAP 100" and "I a b" are CAPACITY and ITEMS.
	for ; i < len(args); i++ {
		var first byte
		if len(args[i]) > 0 {
			first = args[i][0] | 0x20 // lower case, for letters
		}
		switch first {
		case 'c':
			i++
			if i == len(args) {
				return nil, nil, wrongArity
			}
			v, ok := integer.Parse(args[i])
			if !ok {
				return nil, nil, reply("Bad capacity")
			}
			if err := d.checkCapacity(v, d.RangeBucket(), "cf-bucket-size * 2"); err != nil {
				return nil, nil, err
			}
			capacity, sized = uint64(v), true
			continue
		case 'n':
			noCreate = true
			continue
		case 'i':
		default:
			return nil, nil, reply("Unknown argument received")
		}
		break
	}
	items = args[min(i+1, len(args)):]
	if i >= len(args) || len(items) == 0 {
		return nil, nil, wrongArity
	}
	if !noCreate {
		create = d.Create(capacity, sized)
	}
	return create, items, nil
}
