package redisbloom_test

import (
	"errors"
	"testing"

	"github.com/cuckoohash/cuckoo/redisbloom"
)

// TestNewRefuses: parameters outside RedisBloom's ranges answer its
// "Could not create filter"; a first sub-filter past 2^56 buckets, or one
// whose bytes Reserve refuses, its "Insufficient memory to create filter",
// keeping Reserve's reason.
func TestNewRefuses(t *testing.T) {
	ok := redisbloom.Params{Capacity: 1000, BucketSize: 2, MaxIterations: 20, Expansion: 1}
	refusal := errors.New("over the limit")
	for _, c := range []struct {
		name   string
		edit   func(*redisbloom.Params)
		want   []error
		reason string
	}{
		{"bucket size 0", func(p *redisbloom.Params) { p.BucketSize = 0 }, []error{redisbloom.ErrParams}, ""},
		{"bucket size 256", func(p *redisbloom.Params) { p.BucketSize = 256 }, []error{redisbloom.ErrParams}, ""},
		{"iterations 0", func(p *redisbloom.Params) { p.MaxIterations = 0 }, []error{redisbloom.ErrParams}, ""},
		{"expansion 32769", func(p *redisbloom.Params) { p.Expansion = 32769 }, []error{redisbloom.ErrParams}, ""},
		{"2^62 buckets", func(p *redisbloom.Params) { p.Capacity, p.BucketSize = 1<<62, 1 }, []error{redisbloom.ErrTooLarge}, ""},
		{"refused", func(p *redisbloom.Params) { p.Reserve = func(uint64) error { return refusal } },
			[]error{redisbloom.ErrTooLarge, refusal}, "over the limit"},
	} {
		p := ok
		c.edit(&p)
		f, err := redisbloom.New(p)
		if f != nil || err == nil {
			t.Errorf("%s: New = %v, %v; want an error", c.name, f, err)
			continue
		}
		for _, w := range c.want {
			if !errors.Is(err, w) {
				t.Errorf("%s: %v is not %v", c.name, err, w)
			}
		}
		if c.reason == "" && err.Error() != c.want[0].Error() {
			t.Errorf("%s: %q, want RedisBloom's %q", c.name, err, c.want[0])
		}
	}
	if _, err := redisbloom.New(ok); err != nil {
		t.Fatal(err)
	}
}
