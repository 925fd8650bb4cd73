package command

import "strings"

// The key-space commands beyond generic.go's: expiry (EXPIRE and its kin,
// TTL, PERSIST, EXPIRETIME), RENAME, RANDOMKEY, DUMP and RESTORE, OBJECT and
// MEMORY, with Redis 7.2's arity, flags, ACL categories, tips, key specs,
// since and arguments. RANDOMKEY's touches_arbitrary_keys flag, which Flag
// lacks, is left out.

var (
	keyRWUpdate = []KeySpec{{Flags: []string{"RW", "update"}, Begin: 1, Step: 1}}
	keyROAccess = []KeySpec{{Flags: []string{"RO", "access"}, Begin: 1, Step: 1}}
	keyROSub    = []KeySpec{{Flags: []string{"RO"}, Begin: 2, Step: 1}}
	keyArg      = Arg{Name: "key", Type: Key}
)

// migrateKeys finds MIGRATE's keys as Redis's migrateGetKeys does: those
// after KEYS (skipping AUTH's and AUTH2's passwords) if the key argument is
// empty, else the key argument.
func migrateKeys(args [][]byte) []int {
	if len(args) < 6 {
		return nil
	}
	for i := 6; i < len(args); i++ {
		switch strings.ToLower(string(args[i])) {
		case "auth":
			i++
		case "auth2":
			i += 2
		case "keys":
			if len(args[3]) != 0 {
				return []int{3}
			}
			var out []int
			for j := i + 1; j < len(args); j++ {
				out = append(out, j)
			}
			return out
		}
	}
	return []int{3}
}

// restoreArgs are RESTORE's arguments, and RESTORE-ASKING's.
var restoreArgs = []Arg{
	keyArg,
	{Name: "ttl", Type: Integer},
	{Name: "serialized-value", Type: String},
	{Name: "replace", Type: PureToken, Token: "REPLACE", Optional: true, Since: "3.0.0"},
	{Name: "absttl", Type: PureToken, Token: "ABSTTL", Optional: true, Since: "5.0.0"},
	{Name: "seconds", Type: Integer, Token: "IDLETIME", Optional: true, Since: "5.0.0"},
	{Name: "frequency", Type: Integer, Token: "FREQ", Optional: true, Since: "5.0.0"},
}

// expireCondition is EXPIRE's NX|XX|GT|LT, added in 7.0.0.
var expireCondition = Arg{Name: "condition", Type: OneOf, Optional: true, Since: "7.0.0", Args: []Arg{
	{Name: "nx", Type: PureToken, Token: "NX"},
	{Name: "xx", Type: PureToken, Token: "XX"},
	{Name: "gt", Type: PureToken, Token: "GT"},
	{Name: "lt", Type: PureToken, Token: "LT"},
}}

func expireSpec(name, since, summary string, when Arg) *Spec {
	return &Spec{
		Name: name, Arity: -3, Flags: Write | Fast, ACL: "keyspace", Keys: keyRWUpdate,
		Summary: summary, Since: since, Group: "generic", Complexity: "O(1)",
		Args: []Arg{keyArg, when, expireCondition},
	}
}

func ttlSpec(name, since, summary string, tips []string) *Spec {
	return &Spec{
		Name: name, Arity: 2, Flags: ReadOnly | Fast, ACL: "keyspace", Keys: keyROAccess, Tips: tips,
		Summary: summary, Since: since, Group: "generic", Complexity: "O(1)",
		Args: []Arg{keyArg},
	}
}

func objectSub(name, since, summary string) *Spec {
	return &Spec{
		Name: "object|" + name, Arity: 3, Flags: ReadOnly, ACL: "keyspace", Keys: keyROSub,
		Tips: []string{"nondeterministic_output"}, Summary: summary, Since: since, Group: "generic",
		Complexity: "O(1)", Args: []Arg{keyArg},
	}
}

func keyspaceSpecs() []*Spec {
	nondet := []string{"nondeterministic_output"}
	return []*Spec{
		expireSpec("expire", "1.0.0", "Gives a key a time to live, in seconds",
			Arg{Name: "seconds", Type: Integer}),
		expireSpec("pexpire", "2.6.0", "Gives a key a time to live, in milliseconds",
			Arg{Name: "milliseconds", Type: Integer}),
		expireSpec("expireat", "1.2.0", "Makes a key expire at a Unix time, in seconds",
			Arg{Name: "unix-time-seconds", Type: UnixTime}),
		expireSpec("pexpireat", "2.6.0", "Makes a key expire at a Unix time, in milliseconds",
			Arg{Name: "unix-time-milliseconds", Type: UnixTime}),
		ttlSpec("ttl", "1.0.0", "Returns a key's remaining time to live, in seconds", nondet),
		ttlSpec("pttl", "2.6.0", "Returns a key's remaining time to live, in milliseconds", nondet),
		ttlSpec("expiretime", "7.0.0", "Returns the Unix time, in seconds, at which a key expires", nil),
		ttlSpec("pexpiretime", "7.0.0", "Returns the Unix time, in milliseconds, at which a key expires", nil),
		&Spec{
			Name: "persist", Arity: 2, Flags: Write | Fast, ACL: "keyspace", Keys: keyRWUpdate,
			Summary: "Removes a key's time to live, so that it no longer expires", Since: "2.2.0",
			Group: "generic", Complexity: "O(1)", Args: []Arg{keyArg},
		},
		&Spec{
			Name: "rename", Arity: 3, Flags: Write, ACL: "keyspace",
			Keys: []KeySpec{
				{Flags: []string{"RW", "access", "delete"}, Begin: 1, Step: 1},
				{Flags: []string{"OW", "update"}, Begin: 2, Step: 1},
			},
			Summary: "Moves a key's filter, and its time to live, to another name, replacing what is there",
			Since:   "1.0.0", Group: "generic", Complexity: "O(1)",
			Args: []Arg{keyArg, {Name: "newkey", Type: Key, KeySpec: 1}},
		},
		&Spec{
			Name: "renamenx", Arity: 3, Flags: Write | Fast, ACL: "keyspace",
			Keys: []KeySpec{
				{Flags: []string{"RW", "access", "delete"}, Begin: 1, Step: 1},
				{Flags: []string{"OW", "insert"}, Begin: 2, Step: 1},
			},
			Summary: "Moves a key's filter to another name unless that name is taken",
			Since:   "1.0.0", Group: "generic", Complexity: "O(1)",
			Args: []Arg{keyArg, {Name: "newkey", Type: Key, KeySpec: 1}},
		},
		&Spec{
			Name: "randomkey", Arity: 1, Flags: ReadOnly, ACL: "keyspace",
			Tips:    []string{"request_policy:all_shards", "response_policy:special", "nondeterministic_output"},
			Summary: "Returns a key chosen at random, or nil when there is none",
			Since:   "1.0.0", Group: "generic", Complexity: "O(n) for n keys",
		},
		&Spec{
			Name: "dump", Arity: 2, Flags: ReadOnly, ACL: "keyspace", Keys: keyROAccess, Tips: nondet,
			Summary: "Serializes a key's filter into a payload that RESTORE takes",
			Since:   "2.6.0", Group: "generic", Complexity: "O(n) for n buckets",
			Args: []Arg{keyArg},
		},
		&Spec{
			Name: "restore", Arity: -4, Flags: Write | DenyOOM, ACL: "keyspace dangerous",
			Keys:    []KeySpec{{Flags: []string{"OW", "update"}, Begin: 1, Step: 1}},
			DataArg: 3,
			Summary: "Creates a key from a DUMP payload, with a time to live or none",
			Since:   "2.6.0", Group: "generic", Complexity: "O(n) for n buckets of the payload",
			Args: restoreArgs,
		},
		&Spec{
			Name: "restore-asking", Arity: -4, Flags: Write | DenyOOM | Asking, ACL: "keyspace dangerous",
			Keys:    []KeySpec{{Flags: []string{"OW", "update"}, Begin: 1, Step: 1}},
			DataArg: 3,
			Summary: "Creates a key from a DUMP payload on a slot being imported: what MIGRATE sends",
			Since:   "3.0.0", Group: "server", Complexity: "O(n) for n buckets of the payload",
			Args: restoreArgs,
		},
		&Spec{
			Name: "migrate", Arity: -6, Flags: Write, ACL: "keyspace dangerous", Tips: nondet,
			Keys: []KeySpec{
				{Flags: []string{"RW", "access", "delete", "incomplete"}, Begin: 3, Step: 1},
				{Flags: []string{"RW", "access", "delete", "incomplete"}, Begin: -2, Keyword: "KEYS", LastKey: -1, Step: 1},
			},
			KeysProc: migrateKeys,
			Summary:  "Moves keys to another server, atomically: each is restored there, then deleted here",
			Since:    "2.6.0", Group: "generic", Complexity: "O(n) for the keys' n buckets, and a round trip a key",
			Args: []Arg{
				{Name: "host", Type: String},
				{Name: "port", Type: Integer},
				{Name: "key-selector", Type: OneOf, Args: []Arg{
					{Name: "key", Type: Key},
					{Name: "empty-string", Type: PureToken, Token: `""`},
				}},
				{Name: "destination-db", Type: Integer},
				{Name: "timeout", Type: Integer},
				{Name: "copy", Type: PureToken, Token: "COPY", Optional: true, Since: "3.0.0"},
				{Name: "replace", Type: PureToken, Token: "REPLACE", Optional: true, Since: "3.0.0"},
				{Name: "authentication", Type: OneOf, Optional: true, Args: []Arg{
					{Name: "auth", Type: String, Token: "AUTH", Display: "password", Since: "4.0.7"},
					{Name: "auth2", Type: Block, Token: "AUTH2", Since: "6.0.0", Args: []Arg{
						{Name: "username", Type: String},
						{Name: "password", Type: String},
					}},
				}},
				{Name: "keys", Type: Key, KeySpec: 1, Token: "KEYS", Optional: true, Multiple: true, Since: "3.0.6"},
			},
		},
		&Spec{
			Name: "object", Arity: -2,
			Summary: "Groups the commands that inspect a key's value", Since: "2.2.3",
			Group: "generic", Complexity: "Depends on the subcommand",
			Subs: []*Spec{
				objectSub("encoding", "2.2.3", "Says how a key's filter is built: growing, fixed or chain"),
				objectSub("freq", "4.0.0", "Returns a key's access frequency, kept only under an LFU eviction policy"),
				objectSub("idletime", "2.2.3", "Returns the seconds since a key was last read or written"),
				objectSub("refcount", "2.2.3", "Returns the number of references to a key's value"),
				{
					Name: "object|help", Arity: 2, Flags: Loading | Stale, ACL: "keyspace",
					Summary: "Lists OBJECT's subcommands", Since: "6.2.0", Group: "generic", Complexity: "O(1)",
				},
			},
		},
		&Spec{
			Name: "memory", Arity: -2,
			Summary: "Groups the commands that report memory use", Since: "4.0.0",
			Group: "server", Complexity: "Depends on the subcommand",
			Subs: []*Spec{
				{
					Name: "memory|usage", Arity: -3, Flags: ReadOnly, Keys: keyROSub,
					Summary: "Returns the bytes a key and its filter take",
					Since:   "4.0.0", Group: "server", Complexity: "O(1)",
					Args: []Arg{keyArg, {Name: "count", Type: Integer, Token: "SAMPLES", Optional: true}},
				},
				{
					Name: "memory|help", Arity: 2, Flags: Loading | Stale,
					Summary: "Lists MEMORY's subcommands", Since: "4.0.0", Group: "server", Complexity: "O(1)",
				},
			},
		},
	}
}
