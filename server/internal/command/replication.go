package command

// Replication: REPLICAOF (and SLAVEOF), PSYNC and REPLCONF (what a replica
// sends its primary), WAIT, ROLE; with Redis 7.2's facts.

func replicationSpecs() []*Spec {
	hostPortOrNoOne := []Arg{{Name: "args", Type: OneOf, Args: []Arg{
		{Name: "host-port", Type: Block, Args: []Arg{{Name: "host", Type: String}, {Name: "port", Type: Integer}}},
		{Name: "no-one", Type: Block, Args: []Arg{{Name: "no", Type: PureToken, Token: "NO"}, {Name: "one", Type: PureToken, Token: "ONE"}}},
	}}}
	return []*Spec{
		&Spec{Name: "replicaof", Arity: 3, Flags: Admin | NoScript | Stale,
			Summary: "Makes the server a replica of another, or (NO ONE) a primary", Since: "5.0.0", Group: "server",
			Complexity: "O(1); a full copy is O(n) for n bytes of filters", Args: hostPortOrNoOne},
		&Spec{Name: "slaveof", Arity: 3, Flags: Admin | NoScript | Stale,
			Summary: "REPLICAOF's older name", Since: "1.0.0", Group: "server",
			Complexity: "O(1); a full copy is O(n) for n bytes of filters", Args: hostPortOrNoOne},
		&Spec{Name: "psync", Arity: -3, Flags: Admin | NoMulti | NoScript,
			Summary: "Asks the primary for its stream from an offset, or a full copy first", Since: "2.8.0", Group: "server",
			Complexity: "O(1) to continue; a full copy is O(n) for n bytes of filters",
			Args:       []Arg{{Name: "replicationid", Type: String}, {Name: "offset", Type: Integer}}},
		&Spec{Name: "replconf", Arity: -1, Flags: Admin | NoScript | Loading | Stale | AllowBusy,
			Summary: "A replica's settings and acknowledgements to its primary", Since: "3.0.0", Group: "server", Complexity: "O(1)"},
		&Spec{Name: "wait", Arity: 3, Flags: Blocking, ACL: "connection",
			Tips:    []string{"request_policy:all_shards", "response_policy:agg_min"},
			Summary: "Waits until replicas have acknowledged the writes made so far, or a timeout", Since: "3.0.0", Group: "generic",
			Complexity: "O(1)", Args: []Arg{{Name: "numreplicas", Type: Integer}, {Name: "timeout", Type: Integer}}},
		&Spec{Name: "role", Arity: 1, Flags: NoScript | Loading | Stale | Fast, ACL: "admin dangerous",
			Summary: "Returns the server's replication role and its peers' offsets", Since: "2.8.12", Group: "server", Complexity: "O(1)"},
	}
}
