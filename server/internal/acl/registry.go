package acl

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Ref is a user's identity: connections hold it and load the user on every
// command, so changes apply to them at once.
type Ref struct {
	user    atomic.Pointer[User]
	deleted atomic.Bool
}

// Load returns the user as it is now.
func (r *Ref) Load() *User { return r.user.Load() }

// Deleted reports whether the user was deleted (ACL DELUSER, ACL LOAD).
func (r *Ref) Deleted() bool { return r.deleted.Load() }

// Registry is the set of users. Changes are serialized; reads of a Ref are
// lock-free.
type Registry struct {
	mu      sync.Mutex
	users   map[string]*Ref
	catalog *Catalog
}

// NewRegistry returns a registry holding the default user.
func NewRegistry(cat *Catalog) *Registry {
	r := &Registry{users: map[string]*Ref{}, catalog: cat}
	ref := &Ref{}
	ref.user.Store(DefaultUser(cat))
	r.users["default"] = ref
	return r
}

// Catalog is the commands the registry's rules refer to.
func (r *Registry) Catalog() *Catalog { return r.catalog }

// Get returns the named user's Ref, or nil.
func (r *Registry) Get(name string) *Ref {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.users[name]
}

// SetUser applies rules to the named user, creating it (as NewUser) if
// missing; all or none.
func (r *Registry) SetUser(name string, rules ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := r.users[name]
	base := NewUser(name, r.catalog)
	if ref != nil {
		base = ref.Load()
	}
	u, err := base.Apply(rules...)
	if err != nil {
		return err
	}
	if ref == nil {
		ref = &Ref{}
		r.users[name] = ref
	}
	ref.user.Store(u)
	return nil
}

// ErrDeleteDefault refuses ACL DELUSER default.
var ErrDeleteDefault = errors.New("ERR The 'default' user cannot be removed")

// DelUsers deletes the named users and returns how many existed; their Refs
// report Deleted, so the server can close their connections.
func (r *Registry) DelUsers(names ...string) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slices.Contains(names, "default") {
		return 0, ErrDeleteDefault
	}
	n := 0
	for _, name := range names {
		if ref := r.users[name]; ref != nil {
			ref.deleted.Store(true)
			delete(r.users, name)
			n++
		}
	}
	return n, nil
}

// Users returns every user, sorted by name.
func (r *Registry) Users() []*User {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*User, 0, len(r.users))
	for _, ref := range r.users {
		out = append(out, ref.Load())
	}
	slices.SortFunc(out, func(a, b *User) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Definition is one user as an ACL file defines it.
type Definition struct {
	Name  string
	Rules []string
}

// ParseFile reads an ACL file: one "user <name> <rule>..." a line; empty
// lines and lines starting with '#' are skipped. Every rule is checked; the
// first error names the file and line. A user defined twice is an error, as
// in Redis.
func ParseFile(name, text string, cat *Catalog) ([]Definition, error) {
	var defs []Definition
	seen := map[string]bool{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if f[0] != "user" || len(f) < 2 {
			return nil, fmt.Errorf("%s:%d: line should start with user keyword", name, i+1)
		}
		if seen[f[1]] {
			return nil, fmt.Errorf("%s:%d: Duplicate user '%s' found", name, i+1, f[1])
		}
		seen[f[1]] = true
		if _, err := NewUser(f[1], cat).Apply(f[2:]...); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, i+1, err)
		}
		defs = append(defs, Definition{Name: f[1], Rules: f[2:]})
	}
	return defs, nil
}

// Replace makes defs the users, all at once: users not in defs are deleted
// (their Refs report Deleted), the default user is reset to Redis's default
// if defs do not define it. defs must come from ParseFile.
func (r *Registry) Replace(defs []Definition) error {
	users := map[string]*User{"default": DefaultUser(r.catalog)}
	for _, d := range defs {
		u, err := NewUser(d.Name, r.catalog).Apply(d.Rules...)
		if err != nil {
			return err
		}
		users[d.Name] = u
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, ref := range r.users {
		if users[name] == nil {
			ref.deleted.Store(true)
			delete(r.users, name)
		}
	}
	for name, u := range users {
		ref := r.users[name]
		if ref == nil {
			ref = &Ref{}
			r.users[name] = ref
		}
		ref.user.Store(u)
	}
	return nil
}

// File is the users as an ACL file holds them, one line each, sorted.
func (r *Registry) File() string {
	var sb strings.Builder
	for _, u := range r.Users() {
		sb.WriteString(u.Describe())
		sb.WriteByte('\n')
	}
	return sb.String()
}
