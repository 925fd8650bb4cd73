package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// progress is how far the churner has gone, for the checkers to tell which
// entries are certainly in the list, certainly out, or changing. Each counter
// is a prefix of its group: entries [0, addBegun) of the added group have had
// their CF.ADD sent (or about to be), [0, added) have had it answered; the
// same for the removable group's CF.DEL.
//
// The server answers a write only once the filter holds it, and a lookup sees
// every write answered before it was sent. So a checker that reads added
// before sending its lookup and addBegun after the answer arrives knows: an
// entry below added was in the list for the whole lookup (it must be
// reported blocked); one at or above addBegun was not yet (it must not be,
// except for a false positive); one in between was changing, and any answer
// is right.
type progress struct {
	addBegun, added      atomic.Int64
	removeBegun, removed atomic.Int64
}

// churn adds the added group's entries and removes the removable group's,
// alternately, one command at a time, publishing each step in p.
func churn(ctx context.Context, c *redis.Client, key string, g groups, p *progress) error {
	for i := range max(g.added, g.removable) {
		if i < g.added {
			p.addBegun.Store(int64(i + 1))
			if err := c.CFAdd(ctx, key, g.addedName(i)).Err(); err != nil {
				return fmt.Errorf("CF.ADD %s: %w", g.addedName(i), err)
			}
			p.added.Store(int64(i + 1))
		}
		if i < g.removable {
			p.removeBegun.Store(int64(i + 1))
			ok, err := c.CFDel(ctx, key, g.removableName(i)).Result()
			if err != nil {
				return fmt.Errorf("CF.DEL %s: %w", g.removableName(i), err)
			}
			if !ok {
				// The entry was loaded and not removed before: its
				// fingerprint must be there.
				return fmt.Errorf("%w: CF.DEL %s found nothing", errFalseNegative, g.removableName(i))
			}
			p.removed.Store(int64(i + 1))
		}
	}
	return nil
}

// tally is what one checker saw. "Listed" items were in the list for the
// whole lookup and must be blocked; "removed" ones had been removed before it
// and "unlisted" ones were not in the list during it: those are blocked only
// by false positives. Items that changed during the lookup are counted in
// changing and not judged.
type tally struct {
	calls, items, blocked               int64
	listed, listedMissed                int64
	removed, removedBlocked             int64
	unlisted, unlistedBlocked, changing int64
	firstMiss                           string // the first listed item answered absent
}

func (t *tally) add(u tally) {
	t.calls += u.calls
	t.items += u.items
	t.blocked += u.blocked
	t.listed += u.listed
	t.listedMissed += u.listedMissed
	t.removed += u.removed
	t.removedBlocked += u.removedBlocked
	t.unlisted += u.unlisted
	t.unlistedBlocked += u.unlistedBlocked
	t.changing += u.changing
	if t.firstMiss == "" {
		t.firstMiss = u.firstMiss
	}
}

// item is one name a checker looks up, with what it knows of it.
type item struct {
	name  string
	group int // groupStable, ...
	j     int // its index in the group
}

const (
	groupStable = iota
	groupRemovable
	groupAdded
	groupClean
)

// checker looks up random names, batch at a time (batch 1: CF.EXISTS; more:
// CF.MEXISTS), and judges each answer against p, until stop is closed. It
// signals ready after its first lookup. The names are 40% stable entries,
// 15% removable ones, 15% of the added group and 30% clean.
func checker(ctx context.Context, c *redis.Client, key string, g groups, p *progress, seed uint64, batch int, ready func(), stop <-chan struct{}) (tally, error) {
	rng := rand.New(rand.NewPCG(seed, 0xb10c))
	var t tally
	items := make([]item, batch)
	args := make([]any, batch)
	for {
		select {
		case <-stop:
			if t.calls > 0 {
				return t, nil
			}
		default:
		}
		for k := range items {
			var it item
			switch r := rng.Float64(); {
			case r < 0.40:
				it = item{group: groupStable, j: rng.IntN(g.stable)}
				it.name = g.stableName(it.j)
			case r < 0.55:
				it = item{group: groupRemovable, j: rng.IntN(g.removable)}
				it.name = g.removableName(it.j)
			case r < 0.70:
				it = item{group: groupAdded, j: rng.IntN(g.added)}
				it.name = g.addedName(it.j)
			default:
				it = item{group: groupClean, j: rng.IntN(g.clean)}
				it.name = g.cleanName(it.j)
			}
			items[k], args[k] = it, it.name
		}
		added, removed := p.added.Load(), p.removed.Load() // before the lookup
		var answers []bool
		if batch == 1 {
			ok, err := c.CFExists(ctx, key, args[0]).Result()
			if err != nil {
				return t, fmt.Errorf("CF.EXISTS: %w", err)
			}
			answers = []bool{ok}
		} else {
			var err error
			if answers, err = c.CFMExists(ctx, key, args...).Result(); err != nil {
				return t, fmt.Errorf("CF.MEXISTS: %w", err)
			}
			if len(answers) != batch {
				return t, fmt.Errorf("CF.MEXISTS of %d items answered %d", batch, len(answers))
			}
		}
		addBegun, removeBegun := p.addBegun.Load(), p.removeBegun.Load() // after it
		t.calls++
		t.items += int64(batch)
		for k, it := range items {
			blocked := answers[k]
			if blocked {
				t.blocked++
			}
			switch j := int64(it.j); {
			case it.group == groupStable,
				it.group == groupRemovable && j >= removeBegun,
				it.group == groupAdded && j < added:
				t.listed++
				if !blocked {
					t.listedMissed++
					if t.firstMiss == "" {
						t.firstMiss = it.name
					}
				}
			case it.group == groupRemovable && j < removed:
				t.removed++
				if blocked {
					t.removedBlocked++
				}
			case it.group == groupClean, it.group == groupAdded && j >= addBegun:
				t.unlisted++
				if blocked {
					t.unlistedBlocked++
				}
			default:
				t.changing++
			}
		}
		if t.calls == 1 {
			ready()
		}
	}
}
