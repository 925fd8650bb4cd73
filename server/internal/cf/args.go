package cf

import (
	"fmt"
	"strconv"
	"strings"
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
// defaults (CF.ADD, CF.INSERT).
func (d *Defaults) Create(capacity uint64) *Params {
	p := &Params{Capacity: capacity, BucketSize: int(d.BucketSize), MaxIter: int(d.MaxIterations), Expansion: int(d.Expansion), Layout: d.Layout}
	switch {
	case p.BucketSize != 0:
	case d.Layout == LayoutRedisBloom:
		p.BucketSize = 2 // RedisBloom's default
	default:
		p.BucketSize = 4 // see doc.go: the shape whose bucket word holds four fingerprints
	}
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

func parseInt(b []byte) (int64, bool) {
	v, err := strconv.ParseInt(string(b), 10, 64)
	return v, err == nil
}

// ParseReserve parses CF.RESERVE's arguments after the key, capacity
// [BUCKETSIZE b] [MAXITERATIONS n] [EXPANSION e] (pairs: the caller checked
// the count), into the parameters of the filter to create, with
// RedisBloom's error texts.
func ParseReserve(args [][]byte, d *Defaults) (*Params, error) {
	capacity, ok := parseInt(args[0])
	if !ok {
		return nil, reply("Bad capacity")
	}
	bucket, maxIter, expansion := d.BucketSize, d.MaxIterations, d.Expansion
	for i := 1; i+1 < len(args); i += 2 {
		var err error
		switch strings.ToUpper(string(args[i])) {
		case "BUCKETSIZE":
			err = reserveOption("BUCKETSIZE", args[i+1], 1, MaxBucketSize, &bucket)
		case "MAXITERATIONS":
			err = reserveOption("MAXITERATIONS", args[i+1], 1, MaxIterations, &maxIter)
		case "EXPANSION":
			err = reserveOption("EXPANSION", args[i+1], 0, MaxExpansion, &expansion)
		default:
			err = reply("Unknown argument received")
		}
		if err != nil {
			return nil, err
		}
	}
	rangeBucket := bucket
	if bucket == 0 {
		rangeBucket = 2
	}
	if capacity < 2*rangeBucket || capacity > MaxCapacity {
		return nil, reply(fmt.Sprintf("Capacity must be in the range [2 * BUCKETSIZE, %d]", int64(MaxCapacity)))
	}
	p := d.Create(uint64(capacity))
	if bucket != 0 {
		p.BucketSize = int(bucket)
	}
	p.MaxIter, p.Expansion = int(maxIter), int(expansion)
	return p, nil
}

// reserveOption parses CF.RESERVE's option value v into *dst, checked
// against [lo, hi], with RedisBloom's error texts.
func reserveOption(name string, v []byte, lo, hi int64, dst *int64) error {
	n, ok := parseInt(v)
	if !ok {
		return reply("Couldn't parse " + name)
	}
	if n < lo || n > hi {
		return reply(fmt.Sprintf("%s: value must be in the range [%d, %d]", name, lo, hi))
	}
	*dst = n
	return nil
}

// ParseInsert parses CF.INSERT's and CF.INSERTNX's arguments after the key,
// [CAPACITY c] [NOCREATE] ITEMS item..., into the parameters of the filter
// to create if the key is missing (nil for NOCREATE) and the items, with
// RedisBloom's error texts; wrongArity is the reply for missing arguments.
func ParseInsert(args [][]byte, d *Defaults, wrongArity error) (create *Params, items [][]byte, err error) {
	create = d.Create(uint64(d.InitialSize))
	i := 0
	for ; i < len(args); i++ {
		switch strings.ToUpper(string(args[i])) {
		case "CAPACITY":
			i++
			if i == len(args) {
				return nil, nil, wrongArity
			}
			v, ok := parseInt(args[i])
			if !ok {
				return nil, nil, reply("Bad capacity")
			}
			if v < 2*d.RangeBucket() || v > MaxCapacity {
				return nil, nil, reply(fmt.Sprintf("Capacity must be in the range [cf-bucket-size * 2, %d]", int64(MaxCapacity)))
			}
			if create != nil {
				create.Capacity = uint64(v)
			}
			continue
		case "NOCREATE":
			create = nil
			continue
		case "ITEMS":
		default:
			return nil, nil, reply("Unknown argument received")
		}
		break
	}
	items = args[min(i+1, len(args)):]
	if i >= len(args) || len(items) == 0 {
		return nil, nil, wrongArity
	}
	return create, items, nil
}
