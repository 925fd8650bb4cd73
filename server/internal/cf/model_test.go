package cf_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/cf"
	fld "github.com/cuckoohash/cuckoo/server/internal/fields"
)

// FuzzModel runs operations decoded from the input against a filter and a
// model of it, a multiset of the items added and not deleted, and checks
// after each that the filter agrees with the model where a cuckoo filter
// must:
//   - no false negatives: every item of the model is found;
//   - Count(x) >= the model's count of x (false positives only add);
//   - Inserted() is the model's size, Deleted() the deletes that succeeded
//     (at most, in RedisBloom's layout, which resets it as it compacts);
//   - ADDNX of an item of the model adds nothing;
//   - deleting an item of the model succeeds (deletes are only of items
//     the model holds: deleting an absent one may take another item's
//     only copy, as in any cuckoo filter);
//   - an add refused with "Filter is full" changes neither.
//
// Some operations move the filter through a DUMP payload, a snapshot
// entry or CF.SCANDUMP's chunks and go on with the copy. The input's
// first byte chooses the shape; each operation is 3 bytes: what, and a
// 16-bit item.
func FuzzModel(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0, 1, 0, 3, 1, 0, 4, 1, 0})
	f.Add([]byte{6, 0, 9, 0, 0, 9, 0, 8, 0, 0, 3, 9, 0, 5, 0, 0})
	f.Add([]byte{3, 8, 0, 0, 8, 0, 0, 8, 0, 0, 8, 0, 0, 8, 0, 0, 8, 0, 0, 8, 0, 0, 7, 0, 0})
	rng := rand.New(rand.NewPCG(1, 2))
	for s := range shapes {
		b := make([]byte, 1+3*200)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		b[0] = byte(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 3*400 {
			return
		}
		runModel(t, shapes[int(data[0])%len(shapes)].p, data[1:])
	})
}

// model is the multiset a filter should hold.
type model struct {
	count   map[string]int
	held    []string // a copy of each item held, in no order
	size    int64
	deleted int64
	fresh   int // the next item of the bulk adds, beyond the ops' items
}

func runModel(t *testing.T, p cf.Params, ops []byte) *cf.Filter {
	f := newFilter(t, p)
	m := &model{count: map[string]int{}, fresh: 1 << 20}
	for k := 0; len(ops) >= 3; ops, k = ops[3:], k+1 {
		x := item(int(ops[1]) | int(ops[2])<<8&0x1f00) // 8192 items: repeats are common
		switch op := ops[0] % 12; op {
		case 0, 1, 2, 3: // CF.ADD
			m.add(t, f, x, false)
		case 4: // CF.ADDNX
			m.add(t, f, x, true)
		case 5, 6: // CF.DEL of an item the model holds: x's, or another's
			if len(m.held) == 0 {
				continue
			}
			j := int(ops[1]) % len(m.held)
			if m.count[string(x)] == 0 {
				x = []byte(m.held[j])
			}
			if !f.Del(x) {
				t.Fatalf("op %d: Del(%s) of an item held %d times failed", k, x, m.count[string(x)])
			}
			m.remove(string(x))
		case 7: // CF.EXISTS and CF.COUNT of any item
			if c := m.count[string(x)]; c > 0 && (!f.Exists(x) || f.Count(x) < c) {
				t.Fatalf("op %d: %s held %d times: Exists %v, Count %d", k, x, c, f.Exists(x), f.Count(x))
			}
		case 8: // many new items, so that the filter grows, or until it is full
			for range 150 {
				m.fresh++
				if !m.add(t, f, item(m.fresh), false) {
					break
				}
			}
		case 9: // DUMP and RESTORE
			g := new(cf.Filter)
			if err := g.LoadPayload(f.DumpPayload(), free, func(uint64) {}); err != nil {
				t.Fatalf("op %d: RESTORE of the filter's own payload: %v", k, err)
			}
			f = g
		case 10: // SAVE and a restart
			var w bytes.Buffer
			if _, err := f.WriteSnapshot(&w, nil); err != nil {
				t.Fatal(err)
			}
			g := new(cf.Filter)
			r := &fld.Stream{R: bufio.NewReader(&w)}
			var err error
			if p.Layout == cf.LayoutRedisBloom {
				err = cf.ReadSnapshotRB(r, g)
			} else {
				err = cf.ReadSnapshot(r, g, p.RecordedSlots() != 0)
			}
			if err != nil {
				t.Fatalf("op %d: reading the filter's own snapshot entry: %v", k, err)
			}
			f = g
		case 11: // CF.SCANDUMP into CF.LOADCHUNK
			chunks, iters := scanDump(f)
			if len(chunks) == 0 {
				// RedisBloom dumps an empty filter as nothing at all.
				if f.Params().Layout != cf.LayoutRedisBloom || f.Inserted() != 0 {
					t.Fatalf("op %d: no dump of a filter of %d items", k, f.Inserted())
				}
				continue
			}
			f = loadDump(t, chunks, iters, newMeter(1<<40))
		}
		if err := m.check(f, k%64 == 63 || len(ops) < 6); err != nil {
			t.Fatalf("after op %d: %v", k, err)
		}
	}
	return f
}

// add adds x to f and to the model, unless the filter refuses it as full
// (or, with nx, finds it), and checks what it answered. It reports false
// when the filter was full.
func (m *model) add(t *testing.T, f *cf.Filter, x []byte, nx bool) bool {
	t.Helper()
	ins, c := f.Inserted(), f.Count(x)
	ok, err := f.Add(x, nx, false, free)
	switch {
	case errors.Is(err, cf.ErrFull):
		if f.Inserted() != ins || f.Count(x) != c {
			t.Fatalf("Add(%s) refused as full changed the filter: %d inserted (was %d), count %d (was %d)", x, f.Inserted(), ins, f.Count(x), c)
		}
		return false
	case err != nil:
		t.Fatalf("Add(%s): %v", x, err)
	case !ok && (!nx || !f.Exists(x)):
		t.Fatalf("Add(%s, nx %v) added nothing, and the item is absent", x, nx)
	case !ok:
		// ADDNX found it: held, or a false positive of another item.
	case nx && m.count[string(x)] > 0:
		t.Fatalf("ADDNX of %s, held %d times, added a copy", x, m.count[string(x)])
	default:
		m.count[string(x)]++
		m.held = append(m.held, string(x))
		m.size++
	}
	return true
}

// remove takes a copy of x, deleted from the filter, out of the model.
func (m *model) remove(x string) {
	m.count[x]--
	m.size--
	m.deleted++
	for i, h := range m.held {
		if h == x {
			m.held[i] = m.held[len(m.held)-1]
			m.held = m.held[:len(m.held)-1]
			return
		}
	}
}

// check compares f with the model: its counts always, and with all set
// every item of the model.
func (m *model) check(f *cf.Filter, all bool) error {
	// RedisBloom's layout compacts by itself once the deletes pass a
	// tenth of the items, and resets its delete count, as RedisBloom does.
	rb := f.Params().Layout == cf.LayoutRedisBloom
	if f.Inserted() != m.size || !rb && f.Deleted() != m.deleted || rb && f.Deleted() > m.deleted {
		return fmt.Errorf("%d inserted, %d deleted; the model holds %d, deleted %d", f.Inserted(), f.Deleted(), m.size, m.deleted)
	}
	if !all {
		return nil
	}
	if rb {
		if err := infoMatchesWalk(f); err != nil {
			return err
		}
	}
	for x, c := range m.count {
		if c > 0 && (!f.Exists([]byte(x)) || f.Count([]byte(x)) < c) {
			return fmt.Errorf("%s held %d times: Exists %v, Count %d", x, c, f.Exists([]byte(x)), f.Count([]byte(x)))
		}
	}
	return nil
}

// TestModel runs the model's operations, drawn at random, on every shape:
// a few thousand operations each, whatever the fuzz corpus holds.
func TestModel(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 600
	}
	for i, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			n, p := n, s.p
			if s.name == "fixed/b=5" {
				// Once full, each delete tries every stashed key again
				// (package growing's drainStash: about 4 ms a delete), so
				// fewer operations, on a table they fill.
				n, p.Capacity = n/4, 600
			}
			rng := rand.New(rand.NewPCG(uint64(i), 42))
			ops := make([]byte, 3*n)
			for j := range ops {
				ops[j] = byte(rng.Uint32())
			}
			// Fewer bulk adds and copies than a uniform draw gives: they
			// cost the most.
			for j := 0; j < len(ops); j += 3 {
				if op := ops[j] % 12; op >= 8 && rng.IntN(4) != 0 {
					ops[j] = byte(rng.IntN(8))
				}
			}
			f := runModel(t, p, ops)
			t.Logf("%d items, %d deleted, %d filters", f.Inserted(), f.Deleted(), f.Filters())
			if f.Params().Expansion > 0 && f.Filters() < 2 {
				t.Errorf("a growing filter never grew: %d filters", f.Filters())
			}
		})
	}
}

// infoMatchesWalk checks a RedisBloom-layout filter's CF.INFO, which it
// keeps as it changes, against a walk of its CF.SCANDUMP chunks: one
// chunk a sub-filter (all are below RedisBloom's 16 MiB here), Size
// RedisBloom's structures and every slot, the counts the header's.
func infoMatchesWalk(f *cf.Filter) error {
	chunks, _ := scanDump(f)
	if len(chunks) == 0 {
		return nil // RedisBloom dumps a filter of no items as nothing
	}
	h := chunks[0]
	var slots int64
	for _, c := range chunks[1:] {
		slots += int64(len(c))
	}
	subs := int64(len(chunks) - 1)
	want := [...]int64{40 + 16*subs + slots, -1, subs, int64(binary.LittleEndian.Uint64(h[0:])), int64(binary.LittleEndian.Uint64(h[16:]))}
	in := f.Info()
	for i, fig := range in[:len(want)] {
		if want[i] != -1 && fig.Value != want[i] {
			return fmt.Errorf("CF.INFO's %s is %d, a walk of the dump gives %d", fig.Name, fig.Value, want[i])
		}
	}
	return nil
}

// TestInfoMatchesWalk runs the model on RedisBloom's smallest shape,
// CF.RESERVE k 2 BUCKETSIZE 1 EXPANSION 1, which grows a sub-filter every
// other add and drops them as deletes compact it, and checks CF.INFO's
// figures against a walk of the filter after each of its operations.
func TestInfoMatchesWalk(t *testing.T) {
	p := cf.Params{Capacity: 2, BucketSize: 1, MaxIter: 20, Expansion: 1, Layout: cf.LayoutRedisBloom}
	n := 800
	if testing.Short() {
		n = 400
	}
	rng := rand.New(rand.NewPCG(43, 2))
	ops := make([]byte, 3*n)
	for j := range ops {
		ops[j] = byte(rng.Uint32())
	}
	for j := 0; j < len(ops); j += 3 {
		ops[j+2] = 0 // 256 items: the same ones come back
		if op := ops[j] % 12; op >= 8 && rng.IntN(4) != 0 {
			ops[j] = byte(rng.IntN(8))
		}
	}
	// Prefixes of the operations, so that the walk follows them.
	for k := 3; k <= len(ops); k += 3 * max(1, n/50) {
		f := runModel(t, p, ops[:k])
		if err := infoMatchesWalk(f); err != nil {
			t.Fatalf("after %d operations: %v", k/3, err)
		}
	}
	f := runModel(t, p, ops)
	t.Logf("%d items, %d deleted, %d filters", f.Inserted(), f.Deleted(), f.Filters())
	if f.Filters() < 100 {
		t.Errorf("only %d sub-filters: the shape did not grow as RedisBloom's does", f.Filters())
	}
}

// TestModelDetectsLoss: the model's check fails when the filter loses an
// item behind its back, or counts wrong: the check is not a tautology.
func TestModelDetectsLoss(t *testing.T) {
	f := newFilter(t, shapes[1].p)
	m := &model{count: map[string]int{}}
	for i := range 10 {
		m.add(t, f, item(i), false)
	}
	if err := m.check(f, true); err != nil {
		t.Fatalf("the model and the filter agree, and check says %v", err)
	}
	m.count[string(item(3))]++ // the model thinks item 3 is there twice
	if err := m.check(f, true); err == nil && f.Count(item(3)) < 2 {
		t.Error("check missed a count below the model's")
	}
	m.count[string(item(3))]--
	f.Del(item(3)) // lost behind the model's back
	if err := m.check(f, false); err == nil {
		t.Error("check missed Inserted below the model's size")
	}
	m.size--
	m.deleted++
	if err := m.check(f, true); err == nil && !f.Exists(item(3)) {
		t.Error("check missed an item the filter lost")
	}
}
