// Package acl is the server's users and their permissions, with Redis's ACL
// rule syntax (ACL SETUSER, ACL files).
//
// A User is immutable: applying rules builds a new one, so a connection
// reads its user's permissions with one atomic load (Ref.Load) and a change
// (ACL SETUSER, ACL LOAD, CONFIG SET requirepass) takes effect for every
// connection at once, as in Redis. Rules apply in order, all or none: a bad
// rule leaves the user as it was.
//
// Commands are known through a Catalog: each served command and subcommand
// has a small integer id, its name and its ACL categories. A user's allowed
// commands are a bitset over those ids; +@category sets the bits of the
// category's commands at the time the rule applies, as Redis does.
//
// Keys: a user holds key patterns, each granting read, write or both
// (~pattern and %RW~pattern both, %R~ read, %W~ write); "allkeys" is ~*.
// Channels (pub/sub): &pattern grants the channels matching it, and the
// pattern subscription of exactly that pattern; "allchannels" is &*; a new
// user has none (resetchannels, Redis 7's default), the default user all
// (CanChannel).
// Passwords are kept as SHA-256 digests only; a check hashes the candidate
// and compares in constant time.
//
// A command is checked before it runs (User.Denial): its id, then each key
// with the access its key spec declares (a KeySpec: the command table's
// specs are ones), then the channels it names (Channels); the first refused
// is the reason ACL LOG records. The server finds the command; this package
// decides.
//
// Invariants: a User is never changed after it is published; the default
// user always exists; a user's command bitset covers every id of its
// catalog.
//
// It imports nothing of the server's; package server imports it.
package acl
