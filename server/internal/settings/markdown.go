package settings

import (
	"fmt"
	"io"
	"strings"
)

// WriteDoc writes t as Markdown: name, default, whether CONFIG SET changes
// it at runtime, and its doc. docs/settings.md is the server's table so
// written (the server's TestSettingsDoc keeps it so).
func (t Table[L, S]) WriteDoc(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Settings of cuckoo serve\n\n")
	b.WriteString("Generated from the server's table of settings (server/internal/conf/table.go) by\n")
	b.WriteString("`go test ./server -run TestSettingsDoc -update`; do not edit by hand.\n\n")
	b.WriteString("Each is a line of a `--config` file (redis.conf's syntax), a `cuckoo serve`\n")
	b.WriteString("flag of the same name (unless its line says otherwise), and a CONFIG GET parameter; CONFIG SET\n")
	b.WriteString("changes those marked *runtime* while the server runs. Sizes are written as in\n")
	b.WriteString("redis.conf: bytes, or with a unit (k, m, g: powers of 1000; kb, mb, gb: of 1024).\n\n")
	b.WriteString("| setting | default | changes | what it is |\n|---|---|---|---|\n")
	for _, x := range t {
		when := "startup"
		if x.Mutable {
			when = "runtime"
		}
		doc := strings.ReplaceAll(x.Usage(), "`", "")
		if x.Alias != "" {
			doc += "; also named " + x.Alias
		}
		def := x.Def
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", x.Name, def, when, strings.ReplaceAll(doc, "|", `\|`))
	}
	for _, x := range t {
		if x.Note != "" {
			fmt.Fprintf(&b, "\n## %s\n\n%s\n", x.Name, x.Note)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
