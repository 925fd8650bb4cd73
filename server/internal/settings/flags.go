package settings

import (
	"errors"
	"flag"
	"fmt"
	"strconv"

	"github.com/cuckoohash/cuckoo/server/internal/config"
)

// Flags are a flag set's flags for the settings of a table, one a setting
// that has one (not NoFlag), named as the setting. A value is checked when
// the flag is parsed, as CONFIG SET checks it.
type Flags[L, S any] struct {
	flags []*settingFlag[L, S]
}

// settingFlag is one setting's flag: a flag.Value.
type settingFlag[L, S any] struct {
	x    *Setting[L, S]
	text string // as given, or the default
	v    Value
	set  bool // given on the command line
	own  bool // the default is the tool's, not the table's
}

// AddFlags defines a flag on fs for every setting of t that has one, and
// one more for its alias, if it has one.
// defaults gives a tool's own defaults, by setting name, where they differ
// from the table's. A default that does not parse is a programming error:
// AddFlags panics.
func (t Table[L, S]) AddFlags(fs *flag.FlagSet, defaults map[string]string) *Flags[L, S] {
	fl := &Flags[L, S]{}
	for _, x := range t {
		if x.NoFlag {
			continue
		}
		f := &settingFlag[L, S]{x: x, text: x.Def}
		if d, ok := defaults[x.Name]; ok {
			f.text, f.own = d, true
		}
		v, why := x.Parse(f.text)
		if why != "" {
			panic(fmt.Sprintf("server: the default %q of setting %s: %s", f.text, x.Name, why))
		}
		f.v = v
		if x.Kind == Memory && v.N > 0 {
			f.text = config.FormatMemory(v.N) // 64mb, as -h shows it
		}
		fs.Var(f, x.Name, x.Usage())
		if x.Alias != "" {
			fs.Var(f, x.Alias, "the same as --"+x.Name)
		}
		fl.flags = append(fl.flags, f)
	}
	return fl
}

// Apply sets st's settings from the flags given on the command line, and
// from the tool's own defaults unless explicitOnly. A setting left alone
// keeps st's value.
func (fl *Flags[L, S]) Apply(st *S, explicitOnly bool) {
	for _, f := range fl.flags {
		if f.set || (f.own && !explicitOnly) {
			f.x.Set(st, f.v)
		}
	}
}

func (f *settingFlag[L, S]) String() string {
	if f == nil || f.x == nil {
		return ""
	}
	return f.text
}

// Set parses a value as CONFIG SET does; a yes/no setting also takes
// package flag's true and false (a bare --tls-replication).
func (f *settingFlag[L, S]) Set(s string) error {
	if b, err := strconv.ParseBool(s); err == nil && f.x.IsBool() {
		s = YesNo(b)
	}
	v, why := f.x.Parse(s)
	if why != "" {
		return errors.New(why)
	}
	f.text, f.v, f.set = s, v, true
	return nil
}

func (f *settingFlag[L, S]) IsBoolFlag() bool { return f.x != nil && f.x.IsBool() }
