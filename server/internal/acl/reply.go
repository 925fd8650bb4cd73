package acl

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cuckoohash/cuckoo/server/internal/config"
	"github.com/cuckoohash/cuckoo/server/internal/quoted"
	"github.com/cuckoohash/cuckoo/server/internal/resp"
)

// The ACL commands' replies and errors, in Redis's words: the server parses
// a request, calls this package and writes what it returns. An error here
// is the reply itself (its text is what the client reads).

// replyError is an error whose text is a reply, exactly as Redis spells it
// (capitals and full stops included).
type replyError string

func (e replyError) Error() string { return string(e) }

// The errors of authentication and of the ACL file's commands.
var (
	// ErrNoAuth refuses a command before AUTH when the default user needs
	// a password.
	ErrNoAuth error = replyError("NOAUTH Authentication required.")
	// ErrWrongPass refuses AUTH: no such user, a wrong password or a
	// disabled user, which Redis does not tell apart.
	ErrWrongPass error = replyError("WRONGPASS invalid username-password pair or user is disabled.")
	// ErrNoFile refuses ACL SAVE and ACL LOAD when no ACL file is set.
	ErrNoFile error = replyError("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.")
	// ErrSave is ACL SAVE's answer when the file could not be written; the
	// cause is for the server's log (SaveError).
	ErrSave error = replyError("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
)

// SaveError is ACL SAVE's failure: its text is ErrSave's, Err the cause
// the server logs.
type SaveError struct{ Err error }

func (e *SaveError) Error() string { return ErrSave.Error() }

// Unwrap returns the cause.
func (e *SaveError) Unwrap() error { return e.Err }

// LoadError is ACL LOAD's failure, the users left unchanged: the reply
// names the cause with the file's directory left out, as Redis does.
type LoadError struct {
	Dir string // the ACL file's directory
	Err error
}

func (e *LoadError) Error() string {
	return "ERR Error loading ACLs, leaving the current users unchanged: " + strings.ReplaceAll(e.Err.Error(), e.Dir+"/", "")
}

// Unwrap returns the cause (os.ErrNotExist for a missing file).
func (e *LoadError) Unwrap() error { return e.Err }

// Save writes r's users to the ACL file at path, atomically
// (config.WriteFile: a temporary file, fsync, rename, fsync of the
// directory). A failure is a *SaveError.
func (r *Registry) Save(path string) error {
	if err := config.WriteFile(path, []byte(r.File())); err != nil {
		return &SaveError{err}
	}
	return nil
}

// Load replaces r's users by those of the ACL file at path, all or none
// (Replace). A failure is a *LoadError and leaves the users as they were.
func (r *Registry) Load(path string) error {
	err := func() error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		defs, err := ParseFile(path, string(b), r.catalog)
		if err != nil {
			return err
		}
		return r.Replace(defs)
	}()
	if err != nil {
		return &LoadError{Dir: filepath.Dir(path), Err: err}
	}
	return nil
}

// Denied is a command refused to a user: the reply NOPERM that refuses it
// (Error) or ACL DRYRUN's text (DryRun), and what ACL LOG records.
type Denied struct {
	User    string
	Command string // the command's full name, lower case ("acl|setuser")
	Reason  string // DeniedCommand, DeniedKey or DeniedChannel
	Object  []byte // the key or channel refused; nil for DeniedCommand
}

// Error is the reply that refuses the command, in Redis's words.
func (d *Denied) Error() string {
	if d.Reason == DeniedCommand {
		return fmt.Sprintf("NOPERM User %s has no permissions to run the '%s' command", d.User, d.Command)
	}
	return "NOPERM No permissions to access a " + d.Reason
}

// DryRun is ACL DRYRUN's answer for the refused command.
func (d *Denied) DryRun() string {
	if d.Reason == DeniedCommand {
		return fmt.Sprintf("User %s has no permissions to run the '%s' command", d.User, d.Command)
	}
	return fmt.Sprintf("User %s has no permissions to access the '%s' %s", d.User, d.Object, d.Reason)
}

// LogObject is ACL LOG's object: the command, or the key or channel.
func (d *Denied) LogObject() string {
	if d.Reason == DeniedCommand {
		return d.Command
	}
	return string(d.Object)
}

// Check is the check of a command before it runs: nil if u may run the
// command of catalog id, named name, on args (the full request), else why
// not. keys lists args's keys (nil: none); pubsub says the command is a
// pub/sub one, whose channels (Channels) are checked too. The server skips
// commands that need no authentication.
func (u *User) Check(id int, name string, keys KeySpec, pubsub bool, args [][]byte) *Denied {
	var chans [][]byte
	pattern := false
	if pubsub {
		chans, pattern = Channels(name, args)
	}
	reason, object := u.Denial(id, keys, args, chans, pattern)
	if reason == "" {
		return nil
	}
	return &Denied{User: u.Name, Command: name, Reason: reason, Object: object}
}

// Unpermitted are the subscribers among subs (a subscriber and one of its
// channels or patterns, as package pubsub's Registry.All yields them) whose
// user may no longer use one of them, after ACL SETUSER or ACL LOAD, each
// once, in the order met: Redis closes them. user is a subscriber's user,
// nil before authentication (never closed).
func Unpermitted[C comparable](subs iter.Seq2[C, Subscription], user func(C) *User) []C {
	var out []C
	for c, sub := range subs {
		if u := user(c); u != nil && !u.CanChannel(sub.Name, sub.Pattern) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// Subscription is a channel, or a pattern if Pattern, a subscriber holds.
type Subscription struct {
	Name    string
	Pattern bool
}

// WriteUser writes ACL GETUSER's reply for u: a map of its flags,
// passwords (digests), commands, keys, channels and selectors (none); a
// null for no user.
func WriteUser(w *resp.Writer, u *User) {
	if u == nil {
		w.WriteNull()
		return
	}
	w.WriteMap(6)
	w.WriteBulkString("flags")
	flags := u.Flags()
	w.WriteSet(len(flags))
	for _, f := range flags {
		w.WriteBulkString(f)
	}
	w.WriteBulkString("passwords")
	pw := u.Passwords()
	w.WriteArray(len(pw))
	for _, p := range pw {
		w.WriteBulkString(p)
	}
	for _, kv := range [][2]string{{"commands", u.Commands()}, {"keys", u.Keys()}, {"channels", u.Channels()}} {
		w.WriteBulkString(kv[0])
		w.WriteBulkString(kv[1])
	}
	w.WriteBulkString("selectors")
	w.WriteArray(0)
}

// WriteUsers writes ACL USERS's reply: the users' names.
func WriteUsers(w *resp.Writer, users []*User) {
	w.WriteArray(len(users))
	for _, u := range users {
		w.WriteBulkString(u.Name)
	}
}

// WriteList writes ACL LIST's reply: each user as a line of an ACL file
// (User.Describe).
func WriteList(w *resp.Writer, users []*User) {
	w.WriteArray(len(users))
	for _, u := range users {
		w.WriteBulkString(u.Describe())
	}
}

// WriteCat writes ACL CAT's reply: every category for an empty category,
// else the commands of c in category (with or without its '@', any case).
// An unknown category is refused, in Redis's words, and nothing written.
func WriteCat(w *resp.Writer, c *Catalog, category []byte) error {
	if category == nil {
		writeStrings(w, Categories)
		return nil
	}
	names, ok := c.InCategory(strings.ToLower(strings.TrimPrefix(string(category), "@")))
	if !ok {
		return replyError(fmt.Sprintf("ERR Unknown category '%s'", quoted.Printable(category, 128)))
	}
	writeStrings(w, names)
	return nil
}

func writeStrings(w *resp.Writer, s []string) {
	w.WriteArray(len(s))
	for _, v := range s {
		w.WriteBulkString(v)
	}
}

// WriteLog writes ACL LOG's reply: each entry as a map of Redis's ten
// fields, its age as of now.
func WriteLog(w *resp.Writer, entries []LogEntry, now time.Time) {
	w.WriteArray(len(entries))
	for _, e := range entries {
		w.WriteMap(10)
		for _, kv := range []struct {
			k string
			v any
		}{
			{"count", e.Count}, {"reason", e.Reason}, {"context", e.Context}, {"object", e.Object},
			{"username", e.Username}, {"age-seconds", now.Sub(e.Created).Seconds()},
			{"client-info", e.ClientInfo}, {"entry-id", e.ID},
			{"timestamp-created", e.Created.UnixMilli()}, {"timestamp-last-updated", e.Updated.UnixMilli()},
		} {
			w.WriteBulkString(kv.k)
			switch v := kv.v.(type) {
			case int:
				w.WriteInt(v)
			case int64:
				w.WriteInt64(v)
			case float64:
				w.WriteDouble(v)
			case string:
				w.WriteBulkString(v)
			}
		}
	}
}

// UserNotFound is ACL DRYRUN's refusal of an unknown user.
func UserNotFound(name []byte) error {
	return replyError(fmt.Sprintf("ERR User '%s' not found", quoted.Printable(name, 128)))
}

// CommandNotFound is ACL DRYRUN's refusal of an unknown command.
func CommandNotFound(name []byte) error {
	return replyError(fmt.Sprintf("ERR Command '%s' not found", quoted.Printable(name, 128)))
}

// help is ACL HELP's reply, Redis's lines.
var help = []string{
	"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CAT [<category>]",
	"    List all commands that belong to <category>, or all command categories",
	"    when no category is specified.",
	"DELUSER <username> [<username> ...]",
	"    Delete a list of users.",
	"DRYRUN <username> <command> [<arg> ...]",
	"    Returns whether the user can execute the given command without executing the command.",
	"GETUSER <username>",
	"    Get the user's details.",
	"GENPASS [<bits>]",
	"    Generate a secure 256-bit user password. The optional `bits` argument can",
	"    be used to specify a different size.",
	"LIST",
	"    Show users details in config file format.",
	"LOAD",
	"    Reload users from the ACL file.",
	"LOG [<count> | RESET]",
	"    Show the ACL log entries.",
	"SAVE",
	"    Save the current config to the ACL file.",
	"SETUSER <username> <attribute> [<attribute> ...]",
	"    Create or modify a user with the specified attributes.",
	"USERS",
	"    List all the registered usernames.",
	"WHOAMI",
	"    Return the current connection username.",
	"HELP",
	"    Print this help.",
}

// WriteHelp writes ACL HELP's reply: its lines as status replies.
func WriteHelp(w *resp.Writer) { w.WriteHelp(help) }
