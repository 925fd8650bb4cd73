package server

import (
	"flag"
	"io"

	"github.com/cuckoohash/cuckoo/server/internal/conf"
)

// The settings table (package internal/conf) is also what a command line
// and the documentation are made from: cuckoo serve's flags
// (AddSettingFlags), their -h, and docs/settings.md (WriteSettingsDoc).
// This file gives them their public names.

// SettingFlags are a flag set's flags for the settings of the table, one a
// setting, named as the setting. A value is checked when the flag is parsed,
// as CONFIG SET checks it; Apply sets a Config from them.
type SettingFlags = conf.Flags

// AddSettingFlags defines a flag on fs for every setting that has one. defaults
// gives a tool's own defaults, by setting name (cuckoo serve: dir), where they
// differ from a Config's zero value.
func AddSettingFlags(fs *flag.FlagSet, defaults map[string]string) *SettingFlags {
	return conf.AddFlags(fs, defaults)
}

// WriteSettingsDoc writes the table of settings as Markdown: name, default,
// whether CONFIG SET changes it at runtime, and its doc. docs/settings.md is
// its output (TestSettingsDoc keeps it so).
func WriteSettingsDoc(w io.Writer) error { return conf.WriteDoc(w) }
