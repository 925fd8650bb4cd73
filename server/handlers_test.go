package server

import (
	"strings"
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/command"
)

// TestEveryCommandHasHandler: every command and subcommand of the table is
// served (by its own handler, or its container's), and every binding is to
// a row of the table.
func TestEveryCommandHasHandler(t *testing.T) {
	cs, err := newCommandSet(families())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.table.All() {
		specs := append([]*command.Spec{c}, c.Subs...)
		if len(c.Subs) > 0 && (cs.byName[c.Name] == nil || cs.byName[c.Name].run == nil) {
			specs = c.Subs // a container is served through its subcommands
		}
		for _, x := range specs {
			if cs.byName[x.Name] == nil || (cs.byName[x.Name].run == nil && len(x.Subs) == 0) {
				t.Errorf("command %q has a row and no handler", x.Name)
			}
		}
	}
	for _, fam := range families() {
		for _, b := range fam {
			if b.spec == nil && cs.table.Find(b.name) == nil {
				t.Errorf("handler %q has no row", b.name)
			}
		}
	}
}

// TestCommandSetRefuses: a binding to no row, two handlers for one
// command, a row of the family's own given twice, and a row with no
// handler each refuse the set, naming the command.
func TestCommandSetRefuses(t *testing.T) {
	ping := func(s *Server, cl *client, args [][]byte) {}
	own := func() *command.Spec { return &command.Spec{Name: "cf.test", Arity: 1} }
	for _, tc := range []struct {
		name string
		fams [][]binding
		want string
	}{
		{"no row", append(families(), []binding{{name: "nosuch", run: ping}}), `"nosuch", which is not in the command table`},
		{"two handlers", append(families(), []binding{{name: "ping", run: ping}}), `two handlers for "ping"`},
		{"a row twice", append(families(), []binding{{spec: own(), run: ping}, {spec: own(), run: ping}}), `duplicate name "cf.test"`},
		{"a row with no handler", withoutBinding(families(), "time"), `no handler for "time"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newCommandSet(tc.fams)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("newCommandSet: %v, want an error containing %s", err, tc.want)
			}
		})
	}
}

// withoutBinding is fams without the binding named name.
func withoutBinding(fams [][]binding, name string) [][]binding {
	var out [][]binding
	for _, fam := range fams {
		var keep []binding
		for _, b := range fam {
			if b.name != name {
				keep = append(keep, b)
			}
		}
		out = append(out, keep)
	}
	return out
}
