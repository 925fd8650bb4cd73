package command

// The CF.* commands: RedisBloom's names, arity, flags, ACL categories
// (@cuckoo, as RedisBloom registers them), key specs and arguments. Module
// commands are documented with group "module" and module "bf", as Redis
// serves RedisBloom's.

var (
	cfKeyRW = []KeySpec{{Flags: []string{"RW"}, Begin: 1, Step: 1}}
	cfKeyRO = []KeySpec{{Flags: []string{"RO"}, Begin: 1, Step: 1}}
	cfKey   = Arg{Name: "key", Type: Key}
	cfItem  = Arg{Name: "item", Type: String}
	cfItems = Arg{Name: "item", Type: String, Multiple: true}
	cfWrite = Write | DenyOOM | Module
	cfRead  = ReadOnly | Fast | Module
)

func cf(name string, arity int, flags Flag, acl string, keys []KeySpec, summary, complexity string, args ...Arg) *Spec {
	return &Spec{Name: name, Arity: arity, Flags: flags, ACL: acl + " cuckoo", Keys: keys,
		Summary: summary, Since: "1.0.0", Group: "cf", Complexity: complexity, ModuleName: "bf", Args: args}
}

func init() {
	capacity := Arg{Name: "capacity", Type: Integer, Token: "CAPACITY", Optional: true}
	nocreate := Arg{Name: "nocreate", Type: PureToken, Token: "NOCREATE", Optional: true}
	items := Arg{Name: "items", Type: PureToken, Token: "ITEMS"}
	const lookup = "O(1): two buckets, however far the filter grew"
	const insert = "O(1) amortized; a displacement search of at most max(MAXITERATIONS, 500) buckets"
	register(
		cf("cf.reserve", -3, cfWrite, "write fast", cfKeyRW,
			"Creates a cuckoo filter for a given capacity", "O(1)",
			cfKey, Arg{Name: "capacity", Type: Integer},
			Arg{Name: "bucketsize", Type: Integer, Token: "BUCKETSIZE", Optional: true},
			Arg{Name: "maxiterations", Type: Integer, Token: "MAXITERATIONS", Optional: true},
			Arg{Name: "expansion", Type: Integer, Token: "EXPANSION", Optional: true}),
		cf("cf.add", 3, cfWrite, "write", cfKeyRW,
			"Adds an item to a cuckoo filter, creating the filter if needed", insert, cfKey, cfItem),
		cf("cf.addnx", 3, cfWrite, "write", cfKeyRW,
			"Adds an item to a cuckoo filter unless it may be there already", insert, cfKey, cfItem),
		cf("cf.insert", -4, cfWrite, "write", cfKeyRW,
			"Adds items to a cuckoo filter, creating it unless NOCREATE", "O(n) for n items, each as CF.ADD",
			cfKey, capacity, nocreate, items, cfItems),
		cf("cf.insertnx", -4, cfWrite, "write", cfKeyRW,
			"Adds items that may not be there yet to a cuckoo filter, creating it unless NOCREATE", "O(n) for n items, each as CF.ADDNX",
			cfKey, capacity, nocreate, items, cfItems),
		cf("cf.exists", 3, cfRead, "read", cfKeyRO,
			"Tells whether an item may be in a cuckoo filter", lookup, cfKey, cfItem),
		cf("cf.mexists", -3, cfRead, "read", cfKeyRO,
			"Tells, for each item, whether it may be in a cuckoo filter", "O(n) for n items", cfKey, cfItems),
		cf("cf.count", 3, cfRead, "read", cfKeyRO,
			"Counts the entries that match an item in a cuckoo filter (an upper bound on its copies)", lookup, cfKey, cfItem),
		cf("cf.del", 3, Write|Fast|Module, "write", cfKeyRW,
			"Deletes one copy of an item from a cuckoo filter", lookup, cfKey, cfItem),
		// Write, where RedisBloom says readonly: it changes the filter and
		// is logged, so a replica and a read-only user must be refused it.
		cf("cf.compact", 2, Write|Module, "write", cfKeyRW,
			"Drops the empty stages of a filter loaded from an old dump", "O(n) for n buckets", cfKey),
		cf("cf.info", 2, cfRead, "read fast", cfKeyRO,
			"Returns a cuckoo filter's figures", "O(1)", cfKey),
		cf("cf.debug", 2, cfRead, "read", cfKeyRO,
			"Returns a cuckoo filter's figures in one line", "O(1)", cfKey),
		cf("cf.scandump", 3, cfRead, "read", cfKeyRO,
			"Returns the next chunk of a cuckoo filter's dump", "O(n) for n bytes of the chunk",
			cfKey, Arg{Name: "iterator", Type: Integer}),
		cf("cf.loadchunk", 4, cfWrite, "write", cfKeyRW,
			"Restores a cuckoo filter from its dump, one chunk at a time", "O(n) for n bytes of the chunk",
			cfKey, Arg{Name: "iterator", Type: Integer}, Arg{Name: "data", Type: String}),
	)
	table["cf.loadchunk"].DataArg = 3
	table["cf.debug"].Tips = []string{"dont_cache"}
}
