package server

import (
	"testing"

	"github.com/cuckoohash/cuckoo/server/internal/command"
)

// TestEveryCommandHasHandler: every command and subcommand of the table is
// served (by its own handler, or its container's), and every handler is
// bound to a command of the table (handle panics otherwise), so a spec
// without a handler cannot be skipped silently by bindCommands.
func TestEveryCommandHasHandler(t *testing.T) {
	bindCommands()
	for _, c := range command.All() {
		specs := append([]*command.Spec{c}, c.Subs...)
		if len(c.Subs) > 0 && handlers[c.Name] == nil {
			specs = c.Subs // a container is served through its subcommands
		}
		for _, x := range specs {
			if commands[x.Name] == nil || (commands[x.Name].run == nil && len(x.Subs) == 0) {
				t.Errorf("command %q has a spec and no handler", x.Name)
			}
		}
	}
	for name := range handlers {
		if command.Find(name) == nil {
			t.Errorf("handler %q has no spec", name)
		}
	}
}
