package command

import "strings"

// Flag is a command flag, as COMMAND INFO lists them.
type Flag uint32

const (
	Write Flag = 1 << iota
	ReadOnly
	DenyOOM
	Admin
	PubSub
	NoScript
	Blocking
	Loading
	Stale
	SkipMonitor
	SkipSlowlog
	Fast
	NoAuth
	MayReplicate
	NoMandatoryKeys
	NoMulti
	AllowBusy
	Module
	// Asking: in cluster mode, runs on a slot this node is importing as if
	// ASKING came first (RESTORE-ASKING, which MIGRATE sends).
	Asking
)

// flagOrder is the order in which COMMAND INFO lists the flags, Redis's
// (module fourth; no_async_loading and movablekeys, which Flag lacks, would
// sit among them). May_replicate is not listed: Redis hides it.
var flagOrder = []struct {
	f    Flag
	name string
}{
	{Write, "write"}, {ReadOnly, "readonly"}, {DenyOOM, "denyoom"}, {Module, "module"},
	{Admin, "admin"}, {PubSub, "pubsub"}, {NoScript, "noscript"}, {Blocking, "blocking"},
	{Loading, "loading"}, {Stale, "stale"}, {SkipMonitor, "skip_monitor"},
	{SkipSlowlog, "skip_slowlog"}, {Asking, "asking"}, {Fast, "fast"}, {NoAuth, "no_auth"},
	{NoMandatoryKeys, "no_mandatory_keys"}, {NoMulti, "no_multi"}, {AllowBusy, "allow_busy"},
}

// Names lists the flags set as COMMAND INFO shows them: in Redis's order,
// without may_replicate, which Redis hides.
func (f Flag) Names() []string {
	var out []string
	for _, x := range flagOrder {
		if f&x.f != 0 {
			out = append(out, x.name)
		}
	}
	return out
}

// KeySpec says where a command's keys are, as Redis's range key specs do.
// The search begins at argument Begin or, if Keyword is set, just after the
// first argument equal to Keyword (in any case), searched from argument Begin
// towards the end or, for a Begin <= 0, from argument len+Begin towards the
// start. From there the keys run every Step arguments up to LastKey:
// LastKey >= 0 is relative to the first key (0: one key), LastKey < 0 counts
// from the end (-1: the last argument); with Limit > 1 (and LastKey -1) only
// the first 1/Limit of the remaining arguments hold keys.
//
// Flags are Redis's, spelled as COMMAND INFO spells them: "RW", "RO", "OW",
// "RM", then "access", "update", "insert", "delete", "not_key", "incomplete",
// "variable_flags".
type KeySpec struct {
	Flags   []string
	Begin   int
	Keyword string
	LastKey int
	Step    int
	Limit   int
}

// keySpecFlags are the key spec flags in the order COMMAND INFO lists them.
var keySpecFlags = []string{"RO", "RW", "OW", "RM", "access", "update", "insert", "delete",
	"not_key", "incomplete", "variable_flags"}

// has reports whether the key spec has flag f.
func (k *KeySpec) has(f string) bool { return contains(k.Flags, f) }

// ArgType is a documented argument's type, as COMMAND DOCS names it.
type ArgType string

const (
	Key       ArgType = "key"
	String    ArgType = "string"
	Integer   ArgType = "integer"
	Double    ArgType = "double"
	Pattern   ArgType = "pattern"
	UnixTime  ArgType = "unix-time"
	PureToken ArgType = "pure-token"
	OneOf     ArgType = "oneof"
	Block     ArgType = "block"
)

// Arg documents one argument (or, for OneOf and Block, a group of them).
type Arg struct {
	Name     string
	Type     ArgType
	KeySpec  int // for Key arguments: the index of its KeySpec
	Token    string
	Display  string // lower case; the name if empty
	Optional bool
	Multiple bool
	// MultipleToken: with Multiple, the token is repeated before each.
	MultipleToken   bool
	Since           string
	DeprecatedSince string
	Args            []Arg
}

// Spec is one command or subcommand.
type Spec struct {
	Name  string // lower case; a subcommand is "container|sub"
	Arity int
	Flags Flag
	// ACL is the command's ACL categories beyond those its flags imply
	// (see Categories), space-separated, without '@'.
	ACL  string
	Keys []KeySpec
	// KeysProc, if set, finds the keys where the key specs cannot (they
	// are flagged incomplete), as Redis's getkeys_proc does: it returns
	// their indexes in the request, and each takes the first key spec's
	// flags. MIGRATE's is the one.
	KeysProc func(args [][]byte) []int
	// Tips are Redis's command tips ("nondeterministic_output", ...).
	Tips []string
	// DataArg, if not 0, is the index of an argument that is bulk data
	// (CF.LOADCHUNK's chunk, RESTORE's payload) rather than an item or a
	// key: the item size limit does not apply to it.
	DataArg int
	// ReadAhead: a request of the command with one key and one item may
	// have its item's buckets touched before it runs, with the requests
	// after it in the buffer (the server's prefetch.go): the single-item
	// CF commands. It is not one of Redis's flags and COMMAND shows nothing
	// of it.
	ReadAhead bool

	Summary    string
	Since      string
	Group      string
	Complexity string
	// ModuleComplexity, if set, is the complexity in the module's own
	// words (RedisBloom's, of its layout's sub-filters), which COMMAND DOCS
	// gives instead of Complexity when the server makes the module's
	// filters (cf-layout redisbloom): then it is the true one, and
	// RedisBloom's own tests compare it.
	ModuleComplexity string
	// DeprecatedSince and ReplacedBy document a deprecated command (QUIT);
	// COMMAND DOCS then gives it the doc flag "deprecated".
	DeprecatedSince string
	ReplacedBy      string
	// ModuleName is set for the commands RedisBloom provides ("bf"), which
	// Redis documents with group "module".
	ModuleName string
	Args       []Arg
	Subs       []*Spec

	container *Spec
}

// Container is the command a subcommand belongs to, or nil.
func (s *Spec) Container() *Spec { return s.container }

// aclOrder is the order of Redis's own ACL categories, in which COMMAND
// INFO lists them; a module's categories (cuckoo) come after.
var aclOrder = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow",
	"blocking", "dangerous", "connection", "transaction", "scripting",
}

// ModuleACL is how a module command's ACL categories are derived, which
// changed in Redis 8: Redis 7 adds those its flags imply, as for its own
// commands (so RedisBloom 2.6's CF.ADD is in @slow and CF.EXISTS in @fast);
// Redis 8 takes the module's list as it is (RedisBloom 8.6's CF.ADD is in
// @write and @cuckoo only).
type ModuleACL uint8

const (
	ModuleACLAsGiven ModuleACL = iota // Redis 8
	ModuleACLImplied                  // Redis 7
)

// Categories are the command's ACL categories, without '@': its own and
// those its flags imply, as Redis derives them (write, read unless
// scripting, admin and dangerous, pubsub, fast, blocking, and slow if not
// fast; a module command's own alone under ModuleACLAsGiven), in the order
// COMMAND INFO lists them.
func (s *Spec) Categories(m ModuleACL) []string {
	own := strings.Fields(s.ACL)
	has := func(c string) bool { return contains(own, c) }
	if s.Flags&Module != 0 && m == ModuleACLAsGiven {
		var out []string
		for _, c := range aclOrder {
			if has(c) {
				out = append(out, c)
			}
		}
		for _, c := range own {
			if !contains(aclOrder, c) && !contains(out, c) {
				out = append(out, c)
			}
		}
		return out
	}
	implied := map[string]bool{
		"write":     s.Flags&Write != 0,
		"read":      s.Flags&ReadOnly != 0 && !has("scripting"),
		"admin":     s.Flags&Admin != 0,
		"dangerous": s.Flags&Admin != 0,
		"pubsub":    s.Flags&PubSub != 0,
		"fast":      s.Flags&Fast != 0,
		"blocking":  s.Flags&Blocking != 0,
	}
	implied["slow"] = !implied["fast"] && !has("fast")
	var out []string
	for _, c := range aclOrder {
		if implied[c] || has(c) {
			out = append(out, c)
		}
	}
	for _, c := range own {
		if !contains(aclOrder, c) && !contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// InCategory reports whether the command is in ACL category cat (no '@').
func (s *Spec) InCategory(cat string, m ModuleACL) bool { return contains(s.Categories(m), cat) }

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ArityOK reports whether a request of n arguments (the name included, and
// for a subcommand the container's name too) fits the arity.
func (s *Spec) ArityOK(n int) bool {
	if s.Arity >= 0 {
		return n == s.Arity
	}
	return n >= -s.Arity
}

// legacyKeys are the first key, last key and step of COMMAND INFO's legacy
// fields, and whether the command has "movablekeys", derived from the key
// specs as Redis derives them (populateCommandLegacyRangeSpec): one spec
// found by index is the range as it is; of several, those found by index
// with step 1 that follow one another make one range of step 1, and any
// other spec makes the keys movable.
func (s *Spec) legacyKeys() (first, last, step int, movable bool) {
	byIndex := func(k KeySpec) bool { return k.Keyword == "" && k.Begin > 0 }
	abs := func(k KeySpec) int { // the last key's index, or negative from the end
		if k.LastKey >= 0 {
			return k.Begin + k.LastKey
		}
		return k.LastKey
	}
	switch {
	case len(s.Keys) == 0:
		return 0, 0, 0, false
	case len(s.Keys) == 1 && byIndex(s.Keys[0]):
		k := s.Keys[0]
		return k.Begin, abs(k), max(k.Step, 1), k.has("incomplete")
	}
	first = -1
	var lastU, prev uint32 // Redis compares the last keys unsigned: -1 wins
	for _, k := range s.Keys {
		if !byIndex(k) || max(k.Step, 1) != 1 || (prev != 0 && int(int32(prev)) != k.Begin-1) {
			movable = true
			continue
		}
		movable = movable || k.has("incomplete")
		if first < 0 || k.Begin < first {
			first = k.Begin
		}
		lastU = max(lastU, uint32(int32(abs(k))))
		prev = lastU
	}
	if first < 0 {
		return 0, 0, 0, true
	}
	return first, int(int32(lastU)), 1, movable
}

// keyRef is a key found in a request: its index and the spec that found it.
type keyRef struct {
	pos  int
	spec *KeySpec
}

// keyRefs finds the keys of args (the full request, the command name at 0)
// by the key specs, as Redis's getKeysUsingKeySpecs does: specs flagged
// not_key are skipped; a spec whose range falls outside the request, or
// that is flagged incomplete, is invalid. If partial, an invalid spec is
// skipped (an incomplete one keeps the keys it found); otherwise it makes
// the whole search fail (ok false).
func (s *Spec) keyRefs(args [][]byte, partial bool) (refs []keyRef, ok bool) {
	if s.KeysProc != nil {
		for _, p := range s.KeysProc(args) {
			refs = append(refs, keyRef{p, &s.Keys[0]})
		}
		return refs, true
	}
	argc := len(args)
	for j := range s.Keys {
		k := &s.Keys[j]
		if k.has("not_key") {
			continue
		}
		first := k.Begin
		if k.Keyword != "" {
			// Redis's loop, ends excluded: a keyword in the last argument
			// (or, searching backwards, the first) starts no keys.
			first = 0
			start, end := k.Begin, argc-1
			if k.Begin <= 0 {
				start, end = argc+k.Begin, 1
			}
			for i := start; i != end && i >= 1 && i < argc; {
				if strings.EqualFold(string(args[i]), k.Keyword) {
					first = i + 1
					break
				}
				if start <= end {
					i++
				} else {
					i--
				}
			}
			if first == 0 {
				continue
			}
		}
		last := first + k.LastKey
		if k.LastKey < 0 {
			last = argc + k.LastKey
			if k.Limit > 1 {
				last = first + (argc-first)/k.Limit + k.LastKey
			}
		}
		if last >= argc || last < first || first >= argc {
			if partial {
				continue
			}
			return nil, false
		}
		for i := first; i <= last; i += max(k.Step, 1) {
			refs = append(refs, keyRef{i, k})
		}
		if k.has("incomplete") && !partial {
			return nil, false
		}
	}
	return refs, true
}

// KeyPositions returns the indexes of the keys in args (the full request, the
// command name at 0), by the key specs, spec after spec. A spec whose keys
// would fall outside the request finds none.
func (s *Spec) KeyPositions(args [][]byte) []int {
	refs, _ := s.keyRefs(args, true)
	out := make([]int, len(refs))
	for i, r := range refs {
		out[i] = r.pos
	}
	return out
}

// SoleKey is the index of the command's only key, when it has one key
// spec naming exactly one argument by index (most commands: CF.ADD key
// ...); 0 otherwise. A request shorter than that has no key. It lets the
// cluster check find the key without building KeyPositions' slice.
func (s *Spec) SoleKey() int {
	if len(s.Keys) != 1 {
		return 0
	}
	if k := s.Keys[0]; k.Keyword == "" && k.Begin > 0 && k.LastKey == 0 && !k.has("not_key") {
		return k.Begin
	}
	return 0
}

// hasKeys reports whether the command has a key spec not flagged not_key,
// as Redis's doesCommandHaveKeys.
func (s *Spec) hasKeys() bool {
	for i := range s.Keys {
		if !s.Keys[i].has("not_key") {
			return true
		}
	}
	return false
}

// KeyAccess calls fn for each key of args (the full request) with the access
// its key spec declares: read for RO and RW keys (and ACCESS), write for RW,
// OW and RM keys, as ACL key permissions read them. It stops when fn returns
// false.
func (s *Spec) KeyAccess(args [][]byte, fn func(pos int, read, write bool) bool) {
	refs, _ := s.keyRefs(args, true)
	for _, r := range refs {
		read := r.spec.has("RO") || r.spec.has("RW") || r.spec.has("access")
		write := r.spec.has("RW") || r.spec.has("OW") || r.spec.has("RM")
		if !fn(r.pos, read, write) {
			return
		}
	}
}
