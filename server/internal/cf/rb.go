package cf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"github.com/cuckoohash/cuckoo/redisbloom"
	"github.com/cuckoohash/cuckoo/server/internal/fields"
)

// This file is the RedisBloom layout (cf-layout redisbloom, or a RedisBloom
// dump or payload loaded): the key's filter is a redisbloom.Filter, and
// every method of Filter that differs says so with f.rb first. Its dumps
// are RedisBloom's chunks, its DUMP payload RedisBloom's, its snapshot
// entry the filter whole (redisbloom.WriteTo). It has no load pending:
// CF.LOADCHUNK's data chunks go straight into the live filter, and writes
// between them are taken, as RedisBloom takes them.

// ErrGrowRB is an insert into a RedisBloom-layout filter that found no
// room and could not grow (2^56 buckets, or 65535 sub-filters):
// RedisBloom's reply.
var ErrGrowRB = reply(redisbloom.ErrGrow.Error())

// rbParams is the redisbloom.Params of p, charged through f.mem.
func (f *Filter) rbParams(p Params) redisbloom.Params {
	return redisbloom.Params{
		Capacity: p.Capacity, BucketSize: p.BucketSize, MaxIterations: p.MaxIter, Expansion: p.Expansion,
		Reserve: f.rbReserve,
	}
}

// rbReserve charges a new sub-filter to the Charger of the write in
// progress.
func (f *Filter) rbReserve(n uint64) error {
	var have uint64
	if f.rb != nil {
		have = f.rb.Bytes()
	}
	return f.mem(have, n)
}

// initRB makes f a RedisBloom filter of parameters p, charged to mem first.
func (f *Filter) initRB(p Params, mem Charger) error {
	f.mem = mem
	rb, err := redisbloom.New(f.rbParams(p))
	f.mem = nil
	switch {
	case errors.Is(err, redisbloom.ErrParams):
		return reply(err.Error())
	case errors.Is(err, redisbloom.ErrTooLarge):
		// RedisBloom's reply, word for word; the reason (--maxmemory, the
		// bound on one filter, 2^56 buckets) stays in the chain.
		return replyCause{redisbloom.ErrTooLarge.Error(), err}
	case err != nil:
		return err
	}
	f.p, f.rb = p, rb
	return nil
}

// adoptRB makes f the RedisBloom filter rb, loaded from a dump or a
// payload, with the parameters its figures give.
func (f *Filter) adoptRB(rb *redisbloom.Filter) {
	in := rb.Info()
	f.p = Params{Capacity: in.Buckets * in.BucketSize, BucketSize: int(in.BucketSize), MaxIter: int(in.MaxIterations),
		Expansion: int(in.Expansion), Layout: LayoutRedisBloom}
	f.rb = rb
}

// addRB is Add for the RedisBloom layout: RedisBloom's insert, or with nx
// its insert of an item not already present.
func (f *Filter) addRB(item []byte, nx bool, mem Charger) (bool, error) {
	f.mem = mem
	defer func() { f.mem = nil }()
	added, err := true, error(nil)
	if nx {
		added, err = f.rb.AddUnique(item)
	} else {
		err = f.rb.Add(item)
	}
	switch {
	case errors.Is(err, redisbloom.ErrFull):
		return false, ErrFull
	case errors.Is(err, redisbloom.ErrGrow):
		return false, ErrGrowRB
	}
	return added, err
}

// infoRB is CF.INFO's figures of a RedisBloom filter: RedisBloom's own,
// Size included.
func (f *Filter) infoRB() [8]Figure {
	in := f.rb.Info()
	return [8]Figure{
		{"Size", int64(in.Size)},
		{"Number of buckets", int64(in.Buckets)},
		{"Number of filters", int64(in.Filters)},
		{"Number of items inserted", int64(in.Items)},
		{"Number of items deleted", int64(in.Deletes)},
		{"Bucket size", int64(in.BucketSize)},
		{"Expansion rate", int64(in.Expansion)},
		{"Max iterations", int64(in.MaxIterations)},
	}
}

// isRBHeader reports whether a CF.LOADCHUNK header is RedisBloom's (its
// 38 bytes, or the 46 of 2.2.0-2.2.10) rather than this server's, which
// starts with its magic.
func isRBHeader(header []byte) bool {
	return !bytes.HasPrefix(header, []byte(headerMagic)) && (len(header) == redisbloom.HeaderSize || len(header) == 46)
}

// ErrInvalidHeaderRB is RedisBloom's answer to a CF.LOADCHUNK header of
// the wrong length. A server of RedisBloom's layout gives it for any
// header that is neither RedisBloom's nor this server's (InvalidHeaderRB);
// one of this server's layout takes such a header for a damaged one of its
// own ("Couldn't create filter!").
var ErrInvalidHeaderRB = reply(redisbloom.ErrHeader.Error())

// InvalidHeaderRB reports whether header is neither this server's nor of
// RedisBloom's length.
func InvalidHeaderRB(header []byte) bool {
	return !bytes.HasPrefix(header, []byte(headerMagic)) && !isRBHeader(header)
}

// HeaderBucketRB is the bucket size a RedisBloom dump header gives, or 0
// if header is not one of RedisBloom's current length.
func HeaderBucketRB(header []byte) int64 {
	if len(header) != redisbloom.HeaderSize || bytes.HasPrefix(header, []byte(headerMagic)) {
		return 0
	}
	return int64(binary.LittleEndian.Uint16(header[32:]))
}

// ErrHeaderBucketRB refuses a RedisBloom header whose bucket size is above
// BUCKETSIZE's bound (Defaults.BucketRange), as RedisBloom 8 checks it.
var ErrHeaderBucketRB error = badHeader("a RedisBloom header's bucket size is above the bound half of cf-initial-size sets")

// beginLoadRB makes f the empty RedisBloom filter of a RedisBloom dump
// header, charged to mem.
func (f *Filter) beginLoadRB(header []byte, mem Charger) error {
	rb, err := redisbloom.Load(header, func(n uint64) error { return mem(0, n) })
	switch {
	case errors.Is(err, redisbloom.ErrHeader), errors.Is(err, redisbloom.ErrOldHeader), errors.Is(err, redisbloom.ErrBadFilter):
		return &LoadError{reply: err.Error(), Detail: "a RedisBloom header: " + err.Error()}
	case err != nil:
		// mem refused it. RedisBloom 8 answers so when it cannot allocate
		// the filter (RedisBloom 2.6.28 aborts); the reason is logged.
		return &LoadError{reply: "Couldn't create filter!", Detail: "a RedisBloom header: " + err.Error(), cause: err}
	}
	f.adoptRB(rb)
	return nil
}

// loadChunkRB is LoadChunk for the RedisBloom layout.
func (f *Filter) loadChunkRB(iter int64, chunk []byte) error {
	if err := f.rb.LoadChunk(iter, chunk); err != nil {
		return badChunk("a RedisBloom chunk of %d bytes at iterator %d does not fit one sub-filter", len(chunk), iter)
	}
	return nil
}

// writeSnapshotRB writes a RedisBloom filter as a snapshot entry holds it:
// redisbloom.WriteTo's stream.
func (f *Filter) writeSnapshotRB(w io.Writer) error {
	_, err := f.rb.WriteTo(w)
	return err
}

// ReadSnapshotRB reads a filter writeSnapshotRB wrote into f, a zero
// Filter, or with f nil only checks it. Nothing is charged, as for
// ReadSnapshot.
func ReadSnapshotRB(r *fields.Stream, f *Filter) error {
	rb, err := redisbloom.ReadFrom(r.R, func(uint64) error { return nil }, f == nil)
	if err != nil || f == nil {
		return err
	}
	f.adoptRB(rb)
	return nil
}

// A RedisBloom filter's DUMP payload is RedisBloom's (package redisbloom),
// which Redis with RedisBloom RESTOREs; RESTORE takes one too, told from
// this server's by its first byte, Redis's module type.

// payloadBoundRB bounds a RedisBloom filter's payload: its slots, LZF
// compressed or not, and a few fields a sub-filter.
func (f *Filter) payloadBoundRB() uint64 {
	return f.rb.Bytes() + 32*uint64(f.Filters()) + 256
}

// checkPayloadRB is CheckPayload of a module value's payload.
func checkPayloadRB(b []byte) ([]byte, error) {
	if err := redisbloom.CheckPayload(b); err != nil {
		return nil, errPayload
	}
	return b, nil
}

// loadPayloadRB makes f the RedisBloom filter of payload b, charging it to
// mem as it reads it; on failure it releases what it charged.
func (f *Filter) loadPayloadRB(b []byte, mem Charger, release func(uint64)) error {
	var charged uint64
	var refused error
	rb, err := redisbloom.ParsePayload(b, func(n uint64) error {
		if refused = mem(charged, n); refused != nil {
			return refused
		}
		charged += n
		return nil
	})
	if err != nil {
		release(charged)
		if refused != nil {
			return refused
		}
		if redisbloom.CheckPayload(b) != nil {
			return errPayload
		}
		return errBadPayload
	}
	f.adoptRB(rb)
	return nil
}
