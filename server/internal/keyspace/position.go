package keyspace

import "github.com/cuckoohash/cuckoo/server/internal/fields"

// A replica's replication position, kept with its data, so that a restarted
// replica continues from its primary's backlog instead of taking a full
// copy.
//
// Protocol. The replica logs each applied batch as one transaction record:
// the primary's ops, then OpReplPos with the replication id and the offset
// after them; a crash keeps the batch and its position together or neither.
// A full copy logs an invalid position and the flush as one record, then a
// RESTORE op a key, then the position; a snapshot's rotation logs the
// position first in the new log generation, with the gate held. A promotion
// (REPLICAOF NO ONE), and a start without --replicaof, log an invalid
// position: from then on the data may take writes the primary never saw.
// Recovery keeps the last position replayed; New adopts it when the server
// starts as a replica.
//
//	OpReplPos  string id, uvarint offset+1 (0: no valid position)

func EncodeReplPos(id string, offset int64) []byte {
	return fields.Writer{OpReplPos}.Str([]byte(id)).Uvarint(uint64(offset + 1))
}

// replayPosition records a logged position.
func (st *Store) replayPosition(b []byte) error {
	r := &fields.Reader{B: b[1:]}
	id := r.Str()
	off := int64(r.Uvarint()) - 1
	if r.Err == nil && len(r.B) != 0 {
		return fields.ErrShort
	}
	if r.Err != nil {
		return r.Err
	}
	if off < 0 {
		st.ReplID, st.ReplOffset = "", -1
	} else {
		st.ReplID, st.ReplOffset = string(id), off
	}
	return nil
}
