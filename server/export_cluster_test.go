package server

import (
	"encoding/json"

	"github.com/cuckoohash/cuckoo/server/internal/topology"
)

// CheckTopology decodes and checks a topology as CUCKOO.CLUSTER SETCONFIG
// does, and returns it encoded again as GETCONFIG would, for the fuzzer.
func CheckTopology(b []byte) ([]byte, error) {
	var conf topology.Config
	if err := json.Unmarshal(b, &conf); err != nil {
		return nil, err
	}
	t, err := topology.Compile(conf)
	if err != nil {
		return nil, err
	}
	return json.Marshal(t.Config())
}

// KeySlot is topology.KeySlot.
func KeySlot(key []byte) int { return topology.KeySlot(key) }

// SetMigrateWhole sets the largest filter MIGRATE sends in one payload,
// until restore is called.
func SetMigrateWhole(n uint64) (restore func()) {
	old := migrateWhole
	migrateWhole = n
	return func() { migrateWhole = old }
}
