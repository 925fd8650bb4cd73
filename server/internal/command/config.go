package command

// CONFIG and its subcommands, with Redis 7.2's arity, flags, ACL categories,
// tips, since and arguments.

func configSpecs() []*Spec {
	return []*Spec{
		&Spec{
			Name:       "config",
			Arity:      -2,
			Summary:    "Groups the commands that read, change and save the server's settings",
			Since:      "2.0.0",
			Group:      "server",
			Complexity: "Depends on the subcommand",
			Subs: []*Spec{
				{
					Name:       "config|get",
					Arity:      -3,
					Flags:      Admin | NoScript | Loading | Stale,
					Summary:    "Returns the settings whose names match the glob patterns given, with their values",
					Since:      "2.0.0",
					Group:      "server",
					Complexity: "O(n) for n patterns",
					Args: []Arg{
						{Name: "parameter", Type: String, Multiple: true},
					},
				},
				{
					Name:       "config|set",
					Arity:      -4,
					Flags:      Admin | NoScript | Loading | Stale,
					Tips:       []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					Summary:    "Changes settings of the running server: every pair given, or none",
					Since:      "2.0.0",
					Group:      "server",
					Complexity: "O(n) for n settings",
					Args: []Arg{
						{Name: "data", Type: Block, Multiple: true, Args: []Arg{
							{Name: "parameter", Type: String},
							{Name: "value", Type: String},
						}},
					},
				},
				{
					Name:       "config|rewrite",
					Arity:      2,
					Flags:      Admin | NoScript | Loading | Stale,
					Tips:       []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					Summary:    "Writes the settings in force back to the file the server was started with",
					Since:      "2.8.0",
					Group:      "server",
					Complexity: "O(1)",
				},
				{
					Name:       "config|resetstat",
					Arity:      2,
					Flags:      Admin | NoScript | Loading | Stale,
					Tips:       []string{"request_policy:all_nodes", "response_policy:all_succeeded"},
					Summary:    "Sets the statistics INFO reports back to zero",
					Since:      "2.0.0",
					Group:      "server",
					Complexity: "O(1)",
				},
				{
					Name:       "config|help",
					Arity:      2,
					Flags:      Loading | Stale,
					Summary:    "Lists the CONFIG subcommands",
					Since:      "5.0.0",
					Group:      "server",
					Complexity: "O(1)",
				},
			},
		},
	}
}
