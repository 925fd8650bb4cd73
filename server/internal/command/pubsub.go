package command

// Pub/sub: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB
// and the shard variants (SSUBSCRIBE, SUNSUBSCRIBE, SPUBLISH), with Redis
// 7.2's arity, flags and since (Sentinel's flag left out). Channels are not
// keys: no key specs (Redis's shard commands have a not_key spec only for
// cluster routing, which a standalone server has no use for).

func pubsubSpecs() []*Spec {
	const sub = PubSub | NoScript | Loading | Stale
	channels := func(name string, optional bool) []Arg {
		return []Arg{{Name: name, Type: String, Optional: optional, Multiple: true}}
	}
	patterns := func(optional bool) []Arg {
		return []Arg{{Name: "pattern", Type: Pattern, Optional: optional, Multiple: true}}
	}
	return []*Spec{
		&Spec{Name: "subscribe", Arity: -2, Flags: sub,
			Summary: "Starts receiving the messages published to the channels given", Since: "2.0.0", Group: "pubsub",
			Complexity: "O(n) for n channels", Args: channels("channel", false)},
		&Spec{Name: "unsubscribe", Arity: -1, Flags: sub,
			Summary: "Stops receiving the messages of the channels given, or of every channel", Since: "2.0.0", Group: "pubsub",
			Complexity: "O(n) for n channels", Args: channels("channel", true)},
		&Spec{Name: "psubscribe", Arity: -2, Flags: sub,
			Summary: "Starts receiving the messages published to every channel matching the glob patterns given", Since: "2.0.0", Group: "pubsub",
			Complexity: "O(n) for n patterns", Args: patterns(false)},
		&Spec{Name: "punsubscribe", Arity: -1, Flags: sub,
			Summary: "Stops receiving the messages of the patterns given, or of every pattern", Since: "2.0.0", Group: "pubsub",
			Complexity: "O(n) for n patterns", Args: patterns(true)},
		&Spec{Name: "publish", Arity: 3, Flags: PubSub | Loading | Stale | Fast | MayReplicate,
			Summary: "Sends a message to the subscribers of a channel and of the patterns matching it; replies how many received it", Since: "2.0.0", Group: "pubsub",
			Complexity: "O(n+m) for n subscribers of the channel and m patterns subscribed to by anyone",
			Args:       []Arg{{Name: "channel", Type: String}, {Name: "message", Type: String}}},
		&Spec{Name: "ssubscribe", Arity: -2, Flags: sub,
			Summary: "Starts receiving the messages published to the shard channels given", Since: "7.0.0", Group: "pubsub",
			Complexity: "O(n) for n shard channels", Args: channels("shardchannel", false)},
		&Spec{Name: "sunsubscribe", Arity: -1, Flags: sub,
			Summary: "Stops receiving the messages of the shard channels given, or of every shard channel", Since: "7.0.0", Group: "pubsub",
			Complexity: "O(n) for n shard channels", Args: channels("shardchannel", true)},
		&Spec{Name: "spublish", Arity: 3, Flags: PubSub | Loading | Stale | Fast | MayReplicate,
			Summary: "Sends a message to the subscribers of a shard channel; replies how many received it", Since: "7.0.0", Group: "pubsub",
			Complexity: "O(n) for n subscribers of the shard channel",
			Args:       []Arg{{Name: "shardchannel", Type: String}, {Name: "message", Type: String}}},
		&Spec{Name: "pubsub", Arity: -2,
			Summary: "Groups the commands that inspect the pub/sub subscriptions", Since: "2.8.0", Group: "pubsub",
			Complexity: "Depends on the subcommand",
			Subs: []*Spec{
				{Name: "pubsub|channels", Arity: -2, Flags: PubSub | Loading | Stale,
					Summary: "Lists the channels with subscribers, or those matching a glob pattern", Since: "2.8.0", Group: "pubsub",
					Complexity: "O(n) for n channels with subscribers",
					Args:       []Arg{{Name: "pattern", Type: Pattern, Optional: true}}},
				{Name: "pubsub|numsub", Arity: -2, Flags: PubSub | Loading | Stale,
					Summary: "Counts the subscribers of each channel given (pattern subscriptions not counted)", Since: "2.8.0", Group: "pubsub",
					Complexity: "O(n) for n channels given", Args: channels("channel", true)},
				{Name: "pubsub|numpat", Arity: 2, Flags: PubSub | Loading | Stale,
					Summary: "Counts the distinct patterns subscribed to", Since: "2.8.0", Group: "pubsub", Complexity: "O(1)"},
				{Name: "pubsub|shardchannels", Arity: -2, Flags: PubSub | Loading | Stale,
					Summary: "Lists the shard channels with subscribers, or those matching a glob pattern", Since: "7.0.0", Group: "pubsub",
					Complexity: "O(n) for n shard channels with subscribers",
					Args:       []Arg{{Name: "pattern", Type: Pattern, Optional: true}}},
				{Name: "pubsub|shardnumsub", Arity: -2, Flags: PubSub | Loading | Stale,
					Summary: "Counts the subscribers of each shard channel given", Since: "7.0.0", Group: "pubsub",
					Complexity: "O(n) for n shard channels given", Args: channels("shardchannel", true)},
				{Name: "pubsub|help", Arity: 2, Flags: Loading | Stale,
					Summary: "Lists PUBSUB's subcommands", Since: "6.2.0", Group: "pubsub", Complexity: "O(1)"},
			},
		},
	}
}
