package lincheck_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/cuckoohash/cuckoo/internal/lincheck"
)

// A register per key: write v, or read it (0 before any write).
type input struct {
	key, write int // write 0: a read
}

var register = lincheck.Model[int, input, int]{
	Key: func(in input) int { return in.key },
	Step: func(s int, in input, out int) (bool, int) {
		if in.write != 0 {
			return true, in.write
		}
		return out == s, s
	},
	Describe: func(in input, out int) string {
		if in.write != 0 {
			return fmt.Sprintf("write(k%d, %d)", in.key, in.write)
		}
		return fmt.Sprintf("read(k%d) = %d", in.key, out)
	},
	DescribeState: func(s int) string { return fmt.Sprint(s) },
}

func op(client int, call, ret int64, in input, out int) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

// TestPartition: keys are checked apart, so a read of one key concurrent
// with a write of another cannot take the other's value, and a history that
// is linearizable key by key is accepted.
func TestPartition(t *testing.T) {
	ok := []porcupine.Operation{
		op(0, 0, 1, input{0, 5}, 0),
		op(1, 0, 3, input{1, 0}, 0), // key 1 is still 0
		op(1, 4, 5, input{0, 0}, 5),
		op(0, 2, 6, input{1, 7}, 0),
	}
	if res := lincheck.Check(t, register, ok, 0, "ok"); res != porcupine.Ok {
		t.Errorf("Check = %v", res)
	}
	bad := []porcupine.Operation{op(0, 0, 1, input{0, 5}, 0), op(1, 2, 3, input{1, 0}, 5)}
	if porcupine.CheckOperations(register.Porcupine(), bad) {
		t.Error("a read of key 1 took key 0's value")
	}
	if got := register.Porcupine().DescribeState(7); got != "7" {
		t.Errorf("DescribeState = %q", got)
	}
}

// TestCheckFails: a history that is not linearizable fails the test, with
// every operation logged and a visualization written.
func TestCheckFails(t *testing.T) {
	ft := &fakeT{TB: t}
	bad := []porcupine.Operation{op(0, 0, 1, input{0, 5}, 0), op(1, 2, 3, input{0, 0}, 4)}
	done := make(chan struct{})
	go func() { // Fatalf ends the goroutine, as it ends a test's
		defer close(done)
		lincheck.Check(ft, register, bad, 0, "history 3")
	}()
	<-done
	logs := strings.Join(ft.logs, "\n")
	if ft.fatal != "history 3 is not linearizable" ||
		!strings.Contains(logs, "client 1 [2, 3] read(k0) = 4") ||
		!strings.Contains(logs, "visualization: ") {
		t.Errorf("failed with %q, logged:\n%s", ft.fatal, logs)
	}
}

type fakeT struct {
	testing.TB
	logs  []string
	fatal string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
