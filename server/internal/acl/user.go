package acl

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/match"
)

// Command is one served command or subcommand, as the ACL sees it.
type Command struct {
	ID         int
	Name       string   // lower case; a subcommand is "container|sub"
	Categories []string // without '@'
	Subs       []int    // a container's subcommands' ids
}

// Catalog is the commands rules refer to.
type Catalog struct {
	byName map[string]*Command
	byID   []*Command
	cats   map[string][]int
}

// Categories are Redis's ACL categories, and RedisBloom's: ACL CAT lists
// them, and +@c of any of them is valid even when it names no command here.
var Categories = []string{
	"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string", "bitmap",
	"hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
	"dangerous", "connection", "transaction", "scripting", "bloom", "cuckoo",
}

// NewCatalog indexes cmds; ids must be 0..len(cmds)-1.
func NewCatalog(cmds []Command) *Catalog {
	c := &Catalog{byName: map[string]*Command{}, byID: make([]*Command, len(cmds)), cats: map[string][]int{}}
	for i := range cmds {
		cmd := &cmds[i]
		c.byName[cmd.Name] = cmd
		c.byID[cmd.ID] = cmd
		for _, cat := range cmd.Categories {
			c.cats[cat] = append(c.cats[cat], cmd.ID)
		}
	}
	return c
}

// Len is the number of commands.
func (c *Catalog) Len() int { return len(c.byID) }

// Name returns command id's name.
func (c *Catalog) Name(id int) string { return c.byID[id].Name }

// InCategory returns the names of the commands in category cat, and whether
// cat is a category.
func (c *Catalog) InCategory(cat string) ([]string, bool) {
	if !slices.Contains(Categories, cat) {
		return nil, false
	}
	var out []string
	for _, id := range c.cats[cat] {
		out = append(out, c.byID[id].Name)
	}
	slices.Sort(out)
	return out, true
}

// KeyPattern grants access to the keys matching Pattern (glob syntax).
type KeyPattern struct {
	Pattern     string
	Read, Write bool
}

// User is one user's state; see the package doc. The zero User is not
// valid: make users with NewUser or Apply.
type User struct {
	Name      string
	Enabled   bool
	NoPass    bool
	passwords []string // SHA-256 digests, hex, in the order added
	catalog   *Catalog
	allowed   []uint64 // bitset over command ids
	allCmds   bool     // every command: +@all and no command removed since
	baseAll   bool     // the rules start from +@all (else from -@all)
	cmdRules  []string // the command rules after the base, for GETUSER and LIST
	keys      []KeyPattern
	allKeys   bool
	channels  []string
	allChans  bool
}

// NewUser returns a user as ACL SETUSER creates one: off, no password, no
// commands, no keys, no channels.
func NewUser(name string, cat *Catalog) *User {
	return &User{Name: name, catalog: cat, allowed: make([]uint64, (cat.Len()+63)/64)}
}

// DefaultUser is Redis's default user: on, nopass, every command and key.
func DefaultUser(cat *Catalog) *User {
	u, err := NewUser("default", cat).Apply("on", "nopass", "~*", "&*", "+@all")
	if err != nil {
		panic(err) // the rules are constants
	}
	return u
}

func (u *User) clone() *User {
	v := *u
	v.passwords = slices.Clone(u.passwords)
	v.allowed = slices.Clone(u.allowed)
	v.cmdRules = slices.Clone(u.cmdRules)
	v.keys = slices.Clone(u.keys)
	v.channels = slices.Clone(u.channels)
	return &v
}

// RuleError is a rule ACL SETUSER refuses; its text is Redis's.
type RuleError struct {
	Rule, Reason string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("Error in ACL SETUSER modifier '%s': %s", e.Rule, e.Reason)
}

const (
	errSyntax     = "Syntax error"
	errUnknown    = "Unknown command or category name in ACL"
	errAfterAll   = "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"
	errAfterAllCh = "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels"
	errNoSuchPass = "The password you are trying to remove from the user does not exist"
	errHash       = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
	errSelectors  = "Selectors are not supported by this server"
	errFirstArg   = "Allowing first-arg of a subcommand is not supported"
)

// Apply returns the user with rules applied in order, or the first rule's
// error and no change.
func (u *User) Apply(rules ...string) (*User, error) {
	v := u.clone()
	for _, r := range rules {
		if reason := v.apply(r); reason != "" {
			return u, &RuleError{Rule: r, Reason: reason}
		}
	}
	return v, nil
}

// Hash is the digest under which a password is kept.
func Hash(pass string) string {
	h := sha256.Sum256([]byte(pass))
	return hex.EncodeToString(h[:])
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func (u *User) apply(r string) string {
	switch lower := strings.ToLower(r); {
	case lower == "on":
		u.Enabled = true
	case lower == "off":
		u.Enabled = false
	case lower == "nopass":
		u.NoPass, u.passwords = true, nil
	case lower == "resetpass":
		u.NoPass, u.passwords = false, nil
	case lower == "sanitize-payload", lower == "skip-sanitize-payload", lower == "clearselectors":
		// Accepted: RESTORE payloads are always checked here, and there
		// are no selectors to clear.
	case lower == "allkeys":
		u.keys, u.allKeys = []KeyPattern{{Pattern: "*", Read: true, Write: true}}, true
	case lower == "resetkeys":
		u.keys, u.allKeys = nil, false
	case lower == "allchannels":
		u.channels, u.allChans = []string{"*"}, true
	case lower == "resetchannels":
		u.channels, u.allChans = nil, false
	case lower == "allcommands", lower == "+@all":
		for i := range u.allowed {
			u.allowed[i] = ^uint64(0)
		}
		u.allCmds, u.baseAll, u.cmdRules = true, true, nil
	case lower == "nocommands", lower == "-@all":
		clear(u.allowed)
		u.allCmds, u.baseAll, u.cmdRules = false, false, nil
	case lower == "reset":
		for _, x := range []string{"resetpass", "resetkeys", "resetchannels", "off", "-@all"} {
			u.apply(x)
		}
	case r == "":
		return errSyntax
	case r[0] == '>':
		u.addPass(Hash(r[1:]))
	case r[0] == '#':
		if !validHash(r[1:]) {
			return errHash
		}
		u.addPass(r[1:])
	case r[0] == '<', r[0] == '!':
		h := r[1:]
		if r[0] == '<' {
			h = Hash(h)
		} else if !validHash(h) {
			return errHash
		}
		i := slices.Index(u.passwords, h)
		if i < 0 {
			return errNoSuchPass
		}
		u.passwords = slices.Delete(u.passwords, i, i+1)
	case r[0] == '~' || r[0] == '%':
		return u.addKeys(r)
	case r[0] == '&':
		if u.allChans {
			return errAfterAllCh
		}
		if r[1:] == "*" {
			u.channels, u.allChans = []string{"*"}, true
		} else {
			u.channels = append(u.channels, r[1:])
		}
	case r[0] == '(':
		return errSelectors
	case r[0] == '+' || r[0] == '-':
		return u.commandRule(r)
	default:
		return errSyntax
	}
	return ""
}

func (u *User) addPass(h string) {
	if !slices.Contains(u.passwords, h) {
		u.passwords = append(u.passwords, h)
	}
	u.NoPass = false
}

// addKeys applies ~pattern, %R~pattern, %W~pattern or %RW~pattern.
func (u *User) addKeys(r string) string {
	if u.allKeys {
		return errAfterAll
	}
	read, write, pat := true, true, r[1:]
	if r[0] == '%' {
		perms, p, ok := strings.Cut(r[1:], "~")
		if !ok || perms == "" {
			return errSyntax
		}
		read, write = false, false
		for _, c := range strings.ToUpper(perms) {
			switch c {
			case 'R':
				read = true
			case 'W':
				write = true
			default:
				return errSyntax
			}
		}
		pat = p
	}
	if pat == "*" && read && write {
		u.keys, u.allKeys = []KeyPattern{{Pattern: "*", Read: true, Write: true}}, true
		return ""
	}
	u.keys = append(u.keys, KeyPattern{Pattern: pat, Read: read, Write: write})
	return ""
}

// commandRule applies +cmd, -cmd, +cmd|sub, -cmd|sub, +@cat, -@cat.
func (u *User) commandRule(r string) string {
	allow := r[0] == '+'
	name := strings.ToLower(r[1:])
	var ids []int
	if cat, ok := strings.CutPrefix(name, "@"); ok {
		if !slices.Contains(Categories, cat) {
			return errUnknown
		}
		ids = u.catalog.cats[cat]
	} else {
		cmd := u.catalog.byName[name]
		if cmd == nil {
			// Redis allows the first argument of a plain command
			// (+select|0); this server does not.
			parent, _, sub := strings.Cut(name, "|")
			if p := u.catalog.byName[parent]; sub && p != nil && len(p.Subs) == 0 && allow {
				return errFirstArg
			}
			return errUnknown
		}
		ids = append([]int{cmd.ID}, cmd.Subs...)
	}
	for _, id := range ids {
		if allow {
			u.allowed[id/64] |= 1 << (id % 64)
		} else {
			u.allowed[id/64] &^= 1 << (id % 64)
		}
	}
	if !allow {
		u.allCmds = false
	}
	u.cmdRules = append(u.cmdRules, r[:1]+name)
	return ""
}

// CheckPassword reports whether pass opens the user (enabled, and nopass or
// a password's digest), in time independent of which password matched.
func (u *User) CheckPassword(pass string) bool {
	if !u.Enabled {
		return false
	}
	if u.NoPass {
		return true
	}
	h := Hash(pass)
	ok := 0
	for _, p := range u.passwords {
		ok |= subtle.ConstantTimeCompare([]byte(h), []byte(p))
	}
	return ok == 1
}

// Unrestricted reports whether the user may run every command on every key
// and channel: the dispatcher's fast path.
func (u *User) Unrestricted() bool { return u.allCmds && u.allKeys && u.allChans }

// CanRun reports whether the user may run command id.
func (u *User) CanRun(id int) bool {
	return u.allCmds || (id >= 0 && id < len(u.allowed)*64 && u.allowed[id/64]&(1<<(id%64)) != 0)
}

// CanAccess reports whether the user may read (read) and write (write) key.
func (u *User) CanAccess(key []byte, read, write bool) bool {
	if u.allKeys {
		return true
	}
	k := string(key)
	for _, p := range u.keys {
		if (!read || p.Read) && (!write || p.Write) && match.Match(k, p.Pattern) {
			return true
		}
	}
	return false
}

// CanChannel reports whether the user may publish or subscribe to channel
// or, if isPattern, subscribe to the pattern channel. As in Redis, a channel
// is matched against the user's channel patterns (glob syntax), while a
// pattern must be one of them literally: a pattern covers channels no check
// of it could foresee, so only the rule that grants it may.
func (u *User) CanChannel(channel string, isPattern bool) bool {
	if u.allChans {
		return true
	}
	for _, p := range u.channels {
		if isPattern && p == channel || !isPattern && match.Match(channel, p) {
			return true
		}
	}
	return false
}

// Passwords are the digests of the user's passwords.
func (u *User) Passwords() []string { return slices.Clone(u.passwords) }

// Flags are ACL GETUSER's flags.
func (u *User) Flags() []string {
	f := []string{"off"}
	if u.Enabled {
		f[0] = "on"
	}
	if u.NoPass {
		f = append(f, "nopass")
	}
	return f
}

// Commands describes the allowed commands as rules, as GETUSER shows them.
func (u *User) Commands() string {
	base := "-@all"
	if u.baseAll {
		base = "+@all"
	}
	return strings.Join(append([]string{base}, u.cmdRules...), " ")
}

// Keys describes the key patterns, as GETUSER shows them.
func (u *User) Keys() string {
	var parts []string
	for _, p := range u.keys {
		switch {
		case p.Read && p.Write:
			parts = append(parts, "~"+p.Pattern)
		case p.Read:
			parts = append(parts, "%R~"+p.Pattern)
		default:
			parts = append(parts, "%W~"+p.Pattern)
		}
	}
	return strings.Join(parts, " ")
}

// Channels describes the channel patterns.
func (u *User) Channels() string {
	var parts []string
	for _, c := range u.channels {
		parts = append(parts, "&"+c)
	}
	return strings.Join(parts, " ")
}

// Describe is the user as ACL LIST and ACL files write it: rules that rebuild
// it from nothing.
func (u *User) Describe() string {
	parts := append([]string{"user", u.Name}, u.Flags()...)
	for _, p := range u.passwords {
		parts = append(parts, "#"+p)
	}
	if !u.NoPass && len(u.passwords) == 0 {
		parts = append(parts, "resetpass")
	}
	if k := u.Keys(); k != "" {
		parts = append(parts, k)
	} else {
		parts = append(parts, "resetkeys")
	}
	if c := u.Channels(); c != "" {
		parts = append(parts, c)
	} else {
		parts = append(parts, "resetchannels")
	}
	return strings.Join(append(parts, u.Commands()), " ")
}
