package hashmap_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/cuckoohash/cuckoo/hashmap"
	"github.com/cuckoohash/cuckoo/internal/lincheck"
)

// The linearizability check records short concurrent histories of
// operations on a few keys, while background writers churn other keys
// (displacements, growth), and asks porcupine whether each history has a
// sequential explanation under the model of a map. Operations on different
// keys commute, so histories are partitioned by key (internal/lincheck).

type linOp uint8

const (
	opLoad linOp = iota
	opStore
	opLoadOrStore
	opLoadAndDelete
	opSwap
	opComputeInc
	opComputeDelete
	numOps
)

type linInput struct {
	op  linOp
	key int
	val int
}

type linOutput struct {
	val int
	ok  bool
}

// linState is one key's state in the model.
type linState struct {
	val     int
	present bool
}

var mapModel = lincheck.Model[linState, linInput, linOutput]{
	Key: func(in linInput) int { return in.key },
	Step: func(s linState, in linInput, out linOutput) (bool, linState) {
		switch in.op {
		case opLoad:
			return out == linOutput{s.val, s.present} || !s.present && !out.ok && out.val == 0, s
		case opStore:
			return true, linState{in.val, true}
		case opLoadOrStore:
			if s.present {
				return out == linOutput{s.val, true}, s
			}
			return out == linOutput{in.val, false}, linState{in.val, true}
		case opLoadAndDelete:
			return out == linOutput{s.val, s.present}, linState{}
		case opSwap:
			return out == linOutput{s.val, s.present}, linState{in.val, true}
		case opComputeInc:
			return out == linOutput{s.val + 1, true}, linState{s.val + 1, true}
		case opComputeDelete:
			return out == linOutput{0, false}, linState{}
		}
		return false, s
	},
	Describe: func(in linInput, out linOutput) string {
		names := [...]string{"Load", "Store", "LoadOrStore", "LoadAndDelete", "Swap", "ComputeInc", "ComputeDelete"}
		return fmt.Sprintf("%s(%d, %d) -> %d, %v", names[in.op], in.key, in.val, out.val, out.ok)
	},
}

func apply(m *hashmap.Map[int, int], in linInput) linOutput {
	var out linOutput
	switch in.op {
	case opLoad:
		out.val, out.ok = m.Load(in.key)
	case opStore:
		m.Store(in.key, in.val)
	case opLoadOrStore:
		out.val, out.ok = m.LoadOrStore(in.key, in.val)
	case opLoadAndDelete:
		out.val, out.ok = m.LoadAndDelete(in.key)
	case opSwap:
		out.val, out.ok = m.Swap(in.key, in.val)
	case opComputeInc:
		out.val, out.ok = m.Compute(in.key, func(old int, _ bool) (int, hashmap.ComputeOp) { return old + 1, hashmap.UpdateOp })
	case opComputeDelete:
		out.val, out.ok = m.Compute(in.key, func(int, bool) (int, hashmap.ComputeOp) { return 0, hashmap.DeleteOp })
	}
	return out
}

func TestLinearizable(t *testing.T) {
	for _, hs := range hashers {
		t.Run(hs.name, func(t *testing.T) {
			histories := 60
			if testing.Short() {
				histories = 15
			}
			for h := range histories {
				runHistory(t, hs.opts, uint64(h))
			}
		})
	}
}

// runHistory records one history: 3 clients, 60 operations each, on 4 keys,
// with Loads weighted up (they are the lock-free path), while a churn
// goroutine inserts and deletes other keys, growing the table.
func runHistory(t *testing.T, opts []hashmap.Option, seed uint64) {
	const clients, opsPerClient, keys = 3, 60, 4
	m := hashmap.New[int, int](opts...)
	var clock atomic.Int64
	var mu sync.Mutex
	var history []porcupine.Operation
	var stop atomic.Bool
	var churn sync.WaitGroup
	churn.Go(func() {
		for k := 100; !stop.Load(); k++ {
			m.Store(k, k)
			if k%3 == 0 {
				m.Delete(k - 50)
			}
		}
	})
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(c)))
			for i := range opsPerClient {
				op := linOp(r.IntN(int(numOps) + 3))
				if op >= numOps {
					op = opLoad
				}
				in := linInput{op: op, key: r.IntN(keys), val: c*1000 + i + 1}
				call := clock.Add(1)
				out := apply(m, in)
				ret := clock.Add(1)
				mu.Lock()
				history = append(history, porcupine.Operation{ClientId: c, Input: in, Call: call, Output: out, Return: ret})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	churn.Wait()
	lincheck.Check(t, mapModel, history, 10*time.Second, fmt.Sprintf("history %d", seed))
	check(t, m)
}
