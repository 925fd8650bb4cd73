package command

// MULTI, EXEC, DISCARD, WATCH, UNWATCH; and SHUTDOWN and MONITOR, the
// administrative commands that act on the server as a whole.

func transactionsSpecs() []*Spec {
	tx := NoScript | Loading | Stale | AllowBusy
	return []*Spec{
		&Spec{Name: "multi", Arity: 1, Flags: tx | Fast, ACL: "transaction",
			Summary: "Starts a transaction: the commands that follow are queued until EXEC", Since: "1.2.0", Group: "transactions", Complexity: "O(1)"},
		&Spec{Name: "exec", Arity: 1, Flags: NoScript | Loading | Stale | SkipSlowlog, ACL: "transaction",
			Summary: "Runs the queued commands as one unit, logged as one record", Since: "1.2.0", Group: "transactions",
			Complexity: "The sum of the queued commands' costs"},
		&Spec{Name: "discard", Arity: 1, Flags: tx | Fast, ACL: "transaction",
			Summary: "Drops the queued commands and ends the transaction", Since: "2.0.0", Group: "transactions", Complexity: "O(n) for n queued commands"},
		&Spec{Name: "watch", Arity: -2, Flags: tx | Fast, ACL: "transaction",
			Keys:    []KeySpec{{Flags: []string{"RO"}, Begin: 1, LastKey: -1, Step: 1}},
			Summary: "Makes the next EXEC fail if any of these keys changes first", Since: "2.2.0", Group: "transactions",
			Complexity: "O(1) for each key", Args: []Arg{{Name: "key", Type: Key, Multiple: true}}},
		&Spec{Name: "unwatch", Arity: 1, Flags: tx | Fast, ACL: "transaction",
			Summary: "Forgets the watched keys", Since: "2.2.0", Group: "transactions", Complexity: "O(1)"},
		&Spec{Name: "shutdown", Arity: -1, Flags: Admin | NoScript | Loading | Stale | NoMulti | AllowBusy,
			Summary: "Stops the server, saving a snapshot unless NOSAVE", Since: "1.0.0", Group: "server",
			Complexity: "O(n) for n bytes of filters when saving",
			Args: []Arg{
				{Name: "save-selector", Type: OneOf, Optional: true, Args: []Arg{
					{Name: "nosave", Type: PureToken, Token: "NOSAVE"},
					{Name: "save", Type: PureToken, Token: "SAVE"},
				}},
				{Name: "now", Type: PureToken, Token: "NOW", Optional: true, Since: "7.0.0"},
				{Name: "force", Type: PureToken, Token: "FORCE", Optional: true, Since: "7.0.0"},
				{Name: "abort", Type: PureToken, Token: "ABORT", Optional: true, Since: "7.0.0"},
			}},
		&Spec{Name: "monitor", Arity: 1, Flags: Admin | NoScript | Loading | Stale,
			Summary: "Streams every command the server runs to this connection", Since: "1.0.0", Group: "server", Complexity: "O(1)"},
	}
}
