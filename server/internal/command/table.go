package command

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Table is a set of commands by lower-case name; subcommands hang off
// theirs. A server builds its one Table when it starts (NewTable) from
// Redis's rows (Redis) and its families' own, and only reads it after.
type Table struct {
	byName map[string]*Spec
}

// Redis returns Redis's own commands' rows, one group file each, made
// anew: a Table links their subcommands to them.
func Redis() []*Spec {
	var specs []*Spec
	for _, group := range [...]func() []*Spec{aclSpecs, clusterSpecs, configSpecs, connectionSpecs, genericSpecs,
		keyspaceSpecs, pubsubSpecs, replicationSpecs, serverSpecs, transactionsSpecs} {
		specs = append(specs, group()...)
	}
	return specs
}

// NewTable makes the table of specs. A name given twice, one not in lower
// case, or a subcommand not named after its container is an error: the
// rows are code, and a server refuses to start on a bad one.
func NewTable(specs []*Spec) (*Table, error) {
	t := &Table{byName: make(map[string]*Spec, len(specs))}
	var errs []error
	for _, s := range specs {
		if s.Name != strings.ToLower(s.Name) || t.byName[s.Name] != nil {
			errs = append(errs, fmt.Errorf("command: bad or duplicate name %q", s.Name))
			continue
		}
		for _, sub := range s.Subs {
			if !strings.HasPrefix(sub.Name, s.Name+"|") {
				errs = append(errs, fmt.Errorf("command: subcommand %q outside %q", sub.Name, s.Name))
			}
			sub.container = s
		}
		t.byName[s.Name] = s
	}
	return t, errors.Join(errs...)
}

// Len is the number of commands, not counting subcommands.
func (t *Table) Len() int { return len(t.byName) }

// Lookup returns the command named name, in any case, or nil. It does not
// allocate.
func (t *Table) Lookup(name []byte) *Spec {
	var lower [32]byte
	if len(name) > len(lower) {
		return nil
	}
	return t.byName[string(lowerInto(lower[:], name))]
}

// LookupSub returns c's subcommand named sub, in any case, or nil.
func (s *Spec) LookupSub(sub []byte) *Spec {
	if len(s.Subs) == 0 || len(sub) > 32 {
		return nil
	}
	var buf [64]byte
	full := append(append(buf[:0], s.Name...), '|')
	full = append(full, sub...)
	lowerInto(full[len(s.Name)+1:], sub)
	for _, x := range s.Subs {
		if x.Name == string(full) {
			return x
		}
	}
	return nil
}

func lowerInto(dst, src []byte) []byte {
	for i, ch := range src {
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		dst[i] = ch
	}
	return dst[:len(src)]
}

// All returns every command (not subcommands), sorted by name.
func (t *Table) All() []*Spec {
	out := make([]*Spec, 0, len(t.byName))
	for _, s := range t.byName {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Spec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Find returns the command or subcommand named name ("client|list" or
// "client list"), in any case, or nil.
func (t *Table) Find(name string) *Spec {
	name = strings.ToLower(name)
	top, sub, ok := strings.Cut(strings.ReplaceAll(name, " ", "|"), "|")
	s := t.byName[top]
	if s == nil || !ok {
		return s
	}
	return s.LookupSub([]byte(sub))
}
