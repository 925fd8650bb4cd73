package server

import "encoding/json"

// CheckTopology decodes and checks a topology as CUCKOO.CLUSTER SETCONFIG
// does, and returns it encoded again as GETCONFIG would, for the fuzzer.
func CheckTopology(b []byte) ([]byte, error) {
	var conf clusterConfig
	if err := json.Unmarshal(b, &conf); err != nil {
		return nil, err
	}
	t, err := compileTopology(conf)
	if err != nil {
		return nil, err
	}
	return json.Marshal(t.conf)
}

// KeySlot is keySlot.
func KeySlot(key []byte) int { return keySlot(key) }

// SetMigrateWhole sets the largest filter MIGRATE sends in one payload,
// until restore is called.
func SetMigrateWhole(n uint64) (restore func()) {
	old := migrateWhole
	migrateWhole = n
	return func() { migrateWhole = old }
}
