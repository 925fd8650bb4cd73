package server

import (
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// LogFaults makes the log files a server opens fail on command
// (keyspace.LogFaults).
type LogFaults = keyspace.LogFaults

// InjectLogFaults wraps every log file opened until the test ends.
func InjectLogFaults(t testing.TB) *LogFaults { return keyspace.InjectLogFaults(t.Cleanup) }
