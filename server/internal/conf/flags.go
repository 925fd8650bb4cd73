package conf

import (
	"flag"
	"fmt"
	"io"

	"github.com/cuckoohash/cuckoo/server/internal/settings"
)

// The table is also what a command line and the documentation are made
// from: cuckoo serve's flags (AddFlags), their -h, and docs/settings.md
// (WriteDoc), so that a setting is defined once, with its name, type,
// range, default and doc. Package internal/settings makes them.

// Flags are a flag set's flags for the settings of the table, one a
// setting, named as the setting. A value is checked when the flag is
// parsed, as CONFIG SET checks it.
type Flags struct {
	flags *settings.Flags[Live, State]
}

// AddFlags defines a flag on fs for every setting that has one. defaults
// gives a tool's own defaults, by setting name (cuckoo serve: dir), where
// they differ from a Config's zero value.
func AddFlags(fs *flag.FlagSet, defaults map[string]string) *Flags {
	return &Flags{flags: table.AddFlags(fs, defaults)}
}

// Apply sets cfg's settings from the flags given on the command line, and
// from the tool's own defaults unless explicitOnly (over a configuration
// file's settings, as redis-server's command line overrides its file). A
// setting left alone keeps cfg's value: a Config's zero value is the
// table's default (cf-bucket-size's "2" is not the same as none given). The
// settings are then checked together, as CONFIG SET checks them.
func (sf *Flags) Apply(cfg *Config, explicitOnly bool) error {
	st := NewState(*cfg)
	sf.flags.Apply(&st, explicitOnly)
	if name, why := st.check(); why != "" {
		return fmt.Errorf("--%s: %s", name, why)
	}
	st.finish()
	*cfg = st.Config
	return nil
}

// WriteDoc writes the table of settings as Markdown: name, default,
// whether CONFIG SET changes it at runtime, and its doc. docs/settings.md
// is its output (package server's TestSettingsDoc keeps it so).
func WriteDoc(w io.Writer) error { return table.WriteDoc(w) }
