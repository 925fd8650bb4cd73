//go:build !race

package eval

// raceEnabled is set when the race detector is on; heavy statistical tests
// then shrink, since instrumented code runs several times slower.
const raceEnabled = false
