package conf

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/config"
	"github.com/cuckoohash/cuckoo/server/internal/settings"
	"github.com/tidwall/match"
)

// What the table is used for: CONFIG GET (Get), CONFIG SET (Set), CONFIG
// REWRITE (Rewrite) and cuckoo serve --config (ReadFile). The server's
// handlers parse the request, call these under the server's lock of the
// settings, and reply.

// SetError is a CONFIG SET refused: the setting to blame and why, in
// Redis's words (its Error is the reply without "ERR ").
type SetError = settings.SetError

// Pair is a setting's name and its value, as CONFIG GET lists them.
type Pair struct{ Name, Value string }

// Get returns the settings whose names (or aliases) match any of the glob
// patterns (any case), in the table's order, with their values in st (and
// l's, for those the server holds). A setting is listed under each of its
// names that a pattern matches, as Redis 7 lists min-replicas-to-write and
// min-slaves-to-write.
func Get(l Live, st *State, patterns []string) []Pair {
	lower := make([]string, len(patterns))
	for i, p := range patterns {
		lower[i] = strings.ToLower(p)
	}
	var out []Pair
	for _, x := range table {
		for _, name := range []string{x.Name, x.Alias} {
			for _, p := range lower {
				if name != "" && match.Match(name, p) {
					out = append(out, Pair{name, x.Get(l, st)})
					break
				}
			}
		}
	}
	return out
}

// Set applies pairs, name value name value ..., to st as CONFIG SET does:
// all or none, as Redis 7 does. The names are checked first (unknown,
// immutable, given twice), then the values, then the settings together;
// only then is st changed. It returns the names of the settings set, in
// the order given, or the first refusal, a *SetError, with st unchanged.
func Set(st *State, pairs []string) ([]string, error) {
	next := *st
	xs, err := table.Change(&next, pairs)
	if err != nil {
		return nil, err
	}
	if name, why := next.check(); why != "" {
		return nil, &SetError{Name: name, Why: why}
	}
	*st = next
	names := make([]string, len(xs))
	for i, x := range xs {
		names[i] = x.Name
	}
	return names, nil
}

// Rewrite rewrites the configuration file at path in place (package
// internal/config's Rewrite) with the settings of st and l: each setting's
// first line gets the value in force, its other lines go, comments and
// other lines stay; the settings the file lacks are appended when their
// values differ from the defaults or changed reports them (CONFIG SET
// changed them). The file is replaced atomically; a missing one is
// created.
func Rewrite(path string, l Live, st *State, changed func(name string) bool) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return config.WriteFile(path, config.Rewrite(old, table.Lines(l, st, changed)))
}

// Listen is the address a configuration file gives cuckoo serve, which a
// Config does not hold.
type Listen struct {
	Bind    string // "" if the file has no bind
	Port    int    // -1 if the file has no port; 0 turns the plain listener off
	TLSPort int    // -1 if the file has no tls-port; 0 is no TLS listener
}

// ReadFile applies the settings of the file at path, in redis.conf's syntax
// (see the package documentation), to cfg, and sets cfg.ConfigFile to path.
// It returns the file's bind and port. An unknown setting or a bad value is
// an error naming the file, the line and the setting; cfg is then
// unchanged.
func ReadFile(path string, cfg *Config) (Listen, error) {
	st := NewState(*cfg)
	if err := table.ReadFile(path, &st); err != nil {
		return Listen{}, err
	}
	if name, why := st.check(); why != "" {
		return Listen{}, fmt.Errorf("%s: %s: %s", path, name, why)
	}
	st.finish()
	*cfg = st.Config
	cfg.ConfigFile = path
	return Listen{Bind: st.bind, Port: int(st.port), TLSPort: int(st.tlsPort)}, nil
}
