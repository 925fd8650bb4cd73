//go:build !unix

package cf

import "time"

// cpuTime is 0 where getrusage is not available: the benchmarks then
// report cpu-ns/op as 0.
func cpuTime() time.Duration { return 0 }
