package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/config"
)

// The settings table (cmd_config.go) is also what a command line and the
// documentation are made from: cuckoo serve's flags (SettingFlags), their
// -h, and docs/settings.md (WriteSettingsDoc), so that a setting is defined
// once, with its name, type, range, default and doc.

// SettingFlags are a flag set's flags for the settings of the table, one a
// setting, named as the setting. A value is checked when the flag is parsed,
// as CONFIG SET checks it.
type SettingFlags struct {
	flags []*settingFlag
	fs    *flag.FlagSet
}

// settingFlag is one setting's flag.
type settingFlag struct {
	x    *setting
	text string // as given, or the default
	v    value
	set  bool // given on the command line
	own  bool // the default is the tool's, not a Config's zero value
}

// AddSettingFlags defines a flag on fs for every setting that has one. defaults
// gives a tool's own defaults, by setting name (cuckoo serve: dir), where they
// differ from a Config's zero value.
func AddSettingFlags(fs *flag.FlagSet, defaults map[string]string) *SettingFlags {
	sf := &SettingFlags{fs: fs}
	for _, x := range settingsTable {
		if x.noFlag {
			continue
		}
		f := &settingFlag{x: x, text: x.def}
		if d, ok := defaults[x.name]; ok {
			f.text, f.own = d, true
		}
		v, why := x.parse(f.text)
		if why != "" {
			panic(fmt.Sprintf("server: the default %q of setting %s: %s", f.text, x.name, why))
		}
		f.v = v
		if x.kind == kindMemory && v.n > 0 {
			f.text = config.FormatMemory(v.n) // 64mb, as -h shows it
		}
		fs.Var(f, x.name, x.usage())
		sf.flags = append(sf.flags, f)
	}
	return sf
}

// usage is x's flag usage: its doc, and its range.
func (x *setting) usage() string {
	u := x.doc
	if x.kind == kindInt && x.hi > x.lo {
		u += fmt.Sprintf(" (%d..%d)", x.lo, x.hi)
	}
	return u
}

// isBool reports whether x is a yes/no setting: its flag needs no value.
func (x *setting) isBool() bool {
	return x.kind == kindEnum && len(x.enum) == 2 && x.enum[0] == "yes" && x.enum[1] == "no"
}

func (f *settingFlag) String() string {
	if f == nil || f.x == nil {
		return ""
	}
	return f.text
}

// Set parses a value as CONFIG SET does; a yes/no setting also takes
// package flag's true and false (a bare --tls-replication).
func (f *settingFlag) Set(s string) error {
	if b, err := strconv.ParseBool(s); err == nil && f.x.isBool() {
		s = yesNo(b)
	}
	v, why := f.x.parse(s)
	if why != "" {
		return errors.New(why)
	}
	f.text, f.v, f.set = s, v, true
	return nil
}

func (f *settingFlag) IsBoolFlag() bool { return f.x != nil && f.x.isBool() }

// Apply sets cfg's settings from the flags given on the command line, and
// from the tool's own defaults unless explicitOnly (over a configuration
// file's settings, as redis-server's command line overrides its file). A
// setting left alone keeps cfg's value: a Config's zero value is the
// table's default (cf-bucket-size's "2" is not the same as none given). The
// settings are then checked together, as CONFIG SET checks them.
func (sf *SettingFlags) Apply(cfg *Config, explicitOnly bool) error {
	st := newSettings(*cfg)
	for _, f := range sf.flags {
		if f.set || (f.own && !explicitOnly) {
			f.x.set(&st, f.v)
		}
	}
	if name, why := st.check(); why != "" {
		return fmt.Errorf("--%s: %s", name, why)
	}
	st.finish()
	*cfg = st.cfg
	return nil
}

// WriteSettingsDoc writes the table of settings as Markdown: name, default,
// whether CONFIG SET changes it at runtime, and its doc. docs/settings.md is
// its output (TestSettingsDoc keeps it so).
func WriteSettingsDoc(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Settings of cuckoo serve\n\n")
	b.WriteString("Generated from the server's table of settings (server/cmd_config.go) by\n")
	b.WriteString("`go test ./server -run TestSettingsDoc -update`; do not edit by hand.\n\n")
	b.WriteString("Each is a line of a `--config` file (redis.conf's syntax), a `cuckoo serve`\n")
	b.WriteString("flag of the same name (unless its line says otherwise), and a CONFIG GET parameter; CONFIG SET\n")
	b.WriteString("changes those marked *runtime* while the server runs. Sizes are written as in\n")
	b.WriteString("redis.conf: bytes, or with a unit (k, m, g: powers of 1000; kb, mb, gb: of 1024).\n\n")
	b.WriteString("| setting | default | changes | what it is |\n|---|---|---|---|\n")
	for _, x := range settingsTable {
		when := "startup"
		if x.mutable {
			when = "runtime"
		}
		doc := strings.ReplaceAll(x.usage(), "`", "")
		def := x.def
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", x.name, def, when, strings.ReplaceAll(doc, "|", `\|`))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
