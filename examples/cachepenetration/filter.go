package main

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cuckoohash/cuckoo/filter"
	"github.com/cuckoohash/cuckoo/lockfree"
)

// filterFPR is the filter's target false-positive rate. It gives 12-bit
// fingerprints in 4-slot buckets, the widest 4 slots that a lockfree.Filter
// packs into one 64-bit bucket word; the measured rate at 86% load is about
// 0.17%. A lower rate would take 2-slot buckets, at 2.3 times the memory.
//
// The filter is a lockfree.Filter because HTTP handlers run concurrently:
// GETs read it while DELETEs and POSTs change it, with no lock.
const filterFPR = 0.002

// idKey is the filter's key for an id: its 8 bytes, big-endian.
func idKey(id int64) [8]byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(id))
	return k
}

// buildFilter returns a filter with room for capacity ids holding every id in
// the table, as a service builds it at startup: the database is the source of
// truth, and the filter is rebuilt from it rather than saved.
func buildFilter(ctx context.Context, db *userDB, capacity uint64) (*lockfree.Filter, error) {
	f, err := lockfree.New(filter.Config{Capacity: capacity, FalsePositiveRate: filterFPR})
	if err != nil {
		return nil, err
	}
	err = db.eachID(ctx, func(id int64) error {
		k := idKey(id)
		return f.Insert(k[:])
	})
	if err != nil {
		return nil, fmt.Errorf("build the filter: %w", err)
	}
	return f, nil
}
