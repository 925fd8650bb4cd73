// Package peer is MIGRATE's side of a connection to another server (the
// target): a pool of connections by target, each kept Idle at most, as
// Redis caches its MIGRATE sockets, and calls of one command with one
// one-line reply under a deadline, failing with the error texts Redis's
// MIGRATE gives.
//
// # Protocol
//
// A Conn belongs to one goroutine at a time: Take hands it out of the pool
// (or dials a new one) for one MIGRATE, which makes all its calls on it and
// then Puts it back, so two MIGRATEs never share a connection and replies
// never interleave. Pool's lock guards only the idle connections.
//
// A call either leaves the connection in step with the target (the reply
// was a status, an integer or an error reply: TargetError) or marks it
// Broken: a write or a read failed or timed out (ErrWrite, ErrRead), or the
// reply was neither (the rest of it may still be on the way). A broken
// connection is closed, never put back: Put closes it instead.
//
// Idle connections older than Idle are closed at the next Take, to any
// target; CloseAll closes the rest at shutdown.
//
// # Imports
//
// It imports internal/resp (its writer) and the standard library, nothing
// else of the server's; package server imports it, and passes in the dial
// function, so TLS stays the server's.
package peer
