// Package limits holds the values of the server's client limits and their
// syntax, as redis.conf and CONFIG SET write them: client-output-buffer-limit
// by class of client (OutputBuffer, OutputLimit), maxmemory-clients in bytes
// or as a percentage of maxmemory (MemoryOrPercent), the defaults of the
// other limits, and the machine's and the process's memory, which the
// memory limits are read against.
//
// It knows nothing of connections: the server enforces the limits (its
// limits.go and clientmem.go say where), package internal/clientmem decides
// on the output and memory limits, this package parses, prints and fills in
// defaults. Its error texts are Redis's, word for word, because
// CONFIG SET replies with them.
//
// It imports the standard library and internal/config (redis.conf's sizes),
// nothing else of the server's; packages server, internal/clientmem,
// internal/pubsub, and the table of settings (internal/conf and its engine,
// internal/settings) import it.
package limits
