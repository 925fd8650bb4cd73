// Package eval runs the experiments behind `cuckoo eval`: the classic
// tables and curves by which people choose a hash table or a filter,
// measured on this machine from this project's code.
//
// Each experiment is a function that returns rows of figures; nothing in
// them is pasted from a paper. Where a closed-form figure exists (Knuth's
// for linear probing and chaining, 2b/2^f for a cuckoo filter's
// false-positive rate) the rows carry it beside the measurement, so a
// reader can see where the two agree and where they do not.
//
// The reference structures (separate chaining, linear probing, the classic
// cuckoo table of two one-slot tables, and a minimal partial-key cuckoo
// filter with any bucket size) are small and written for counting, not for
// speed: each lookup reports the key comparisons and slots it made.
//
// The growth experiment keeps its own baselines: a copy of the chain of
// stages that filter.Scalable was when issue 13 was filed (growth_chain.go),
// and a model of RedisBloom's expanding cuckoo filter (growth_redisbloom.go),
// so that its figures stay comparable when the library changes.
package eval
