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
// # The commands, as the server serves them
//
// Users are Redis's ACL (the server's cmd_acl.go parses and dispatches,
// this package decides and answers): ACL SETUSER with Redis's rules
// (on/off, >password and #sha256, +command, +@category, +container|sub,
// ~pattern, %R~ and %W~, allkeys, resetkeys, nopass, reset), GETUSER,
// DELUSER, USERS, LIST, WHOAMI, CAT, LOG, SAVE, LOAD, GENPASS, DRYRUN; AUTH
// user password and HELLO ... AUTH user password. requirepass is the
// default user's password (as in Redis: CONFIG SET requirepass changes it);
// the server's Config.ACLFile (--aclfile) holds users, loaded at start when
// it exists (Registry.Load) and written atomically by ACL SAVE
// (Registry.Save).
//
// Protocol. A connection holds the Ref of the user it authenticated as
// (nil before AUTH when the default user needs a password: ErrNoAuth);
// every command loads the user from it (one atomic load) and checks, unless
// the user is unrestricted, the command's bit and the keys its key specs
// name, before anything runs (User.Check), so a denied one changes nothing:
// the user's command bit (ids of the server's dispatch table; categories
// from the command table), then each key its key specs name, for read (RO,
// RW) or write (RW, OW, RM) access. The default user with its default
// rules takes a fast path of two loads. A denial (Denied) answers NOPERM as
// Redis does and is recorded for ACL LOG (Log: merged with an equal one
// less than a minute old); inside MULTI it aborts the transaction
// (EXECABORT), and EXEC checks each command again. Commands that need no
// authentication (AUTH, HELLO, QUIT) are never denied. Changes to a user
// apply to its connections from their next command; a deleted user's
// connections are closed.
//
// Channels are checked as Redis checks them: PUBLISH's channel and each of
// SUBSCRIBE's must match one of the user's &patterns, each of PSUBSCRIBE's
// patterns must be one of them literally (NOPERM "No permissions to access
// a channel", ACL LOG reason "channel"); the default user has allchannels,
// a new user none; a subscriber whose user loses one of its channels or
// patterns (ACL SETUSER, ACL LOAD) is disconnected: Unpermitted decides
// which, the server closes them. Not supported: selectors.
//
// # Replies
//
// The replies this package builds (WriteUser, WriteUsers, WriteList,
// WriteCat, WriteLog, WriteHelp) are written with a *resp.Writer, in RESP2
// or RESP3 as the connection chose; its errors (ErrNoAuth, ErrWrongPass,
// ErrNoFile, *SaveError, *LoadError, *Denied, UserNotFound, ...) are
// replies, their texts Redis's.
//
// It imports nothing of the server's but packages resp (its replies) and
// config (the ACL file's atomic write); package server imports it.
package acl
