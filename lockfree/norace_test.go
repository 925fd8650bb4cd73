//go:build !race

package lockfree_test

// raceEnabled is set when the race detector is on; single-goroutine
// statistical tests then shrink, since instrumented code runs several times
// slower and they have no race to find.
const raceEnabled = false
