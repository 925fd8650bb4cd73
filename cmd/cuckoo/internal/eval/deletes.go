package eval

import (
	"fmt"

	"github.com/cuckoohash/cuckoo/filter"
)

// DeleteResult is the delete experiment: a filter of capacity n filled
// with n keys, of which the first half is then deleted.
type DeleteResult struct {
	N              uint64
	Deleted        uint64
	DeleteFailures uint64  // deletes of present keys that found nothing (must be 0)
	FalseNegatives uint64  // kept keys not found (must be 0)
	FPRAbsent      float64 // never-inserted keys reported present
	FPRDeleted     float64 // deleted keys still reported present
	ExpectedFPR    float64 // the filter's expected rate at its load after the deletes
	LoadBefore     float64
	LoadAfter      float64
}

// Deletes runs the delete experiment with f = 12, b = 4.
func Deletes(n uint64, absent int, seed uint64) (DeleteResult, error) {
	r := DeleteResult{N: n, Deleted: n / 2}
	f, err := filter.New(filter.Config{Capacity: n, BucketSize: 4, FingerprintBits: 12, Seed: seed})
	if err != nil {
		return r, err
	}
	ks := keys(int(n), seed)
	for _, k := range ks {
		if err := f.InsertHash(k); err != nil {
			return r, fmt.Errorf("insert: %w", err)
		}
	}
	r.LoadBefore = f.LoadFactor()
	for _, k := range ks[:r.Deleted] {
		if !f.DeleteHash(k) {
			r.DeleteFailures++
		}
	}
	r.LoadAfter = f.LoadFactor()
	for _, k := range ks[r.Deleted:] {
		if !f.ContainsHash(k) {
			r.FalseNegatives++
		}
	}
	hits := 0
	for _, k := range keys(absent, seed+900) {
		if f.ContainsHash(k) {
			hits++
		}
	}
	r.FPRAbsent = float64(hits) / float64(absent)
	hits = 0
	for _, k := range ks[:r.Deleted] {
		if f.ContainsHash(k) {
			hits++
		}
	}
	r.FPRDeleted = float64(hits) / float64(r.Deleted)
	r.ExpectedFPR = f.FalsePositiveRate()
	return r, nil
}
