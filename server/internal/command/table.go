package command

import (
	"slices"
	"strings"
)

// table maps lower-case names to commands; subcommands hang off theirs.
var table = map[string]*Spec{}

// Register adds specs to the table: called by the init of each group file
// here, and by the server's families that keep their rows beside their
// handlers (the CF commands, as a module registers its own). It panics on a
// name given twice or a malformed spec: the table is code, and its tests run
// every init. Register must not be called once the server has started.
func Register(specs ...*Spec) {
	for _, s := range specs {
		if s.Name != strings.ToLower(s.Name) || table[s.Name] != nil {
			panic("command: bad or duplicate name " + s.Name)
		}
		for _, sub := range s.Subs {
			if !strings.HasPrefix(sub.Name, s.Name+"|") {
				panic("command: subcommand " + sub.Name + " outside " + s.Name)
			}
			sub.container = s
		}
		table[s.Name] = s
	}
}

// Lookup returns the command named name, in any case, or nil. It does not
// allocate.
func Lookup(name []byte) *Spec {
	var lower [32]byte
	if len(name) > len(lower) {
		return nil
	}
	return table[string(lowerInto(lower[:], name))]
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
func All() []*Spec {
	out := make([]*Spec, 0, len(table))
	for _, s := range table {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *Spec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Find returns the command or subcommand named name ("client|list" or
// "client list"), in any case, or nil.
func Find(name string) *Spec {
	name = strings.ToLower(name)
	top, sub, ok := strings.Cut(strings.ReplaceAll(name, " ", "|"), "|")
	s := table[top]
	if s == nil || !ok {
		return s
	}
	return s.LookupSub([]byte(sub))
}
