package command

// ACL and its subcommands, with Redis 7.2's facts.

func aclSpecs() []*Spec {
	sub := func(name string, arity int, flags Flag, summary, complexity string, args ...Arg) *Spec {
		return &Spec{Name: "acl|" + name, Arity: arity, Flags: flags | NoScript | Loading | Stale,
			Summary: summary, Since: "6.0.0", Group: "server", Complexity: complexity, Args: args}
	}
	username := Arg{Name: "username", Type: String}
	specs := []*Spec{&Spec{
		Name: "acl", Arity: -2, Summary: "Groups the commands that manage users and their permissions",
		Since: "6.0.0", Group: "server", Complexity: "Depends on the subcommand",
		Subs: []*Spec{
			sub("cat", -2, 0, "Lists the ACL categories, or the commands in one", "O(1)",
				Arg{Name: "category", Type: String, Optional: true}),
			sub("deluser", -3, Admin, "Deletes users and closes their connections", "O(1) for each user",
				Arg{Name: "username", Type: String, Multiple: true}),
			sub("dryrun", -4, Admin, "Tells whether a user may run a command, without running it", "O(1)",
				username, Arg{Name: "command", Type: String}, Arg{Name: "arg", Type: String, Optional: true, Multiple: true}),
			sub("genpass", -2, 0, "Returns a random password from the system's secure random source", "O(n) for n bits",
				Arg{Name: "bits", Type: Integer, Optional: true}),
			sub("getuser", 3, Admin, "Describes a user's rules", "O(n) for n password, command and key rules", username),
			sub("list", 2, Admin, "Lists every user's rules, as an ACL file holds them", "O(n) for n users"),
			sub("load", 2, Admin, "Replaces the users by those of the ACL file", "O(n) for n users"),
			sub("log", -2, Admin, "Lists the recent denials, or resets the list", "O(n) for n entries",
				Arg{Name: "operation", Type: OneOf, Optional: true, Args: []Arg{
					{Name: "count", Type: Integer},
					{Name: "reset", Type: PureToken, Token: "RESET"},
				}}),
			sub("save", 2, Admin, "Writes the users to the ACL file", "O(n) for n users"),
			sub("setuser", -3, Admin, "Creates a user or changes its rules, all or none", "O(n) for n rules",
				username, Arg{Name: "rule", Type: String, Optional: true, Multiple: true}),
			sub("users", 2, Admin, "Lists the user names", "O(n) for n users"),
			sub("whoami", 2, 0, "Returns the connection's user name", "O(1)"),
			{Name: "acl|help", Arity: 2, Flags: Loading | Stale, Summary: "Lists the ACL subcommands",
				Since: "6.0.0", Group: "server", Complexity: "O(1)"},
		},
	},
	}
	for _, name := range []string{"acl|setuser", "acl|deluser", "acl|save"} {
		for _, s := range specs[0].Subs {
			if s.Name == name {
				s.Tips = []string{"request_policy:all_nodes", "response_policy:all_succeeded"}
			}
		}
	}
	return specs
}
