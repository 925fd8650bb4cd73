package keyspace

import "errors"

// The key space's errors. Each says what happened, not what a client is
// told: the server's command layer chooses the reply for each (in Redis's
// or RedisBloom's words), and a detail an error carries after the
// sentinel's text (fmt.Errorf("%w: ...")) follows that reply.
var (
	// ErrNotFound: the key is missing where the write needs it.
	ErrNotFound = errors.New("keyspace: no such filter")
	// ErrNoSuchKey: RENAME's source is missing.
	ErrNoSuchKey = errors.New("keyspace: no such key to rename")
	// ErrItemExists: the key exists where the write creates it.
	ErrItemExists = errors.New("keyspace: the key exists")
	// ErrBusyKey: RESTORE without REPLACE found the key.
	ErrBusyKey = errors.New("keyspace: the key to restore exists")
	// ErrOOM: the memory a write needed was refused (maxmemory, or the
	// bound on one filter).
	ErrOOM = errors.New("keyspace: memory refused")
	// ErrLoading: the key has a CF.LOADCHUNK load pending, and takes no
	// other write until its last chunk.
	ErrLoading = errors.New("keyspace: the key is being loaded by chunks")
	// ErrReadonly: this server is a replica, whose data only its
	// primary's stream changes.
	ErrReadonly = errors.New("keyspace: a replica takes no writes from clients")
	// ErrMisconf is wrapped by the error of a failed log: writes are
	// refused until it can take them again (aof.go).
	ErrMisconf = errors.New("keyspace: the append-only log cannot be written")
)
