package pubsub

import (
	"iter"
	"maps"
	"slices"
	"sync"
)

// Kind is the kind of a subscription.
type Kind uint8

const (
	Channel      Kind = iota // SUBSCRIBE's channels
	Pattern                  // PSUBSCRIBE's glob patterns
	ShardChannel             // SSUBSCRIBE's shard channels

	kinds = 3
)

// Prefix is the letter a kind's commands, replies and messages begin with:
// "" for channels, "p" for patterns ("psubscribe", "pmessage"), "s" for
// shard channels.
func (k Kind) Prefix() string {
	return [kinds]string{Channel: "", Pattern: "p", ShardChannel: "s"}[k]
}

// Subscription is one channel, pattern or shard channel subscribed to.
type Subscription struct {
	Kind Kind
	Name string
}

// Registry is who listens to what. The zero value is an empty registry,
// ready to use; it must not be copied after first use.
type Registry[S comparable] struct {
	mu sync.RWMutex
	// subscribers maps each name of a kind to its subscribers, and
	// subscriptions each subscriber to its names of that kind: mirrors of
	// each other, with no empty set in either.
	subscribers   [kinds]map[string]map[S]struct{}
	subscriptions [kinds]map[S]map[string]struct{}
}

// Subscribe subscribes sub to names, of kind k, in order, and calls confirm
// after each with the name and sub's number of subscriptions of kind k; a
// name sub has already is confirmed and left as it is. The names become
// visible to publishers together, at the end of the call.
func (r *Registry[S]) Subscribe(sub S, k Kind, names [][]byte, confirm func(name string, n int)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range names {
		name := string(b)
		if insert(&r.subscriptions[k], sub, name) {
			insert(&r.subscribers[k], name, sub)
		}
		confirm(name, len(r.subscriptions[k][sub]))
	}
}

// Unsubscribe unsubscribes sub from names, of kind k, or with no names
// from all of sub's of kind k in sorted order, calling confirm after each
// as Subscribe does (a name sub did not have is confirmed too), and
// returns the number of names it confirmed: 0 only if names was empty and
// sub had none.
func (r *Registry[S]) Unsubscribe(sub S, k Kind, names [][]byte, confirm func(name string, n int)) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(names) == 0 {
		all := slices.Sorted(maps.Keys(r.subscriptions[k][sub]))
		for _, name := range all {
			r.remove(sub, k, name)
			confirm(name, len(r.subscriptions[k][sub]))
		}
		return len(all)
	}
	for _, b := range names {
		name := string(b)
		r.remove(sub, k, name)
		confirm(name, len(r.subscriptions[k][sub]))
	}
	return len(names)
}

// remove removes sub's subscription to name of kind k, if it has one;
// r.mu write-locked.
func (r *Registry[S]) remove(sub S, k Kind, name string) {
	if remove(r.subscriptions[k], sub, name) {
		remove(r.subscribers[k], name, sub)
	}
}

// Leave removes all of sub's subscriptions, of every kind, as its
// connection ends.
func (r *Registry[S]) Leave(sub S) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range Kind(kinds) {
		for name := range r.subscriptions[k][sub] {
			remove(r.subscribers[k], name, sub)
		}
		delete(r.subscriptions[k], sub)
	}
}

// All yields every subscription with its subscriber, holding the read lock
// throughout: the loop must not call the registry.
func (r *Registry[S]) All() iter.Seq2[S, Subscription] {
	return func(yield func(S, Subscription) bool) {
		r.mu.RLock()
		defer r.mu.RUnlock()
		for k := range Kind(kinds) {
			for name, subs := range r.subscribers[k] {
				for sub := range subs {
					if !yield(sub, Subscription{k, name}) {
						return
					}
				}
			}
		}
	}
}

// Channels returns the names of kind k with subscribers that match
// pattern, sorted (PUBSUB CHANNELS and SHARDCHANNELS; "*" matches all).
func (r *Registry[S]) Channels(k Kind, pattern string) []string {
	var names []string
	r.mu.RLock()
	for name := range r.subscribers[k] {
		if globMatch(name, pattern) {
			names = append(names, name)
		}
	}
	r.mu.RUnlock()
	slices.Sort(names)
	return names
}

// NumSub returns the number of subscribers of each of names, of kind k
// (PUBSUB NUMSUB and SHARDNUMSUB), counted at one moment.
func (r *Registry[S]) NumSub(k Kind, names [][]byte) []int {
	counts := make([]int, len(names))
	r.mu.RLock()
	defer r.mu.RUnlock()
	for i, name := range names {
		counts[i] = len(r.subscribers[k][string(name)])
	}
	return counts
}

// Counts returns the number of channels, patterns and shard channels with
// subscribers (INFO's pubsub_channels, pubsub_patterns and
// pubsubshard_channels; PUBSUB NUMPAT), counted at one moment.
func (r *Registry[S]) Counts() (channels, patterns, shardChannels int) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.subscribers[Channel]), len(r.subscribers[Pattern]), len(r.subscribers[ShardChannel])
}

// insert adds v to the set of k in *m, making the map and the set as
// needed, and reports whether v was not there already.
func insert[K, V comparable](m *map[K]map[V]struct{}, k K, v V) bool {
	set := (*m)[k]
	if _, ok := set[v]; ok {
		return false
	}
	if set == nil {
		if *m == nil {
			*m = map[K]map[V]struct{}{}
		}
		set = map[V]struct{}{}
		(*m)[k] = set
	}
	set[v] = struct{}{}
	return true
}

// remove takes v out of the set of k in m, deleting the set once empty,
// and reports whether v was there.
func remove[K, V comparable](m map[K]map[V]struct{}, k K, v V) bool {
	set := m[k]
	if _, ok := set[v]; !ok {
		return false
	}
	delete(set, v)
	if len(set) == 0 {
		delete(m, k)
	}
	return true
}
