package server

import (
	"github.com/cuckoohash/cuckoo/server/internal/cf"
	"github.com/cuckoohash/cuckoo/server/internal/keyspace"
)

// DecodeOp exposes the op decoder, for FuzzDecodeOp.
func DecodeOp(b []byte) error {
	_, err := keyspace.DecodeOp(b)
	return err
}

// LoadPayload exposes RESTORE's payload decoder, for FuzzDecodeOp.
func LoadPayload(b []byte) error {
	return new(cf.Filter).LoadPayload(b, func(_, _ uint64) error { return nil }, func(uint64) {})
}
