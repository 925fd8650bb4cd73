// Package settings is the engine of the server's one table of settings:
// the types of values (Kind: integers in ranges, sizes with redis.conf's
// units, enums, strings, the save schedule, an address,
// client-output-buffer-limit's classes, a size or a percentage), parsing
// them with Redis's error texts, writing them back as a configuration
// file's lines, and what the table is used for besides: CONFIG SET's all or
// none (Table.Change), a configuration file's directives (Table.Apply),
// CONFIG REWRITE's lines (Table.Lines), command-line flags (Table.AddFlags)
// and the Markdown of docs/settings.md (Table.WriteDoc).
//
// The rows are package internal/conf's (table.go): a Setting is generic
// in S, the settings a row reads and writes, and L, the running server a
// row's Get may ask (the port it listens on), so this package knows
// neither. A setting is defined once, and everything above is made from
// that one definition.
//
// Invariants: a value is set only after it parsed and passed the row's
// Check; Line(Get) reads back through Parse to the same value; a flag's
// default parses (AddFlags panics otherwise, a programming error).
//
// It imports the standard library and internal/config (redis.conf's syntax
// and sizes), internal/quoted (quoting a string) and internal/limits (the
// client limits' values), nothing else of the server's; only package
// internal/conf imports it.
package settings
