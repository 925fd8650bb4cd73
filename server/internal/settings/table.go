package settings

import (
	"fmt"
	"os"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/config"
)

// Table is the one table of a server's settings, in the order CONFIG GET
// and docs/settings.md list them.
type Table[L, S any] []*Setting[L, S]

// Find returns the setting named name (lower case), by its name or its
// alias, or nil.
func (t Table[L, S]) Find(name string) *Setting[L, S] {
	for _, x := range t {
		if x.Name == name || (x.Alias != "" && x.Alias == name) {
			return x
		}
	}
	return nil
}

// SetError is why a CONFIG SET is refused, in Redis's words: an unknown
// name, or a setting that cannot take the value given (Why).
type SetError struct {
	Name    string // as given
	Why     string
	Unknown bool
}

func (e *SetError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("Unknown option or number of arguments for CONFIG SET - '%s'", e.Name)
	}
	return fmt.Sprintf("CONFIG SET failed (possibly related to argument '%s') - %s", e.Name, e.Why)
}

// Change applies a CONFIG SET of pairs, names and values in turn (len(pairs)
// even), to st: all or none, as Redis 7 does. The names are checked first
// (unknown, immutable, given twice), then each value is parsed and set in
// turn, and at each step the first one refused is reported (*SetError) with
// st changed in part: the caller changes a copy, and checks the settings
// together afterwards. It returns the settings changed, in the order given.
//
// A name given twice is a duplicate; a setting given once by its name and
// once by its alias is not, and takes the later value, as in Redis 7.0. A
// value's refusal names the setting as given (its alias, if that), in
// lower case, as Redis does.
func (t Table[L, S]) Change(st *S, pairs []string) ([]*Setting[L, S], error) {
	xs := make([]*Setting[L, S], 0, len(pairs)/2)
	names := make([]string, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		name := pairs[i]
		lower := strings.ToLower(name)
		x := t.Find(lower)
		switch {
		case x == nil:
			return nil, &SetError{Name: name, Unknown: true}
		case !x.Mutable:
			return nil, &SetError{Name: name, Why: "can't set immutable config"}
		}
		if lower != x.Alias {
			lower = x.Name
		}
		for _, y := range names {
			if y == lower {
				return nil, &SetError{Name: name, Why: "duplicate parameter"}
			}
		}
		xs, names = append(xs, x), append(names, lower)
	}
	for i, x := range xs {
		v, why, ok := Value{}, "", false
		if x.SetParse != nil {
			v, why, ok = x.SetParse(st, pairs[2*i+1])
		}
		if !ok {
			v, why = x.Parse(pairs[2*i+1])
		}
		if why != "" {
			return nil, &SetError{Name: names[i], Why: why}
		}
		x.Set(st, v)
	}
	return xs, nil
}

// ReadFile applies the configuration file at path, in redis.conf's syntax
// (config.Parse), to st (Apply). Its errors are the file's (os.ReadFile's,
// a *config.Error); st is then changed in part.
func (t Table[L, S]) ReadFile(path string, st *S) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	ds, err := config.Parse(path, data)
	if err != nil {
		return err
	}
	return t.Apply(path, ds, st)
}

// Apply sets the settings of a configuration file's directives, read from
// the file named path, on st, in order. An unknown setting, a wrong number
// of arguments or a bad value is a *config.Error naming the file, the line
// and the setting; st is then changed in part.
func (t Table[L, S]) Apply(path string, ds []config.Directive, st *S) error {
	for _, d := range ds {
		x := t.Find(d.Name)
		if x == nil {
			return &config.Error{File: path, Line: d.Line, Msg: fmt.Sprintf("unknown setting '%s'", d.Name)}
		}
		arg, ok := x.args(d.Args)
		if !ok {
			return &config.Error{File: path, Line: d.Line, Msg: fmt.Sprintf("%s: wrong number of arguments (want one value)", d.Name)}
		}
		v, why := x.Parse(arg)
		if why != "" {
			return &config.Error{File: path, Line: d.Line, Msg: fmt.Sprintf("%s: %s", d.Name, why)}
		}
		x.Set(st, v)
	}
	return nil
}

// Lines are every setting's line for CONFIG REWRITE (config.Rewrite), with
// the values in force: a line is appended to a file that lacks it when its
// value differs from the default or changed reports it changed.
func (t Table[L, S]) Lines(l L, st *S, changed func(name string) bool) []config.Setting {
	lines := make([]config.Setting, len(t))
	for i, x := range t {
		v := x.Get(l, st)
		lines[i] = config.Setting{Name: x.Name, Alias: x.Alias, Line: x.Line(v), Append: v != x.Def || changed(x.Name)}
	}
	return lines
}
