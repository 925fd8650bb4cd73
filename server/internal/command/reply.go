package command

import (
	"slices"
	"strings"

	"github.com/cuckoohash/cuckoo/server/internal/resp"
	"github.com/tidwall/match"
)

// The replies of the COMMAND command and its subcommands, in Redis 7's
// shapes. Each takes the full request (args[0] is "COMMAND").

// Help lines of COMMAND HELP.
var commandHelp = []string{
	"COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"(no subcommand)",
	"    Return details about all commands.",
	"COUNT",
	"    Return the total number of commands in this server.",
	"LIST [FILTERBY (MODULE <module-name>|ACLCAT <category>|PATTERN <pattern>)]",
	"    Return a list of all commands in this server.",
	"INFO [<command-name> ...]",
	"    Return details about the given commands, or all of them.",
	"DOCS [<command-name> ...]",
	"    Return documentation details about the given commands, or all of them.",
	"GETKEYS <full-command>",
	"    Return the keys from a full command.",
	"GETKEYSANDFLAGS <full-command>",
	"    Return the keys and the access flags from a full command.",
	"HELP",
	"    Print this help.",
}

// ReplyCommand answers COMMAND with no subcommand and COMMAND INFO with no
// names: every command's info, module commands' categories derived as m
// says.
func (t *Table) ReplyCommand(w *resp.Writer, m ModuleACL) {
	all := t.All()
	w.WriteArray(len(all))
	for _, s := range all {
		writeInfo(w, s, m)
	}
}

// ReplyHelp answers COMMAND HELP.
func ReplyHelp(w *resp.Writer) { w.WriteHelp(commandHelp) }

// ReplyCount answers COMMAND COUNT.
func (t *Table) ReplyCount(w *resp.Writer) { w.WriteInt(len(t.byName)) }

// ReplyInfo answers COMMAND INFO [name...]: a null for each unknown name.
func (t *Table) ReplyInfo(w *resp.Writer, args [][]byte, m ModuleACL) {
	if len(args) == 2 {
		t.ReplyCommand(w, m)
		return
	}
	w.WriteArray(len(args) - 2)
	for _, a := range args[2:] {
		if s := t.findBySds(string(a)); s != nil {
			writeInfo(w, s, m)
		} else {
			w.WriteNull()
		}
	}
}

// ReplyDocs answers COMMAND DOCS [name...]: unknown names are left out.
// With module, a command's ModuleComplexity, where it has one, stands for
// its Complexity.
func (t *Table) ReplyDocs(w *resp.Writer, args [][]byte, module bool) {
	var specs []*Spec
	if len(args) == 2 {
		specs = t.All()
	} else {
		for _, a := range args[2:] {
			if s := t.findBySds(string(a)); s != nil {
				specs = append(specs, s)
			}
		}
	}
	w.WriteMap(len(specs))
	for _, s := range specs {
		w.WriteBulkString(s.Name)
		writeDocs(w, s, module)
	}
}

// ReplyList answers COMMAND LIST [FILTERBY MODULE m | ACLCAT c | PATTERN p].
// It reports an error text to answer instead, if any.
func (t *Table) ReplyList(w *resp.Writer, args [][]byte, m ModuleACL) string {
	keep := func(*Spec) bool { return true }
	switch {
	case len(args) == 2:
	case len(args) == 5 && strings.EqualFold(string(args[2]), "filterby"):
		arg := string(args[4])
		switch strings.ToLower(string(args[3])) {
		case "module":
			keep = func(s *Spec) bool {
				m := top(s).ModuleName
				return m != "" && strings.EqualFold(m, arg)
			}
		case "aclcat":
			keep = func(s *Spec) bool { return s.InCategory(strings.ToLower(arg), m) }
		case "pattern":
			arg = strings.ToLower(arg) // Redis matches names without case
			keep = func(s *Spec) bool { return match.Match(s.Name, arg) }
		default:
			return "ERR syntax error"
		}
	default:
		return "ERR syntax error"
	}
	var names []string
	for _, s := range t.All() {
		for _, x := range append([]*Spec{s}, s.Subs...) {
			if keep(x) {
				names = append(names, x.Name)
			}
		}
	}
	w.WriteArray(len(names))
	for _, n := range names {
		w.WriteBulkString(n)
	}
	return ""
}

// findBySds finds a command by its full name as COMMAND INFO and DOCS take
// it, Redis's lookupCommandBySds: "name" or "container|sub", in any case
// ("client list" names nothing).
func (t *Table) findBySds(name string) *Spec {
	if strings.Contains(name, " ") {
		return nil
	}
	return t.Find(name)
}

func top(s *Spec) *Spec {
	if s.container != nil {
		return s.container
	}
	return s
}

// ReplyGetKeys answers COMMAND GETKEYS and GETKEYSANDFLAGS: the keys of the
// request args[2:] by its command's key specs. It reports an error text to
// answer instead, if any.
func (t *Table) ReplyGetKeys(w *resp.Writer, args [][]byte, withFlags bool) string {
	if len(args) < 3 {
		return "ERR Invalid command specified"
	}
	req := args[2:]
	s := t.Lookup(req[0])
	if s != nil && len(s.Subs) > 0 && len(req) > 1 {
		s = s.LookupSub(req[1]) // an unknown subcommand is no command
	}
	switch {
	case s == nil:
		return "ERR Invalid command specified"
	case !s.hasKeys():
		return "ERR The command has no key arguments"
	case !s.ArityOK(len(req)):
		return "ERR Invalid number of arguments specified for command"
	}
	refs, ok := s.keyRefs(req, false)
	if !ok || len(refs) == 0 {
		if s.Flags&NoMandatoryKeys == 0 {
			return "ERR Invalid arguments specified for command"
		}
		refs = nil
	}
	w.WriteArray(len(refs))
	for _, r := range refs {
		if !withFlags {
			w.WriteBulk(req[r.pos])
			continue
		}
		w.WriteArray(2)
		w.WriteBulk(req[r.pos])
		writeKeySpecFlags(w, r.spec.Flags)
	}
	return ""
}

// writeKeySpecFlags writes a key spec's flags as a set, in Redis's order.
func writeKeySpecFlags(w *resp.Writer, flags []string) {
	n := 0
	for _, f := range keySpecFlags {
		if contains(flags, f) {
			n++
		}
	}
	w.WriteSet(n)
	for _, f := range keySpecFlags {
		if contains(flags, f) {
			w.WriteString(f)
		}
	}
}

func writeInfo(w *resp.Writer, s *Spec, m ModuleACL) {
	first, last, step, movable := s.legacyKeys()
	w.WriteArray(10)
	w.WriteBulkString(s.Name)
	w.WriteInt(s.Arity)
	flags := s.Flags.Names()
	if movable { // Redis lists it after no_multi, before allow_busy
		at := len(flags)
		if s.Flags&AllowBusy != 0 {
			at--
		}
		flags = slices.Insert(flags, at, "movablekeys")
	}
	w.WriteSet(len(flags))
	for _, f := range flags {
		w.WriteString(f)
	}
	w.WriteInt(first)
	w.WriteInt(last)
	w.WriteInt(step)
	cats := s.Categories(m)
	w.WriteSet(len(cats))
	for _, c := range cats {
		w.WriteString("@" + c)
	}
	w.WriteSet(len(s.Tips))
	for _, t := range s.Tips {
		w.WriteBulkString(t)
	}
	w.WriteSet(len(s.Keys))
	for _, k := range s.Keys {
		writeKeySpec(w, k)
	}
	if len(s.Subs) == 0 {
		w.WriteSet(0) // Redis's empty subcommands are a set, others an array
		return
	}
	w.WriteArray(len(s.Subs))
	for _, sub := range s.Subs {
		writeInfo(w, sub, m)
	}
}

func writeKeySpec(w *resp.Writer, k KeySpec) {
	w.WriteMap(3)
	w.WriteBulkString("flags")
	writeKeySpecFlags(w, k.Flags)
	w.WriteBulkString("begin_search")
	w.WriteMap(2)
	w.WriteBulkString("type")
	if k.Keyword != "" {
		w.WriteBulkString("keyword")
		w.WriteBulkString("spec")
		w.WriteMap(2)
		w.WriteBulkString("keyword")
		w.WriteBulkString(k.Keyword)
		w.WriteBulkString("startfrom")
		w.WriteInt(k.Begin)
	} else {
		w.WriteBulkString("index")
		w.WriteBulkString("spec")
		w.WriteMap(1)
		w.WriteBulkString("index")
		w.WriteInt(k.Begin)
	}
	w.WriteBulkString("find_keys")
	w.WriteMap(2)
	w.WriteBulkString("type")
	w.WriteBulkString("range")
	w.WriteBulkString("spec")
	w.WriteMap(3)
	w.WriteBulkString("lastkey")
	w.WriteInt(k.LastKey)
	w.WriteBulkString("keystep")
	w.WriteInt(max(k.Step, 1))
	w.WriteBulkString("limit")
	w.WriteInt(k.Limit)
}

func writeDocs(w *resp.Writer, s *Spec, module bool) {
	complexity := s.Complexity
	if module && s.ModuleComplexity != "" {
		complexity = s.ModuleComplexity
	}
	group := s.Group
	if top(s).ModuleName != "" {
		group = "module"
	}
	n := 1
	for _, v := range []string{s.Summary, s.Since, complexity, top(s).ModuleName, s.DeprecatedSince, s.DeprecatedSince, s.ReplacedBy} {
		if v != "" {
			n++ // the deprecated ones: doc_flags and deprecated_since
		}
	}
	if len(s.Args) > 0 {
		n++
	}
	if len(s.Subs) > 0 {
		n++
	}
	w.WriteMap(n)
	pair := func(k, v string) {
		if v != "" {
			w.WriteBulkString(k)
			w.WriteBulkString(v)
		}
	}
	pair("summary", s.Summary)
	pair("since", s.Since)
	w.WriteBulkString("group")
	w.WriteBulkString(group)
	pair("complexity", complexity)
	pair("module", top(s).ModuleName)
	if s.DeprecatedSince != "" {
		w.WriteBulkString("doc_flags")
		w.WriteSet(1)
		w.WriteString("deprecated")
	}
	pair("deprecated_since", s.DeprecatedSince)
	pair("replaced_by", s.ReplacedBy)
	if len(s.Args) > 0 {
		w.WriteBulkString("arguments")
		writeArgs(w, s.Args)
	}
	if len(s.Subs) > 0 {
		w.WriteBulkString("subcommands")
		w.WriteMap(len(s.Subs))
		for _, sub := range s.Subs {
			w.WriteBulkString(sub.Name)
			writeDocs(w, sub, module)
		}
	}
}

func writeArgs(w *resp.Writer, args []Arg) {
	w.WriteArray(len(args))
	for _, a := range args {
		var flags []string
		if a.Optional {
			flags = append(flags, "optional")
		}
		if a.Multiple {
			flags = append(flags, "multiple")
		}
		if a.MultipleToken {
			flags = append(flags, "multiple_token")
		}
		group := a.Type == OneOf || a.Type == Block
		n := 3 // name, type, and display_text or arguments
		if a.Type == Key {
			n++
		}
		for _, v := range []string{a.Token, a.Since, a.DeprecatedSince} {
			if v != "" {
				n++
			}
		}
		if len(flags) > 0 {
			n++
		}
		w.WriteMap(n)
		w.WriteBulkString("name")
		w.WriteBulkString(a.Name)
		w.WriteBulkString("type")
		w.WriteBulkString(string(a.Type))
		if !group {
			w.WriteBulkString("display_text")
			if a.Display != "" {
				w.WriteBulkString(a.Display)
			} else {
				w.WriteBulkString(a.Name)
			}
		}
		if a.Type == Key {
			w.WriteBulkString("key_spec_index")
			w.WriteInt(a.KeySpec)
		}
		if a.Token != "" {
			w.WriteBulkString("token")
			w.WriteBulkString(a.Token)
		}
		if a.Since != "" {
			w.WriteBulkString("since")
			w.WriteBulkString(a.Since)
		}
		if a.DeprecatedSince != "" {
			w.WriteBulkString("deprecated_since")
			w.WriteBulkString(a.DeprecatedSince)
		}
		if len(flags) > 0 {
			w.WriteBulkString("flags")
			w.WriteSet(len(flags))
			for _, f := range flags {
				w.WriteString(f)
			}
		}
		if group {
			w.WriteBulkString("arguments")
			writeArgs(w, a.Args)
		}
	}
}
