package command

// Cluster mode: CLUSTER's subcommands that a cluster client reads (SLOTS,
// SHARDS, NODES, INFO, MYID, KEYSLOT, COUNTKEYSINSLOT, GETKEYSINSLOT, HELP),
// ASKING, READONLY and READWRITE, with Redis 7.2's arity, flags, ACL
// categories and tips; and CUCKOO.CLUSTER, this server's own admin command
// that sets the topology (no gossip: an operator pushes it to every node).

func clusterSpecs() []*Spec {
	sub := func(name string, arity int, flags Flag, tips []string, summary, complexity, since string, args ...Arg) *Spec {
		return &Spec{Name: "cluster|" + name, Arity: arity, Flags: flags, Tips: tips,
			Summary: summary, Since: since, Group: "cluster", Complexity: complexity, Args: args}
	}
	nondet := []string{"nondeterministic_output"}
	return []*Spec{
		&Spec{Name: "cluster", Arity: -2, Summary: "A container for the cluster commands",
			Since: "3.0.0", Group: "cluster", Complexity: "Depends on subcommand",
			Subs: []*Spec{
				sub("slots", 2, Loading|Stale, nondet,
					"Returns the slot ranges and the nodes that serve each", "O(n) for n nodes", "3.0.0"),
				sub("shards", 2, Loading|Stale, nondet,
					"Returns the shards: each one's slot ranges and nodes", "O(n) for n nodes", "7.0.0"),
				sub("nodes", 2, Stale, nondet,
					"Returns the cluster's nodes, one line each, as this node sees them", "O(n) for n nodes", "3.0.0"),
				sub("myid", 2, Stale, nil, "Returns this node's id", "O(1)", "3.0.0"),
				sub("info", 2, Stale, nondet, "Returns the cluster's state and figures", "O(1)", "3.0.0"),
				sub("keyslot", 3, Stale, nil, "Returns the hash slot of a key", "O(n) for a key of n bytes", "3.0.0",
					Arg{Name: "key", Type: String}),
				sub("countkeysinslot", 3, Stale, nil, "Returns the number of keys in a hash slot",
					"O(n) for n keys on the node: the key space is scanned", "3.0.0",
					Arg{Name: "slot", Type: Integer}),
				sub("getkeysinslot", 4, Stale, nondet, "Returns up to count key names in a hash slot",
					"O(n) for n keys on the node: the key space is scanned", "3.0.0",
					Arg{Name: "slot", Type: Integer}, Arg{Name: "count", Type: Integer}),
				sub("help", 2, Loading|Stale, nil, "Returns help on the CLUSTER subcommands", "O(1)", "5.0.0"),
			}},
		&Spec{Name: "asking", Arity: 1, Flags: Fast, ACL: "connection",
			Summary: "Lets the next command reach a slot this node is importing", Since: "3.0.0",
			Group: "cluster", Complexity: "O(1)"},
		&Spec{Name: "readonly", Arity: 1, Flags: Fast | Loading | Stale, ACL: "connection",
			Summary: "Lets a replica node answer this connection's reads of its primary's slots", Since: "3.0.0",
			Group: "cluster", Complexity: "O(1)"},
		&Spec{Name: "readwrite", Arity: 1, Flags: Fast | Loading | Stale, ACL: "connection",
			Summary: "Ends READONLY: reads on a replica node are redirected to the primary again", Since: "3.0.0",
			Group: "cluster", Complexity: "O(1)"},
		&Spec{Name: "cuckoo.cluster", Arity: -2, Summary: "A container for the cluster topology commands",
			Since: "1.0.0", Group: "cluster", Complexity: "Depends on subcommand",
			Subs: []*Spec{
				{Name: "cuckoo.cluster|setconfig", Arity: 3, Flags: Admin | NoScript | Stale,
					Summary: "Replaces the node's cluster topology (JSON) unless its epoch is older, and persists it",
					Since:   "1.0.0", Group: "cluster", Complexity: "O(n) for n nodes and slot ranges",
					// Bounded by proto-max-bulk-len, not max-item-size: a
					// third of the slots migrating is 0.5 MB of JSON.
					DataArg: 2,
					Args:    []Arg{{Name: "json", Type: String}}},
				{Name: "cuckoo.cluster|getconfig", Arity: 2, Flags: Admin | Stale,
					Summary: "Returns the node's cluster topology (JSON)",
					Since:   "1.0.0", Group: "cluster", Complexity: "O(n) for n nodes and slot ranges"},
			}},
	}
}
